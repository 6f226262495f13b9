"""Steps for `contextpipe eval beir` and `contextpipe tune beir`: a tiny BEIR folder written
by the scenario, and the real command run in the project folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from testkit import run_contextpipe

from contextpipe import load_settings


def _beir(context: Context) -> Path:
    return context.project / context.beir_name


@given('a BEIR folder "{name}" with the documents:')
def beir_documents(context: Context, name: str) -> None:
    context.beir_name = name
    folder = _beir(context)
    folder.mkdir()
    records = [
        {"_id": row["id"], "title": row["title"], "text": row["text"]} for row in context.table
    ]
    _write_jsonl(folder / "corpus.jsonl", records)


@given('its queries, judged in "{qrels}":')
def beir_queries(context: Context, qrels: str) -> None:
    folder = _beir(context)
    _write_jsonl(
        folder / "queries.jsonl", [{"_id": row["id"], "text": row["text"]} for row in context.table]
    )
    judged = [(row["id"], row["relevant"]) for row in context.table if row["relevant"]]
    _write_qrels(folder / qrels, judged)


@given('the BEIR folder "{name}" judges the same in "{qrels}"')
def beir_same_split(context: Context, name: str, qrels: str) -> None:
    folder = context.project / name
    shutil.copyfile(folder / "qrels" / "test.tsv", folder / qrels)


@given('the BEIR folder "{name}" judges only "{query}" relevant to "{document}" in "{qrels}"')
def beir_other_split(context: Context, name: str, query: str, document: str, qrels: str) -> None:
    _write_qrels(context.project / name / qrels, [(query, document)])


@given('the file "{path}" is removed')
def file_removed(context: Context, path: str) -> None:
    (context.project / path).unlink()


@given('line {number:d} of "{path}" is replaced by "{text}"')
def line_replaced(context: Context, number: int, path: str, text: str) -> None:
    target = context.project / path
    lines = target.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = text
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_jsonl(path: Path, records: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _write_qrels(path: Path, judged: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{query}\t{document}\t1\n" for query, document in judged)
    path.write_text("query-id\tcorpus-id\tscore\n" + rows, encoding="utf-8")


# -- running the command ---------------------------------------------------------------------

_SEMANTIC_OFF = {
    "CONTEXTPIPE_EMBEDDING__ENABLED": "false",
    "CONTEXTPIPE_STRATEGIES__SEMANTIC_EMBEDDING__ENABLED": "false",
    "CONTEXTPIPE_STRATEGIES__RELEVANCE__ENABLED": "false",
    # Prose finds no code to navigate; the figures checked by hand are keyword search's.
    "CONTEXTPIPE_STRATEGIES__BREADTH_DEPTH_NAVIGATOR__ENABLED": "false",
}


@given("the semantic strategies and embedding are switched off by CONTEXTPIPE_* variables")
def semantic_off(context: Context) -> None:
    context.eval_environ = dict(_SEMANTIC_OFF)


@given("the semantic strategies and embedding are switched on again")
def semantic_on(context: Context) -> None:
    context.eval_environ = {}


def _run(context: Context, command: str) -> subprocess.CompletedProcess[str]:
    """The installed `contextpipe` in the project folder, with the plugins the scenario
    installed on its path and no contextpipe settings from the calling environment.
    """
    env = dict(getattr(context, "eval_environ", {}))
    if getattr(context, "installed", False):
        env["PYTHONPATH"] = str(context.site)
    program, *args = command.split()
    assert program == "contextpipe", command
    return run_contextpipe(context, args, env)


@when('I run "{command}"')
def run_command(context: Context, command: str) -> None:
    context.config_before = _config_bytes(context)
    context.done = _run(context, command)


@when('I run "{command}" twice, from the same config file')
def run_twice(context: Context, command: str) -> None:
    original = _config_bytes(context)
    written: list[bytes | None] = []
    for _ in range(2):
        (context.project / "config.toml").write_bytes(original or b"")
        done = _run(context, command)
        assert done.returncode == 0, done.stderr
        written.append(_config_bytes(context))
    context.written = written


def _config_bytes(context: Context) -> bytes | None:
    path = context.project / "config.toml"
    return path.read_bytes() if path.is_file() else None


def _result(context: Context) -> dict[str, Any]:
    assert context.done.returncode == 0, f"the command failed: {context.done.stderr}"
    return json.loads(context.done.stdout)


@then("the command succeeds")
def succeeds(context: Context) -> None:
    assert context.done.returncode == 0, f"exit {context.done.returncode}: {context.done.stderr}"


@then('the command fails with one line on stderr naming "{words}"')
def fails_naming(context: Context, words: str) -> None:
    done = context.done
    assert done.returncode == 1, f"exit {done.returncode}: {done.stdout}{done.stderr}"
    message = done.stderr.strip()
    assert "\n" not in message, f"not one line: {message!r}"
    assert message.startswith("contextpipe: error: "), message
    assert words in message, f"{words!r} not in {message!r}"


# -- eval ------------------------------------------------------------------------------------


def _figures(context: Context, strategy: str | None = None) -> dict[str, Any]:
    result = _result(context)
    if strategy is None:
        return result
    assert strategy in result["per_strategy"], f"no {strategy}: {result['per_strategy']}"
    return result["per_strategy"][strategy]


@then("the figures of the default mix are:")
def mix_figures(context: Context) -> None:
    figures = _figures(context)
    for row in context.table:
        expected = float(row["value"])
        assert figures[row["key"]] == expected, f"{row['key']}: {figures[row['key']]} != {expected}"


@then('the result has exactly the keys "{keys}"')
def exact_keys(context: Context, keys: str) -> None:
    assert list(_figures(context)) == keys.split(", "), list(_figures(context))


@then('the figures of "{strategy}" alone have exactly the same keys but "per_strategy"')
def strategy_keys(context: Context, strategy: str) -> None:
    mix = [key for key in _figures(context) if key != "per_strategy"]
    assert list(_figures(context, strategy)) == mix, list(_figures(context, strategy))


@then('the figures of "{strategy}" alone are those of the default mix')
def strategy_as_mix(context: Context, strategy: str) -> None:
    mix = {key: value for key, value in _figures(context).items() if key != "per_strategy"}
    assert _figures(context, strategy) == mix, (_figures(context, strategy), mix)


@then('the figures of "{strategy}" alone have "{key}" {value:g}')
def strategy_figure(context: Context, strategy: str, key: str, value: float) -> None:
    assert _figures(context, strategy)[key] == value, _figures(context, strategy)


@then('the per-strategy figures are for "{names}"')
def per_strategy_names(context: Context, names: str) -> None:
    assert list(_result(context)["per_strategy"]) == names.split(", "), _result(context)


@then('the output says "{words}"')
def output_says(context: Context, words: str) -> None:
    assert words in context.done.stdout, context.done.stdout


@then('the output has a line starting "{start}" with "{words}"')
def output_line(context: Context, start: str, words: str) -> None:
    lines = [line for line in context.done.stdout.splitlines() if line.startswith(start)]
    assert len(lines) == 1 and words in lines[0], context.done.stdout


@then('stderr says "{words}"')
def stderr_says(context: Context, words: str) -> None:
    assert words in context.done.stderr, context.done.stderr


# -- tune ------------------------------------------------------------------------------------


def _setting(context: Context, dotted: str) -> Any:
    settings = load_settings(context.project, environ={}).settings.model_dump()
    for part in dotted.split("."):
        settings = settings[part]
    return settings


@then('the config file loads, with "{key}" {value:g} and "{other}" {other_value:g}')
def config_values(context: Context, key: str, value: float, other: str, other_value: float) -> None:
    assert _setting(context, key) == value, _setting(context, key)
    assert _setting(context, other) == other_value, _setting(context, other)


@then('the config file loads, with "{key}" {value:g} and "{tuned}" as tuned')
def config_value_and_tuned(context: Context, key: str, value: float, tuned: str) -> None:
    assert _setting(context, key) == value, _setting(context, key)
    assert _setting(context, tuned) == _result(context)["settings"][tuned]


@then('the config file still has the lines "{first}" and "{second}"')
def config_lines(context: Context, first: str, second: str) -> None:
    lines = (context.project / "config.toml").read_text(encoding="utf-8").splitlines()
    assert first in lines and second in lines, lines


@then('the config file holds the tuned "{first}" and "{second}" the result names')
def config_tuned(context: Context, first: str, second: str) -> None:
    winners = _result(context)["settings"]
    for key in (first, second):
        assert _setting(context, key) == winners[key], (key, _setting(context, key), winners)


@then(
    'the config file starts with a comment naming "{metric}", the folder "{folder}", '
    '"{split}" and the score'
)
def config_note(context: Context, metric: str, folder: str, split: str) -> None:
    text = (context.project / "config.toml").read_text(encoding="utf-8")
    note = " ".join(
        line.removeprefix("# [contextpipe tune] ")
        for line in text.splitlines()
        if line.startswith("# [contextpipe tune] ")
    )
    assert text.startswith("# [contextpipe tune] "), text
    score = f"{_result(context)['after']:.4f}"
    for words in (metric, str(context.project / folder), split, score):
        assert words in note, f"{words!r} not in the note: {note!r}"


@then("the config file has one note, at the top")
def one_note(context: Context) -> None:
    lines = (context.project / "config.toml").read_text(encoding="utf-8").splitlines()
    noted = [n for n, line in enumerate(lines) if line.startswith("# [contextpipe tune] ")]
    assert noted == list(range(len(noted))), lines
    assert sum("Tuned for" in lines[n] for n in noted) == 1, lines


@then("every trial scored the same")
def trials_tied(context: Context) -> None:
    scores = {trial["ndcg@10"] for trial in _result(context)["trials"]}
    assert len(scores) == 1 and len(_result(context)["trials"]) > 1, _result(context)


@then('the trials searched "{keys}"')
def trials_searched(context: Context, keys: str) -> None:
    for trial in _result(context)["trials"]:
        assert list(trial["settings"]) == keys.split(", "), trial


@then("both runs wrote the same config file, byte for byte")
def same_bytes(context: Context) -> None:
    first, second = context.written
    assert first is not None and first == second, (first, second)


@then("the config file is unchanged")
def config_unchanged(context: Context) -> None:
    assert _config_bytes(context) == context.config_before


@then('the trials tried "{key}" at {values}')
def trials_tried(context: Context, key: str, values: str) -> None:
    expected = sorted(float(v) for v in values.replace(" and ", ", ").split(", "))
    tried = sorted({float(trial["settings"][key]) for trial in _result(context)["trials"]})
    assert tried == expected, tried


# -- the search method, over a scripted objective -------------------------------------------


@given(
    'a tuning objective where "{key}" {value:g} adds {gain:g}, and "{other}" {other_value:g}'
    " adds {bonus:g} only with it"
)
def scripted_objective(
    context: Context,
    key: str,
    value: float,
    gain: float,
    other: str,
    other_value: float,
    bonus: float,
) -> None:
    def objective(values: Mapping[str, float | int]) -> float:
        score = 0.5
        if values[key] == value:
            score += gain
            if values[other] == other_value:
                score += bonus
        return round(score, 4)

    context.objective = objective
    context.start = {"strategies.demo.weight": 1.0, "fusion.rrf_k": 60}


@when('the search runs over "{first}" and "{second}"')
def search_runs(context: Context, first: str, second: str) -> None:
    from contextpipe.faces.evaluation.tuning import RRF_KS, WEIGHT_FACTORS, Parameter, search

    parameters = [
        Parameter(first, tuple(1.0 * factor for factor in WEIGHT_FACTORS)),
        Parameter(second, RRF_KS),
    ]
    context.search = search(parameters, dict(context.start), context.objective)


@then('the best values are "{key}" {value:g} and "{other}" {other_value:g}')
def best_values(context: Context, key: str, value: float, other: str, other_value: float) -> None:
    best = max(context.search, key=lambda trial: trial.ndcg_10).values
    assert best[key] == value and best[other] == other_value, best


@then("the second pass tried no combination the first had tried")
def no_repeats(context: Context) -> None:
    tried = [tuple(trial.values.items()) for trial in context.search]
    assert len(tried) == len(set(tried)), tried
    assert len(tried) > 1 + 5 + 6 - 2, f"only {len(tried)} trials: no second pass"
