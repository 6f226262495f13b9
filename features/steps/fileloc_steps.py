"""Steps of `eval fileloc`: a git repository made by the scenario, tasks, the figures."""

from __future__ import annotations

import json

from behave import given, then, when
from behave.runner import Context
from testkit import git, write_files

from contextpipe import ContextpipeError
from contextpipe.faces.evaluation import FilelocEvaluation, evaluate_fileloc, read_tasks


def _files(context: Context) -> dict[str, str]:
    return {row["path"]: row["text"].replace("\\n", "\n") for row in context.table}


@given('a git repository "{name}" whose first commit holds:')
def repository_first(context: Context, name: str) -> None:
    context.repository = context.tmp / name
    context.repository.mkdir()
    git(context.repository, "init", "--quiet")
    write_files(context.repository, _files(context))
    git(context.repository, "add", ".")
    git(context.repository, "commit", "--quiet", "-m", "first")
    context.commits = {"first": git(context.repository, "rev-parse", "HEAD")}


@given("its second commit adds:")
def repository_second(context: Context) -> None:
    write_files(context.repository, _files(context))
    git(context.repository, "add", ".")
    git(context.repository, "commit", "--quiet", "-m", "second")
    context.commits["second"] = git(context.repository, "rev-parse", "HEAD")


@given("the fileloc tasks:")
def fileloc_tasks(context: Context) -> None:
    lines = [
        json.dumps(
            {
                "id": row["id"],
                "base": context.commits.get(row["base"], row["base"]),
                "query": row["query"],
                "gold_files": row["gold_files"].split(),
            }
        )
        for row in context.table
    ]
    context.tasks_file = context.tmp / "tasks.jsonl"
    context.tasks_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


@given('a tasks file "{name}" holding {line}')
def tasks_file(context: Context, name: str, line: str) -> None:
    context.tasks_file = context.tmp / name
    context.tasks_file.write_text(line + "\n", encoding="utf-8")


def _config(context: Context) -> None:
    """The scenario's settings as a config file, as the command line reads them."""
    lines = []
    for key, value in context.overrides.items():
        section, _, name = key.rpartition(".")
        lines.append(f"[{section}]\n{name} = {json.dumps(value)}")
    context.config_file = context.tmp / "config.toml"
    context.config_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


@when("the file localisation of the tasks is measured")
def measured(context: Context) -> None:
    _config(context)
    context.fileloc, context.error = None, None
    try:
        tasks = read_tasks(context.tasks_file)
        context.fileloc = evaluate_fileloc(tasks, context.repository, context.config_file)
    except ContextpipeError as exc:
        context.error = exc


@when('the tasks of "{name}" are read')
def tasks_read(context: Context, name: str) -> None:
    context.error = None
    try:
        read_tasks(context.tmp / name)
    except ContextpipeError as exc:
        context.error = exc


def _figures(context: Context) -> FilelocEvaluation:
    assert context.error is None, f"the measurement failed: {context.error}"
    return context.fileloc


@then("Acc@1, Acc@3, Acc@5 and Acc@10 of the default mix are {share:g}")
def mix_accuracy(context: Context, share: float) -> None:
    accuracy = dict(_figures(context).mix.accuracy)
    assert accuracy == {1: share, 3: share, 5: share, 10: share}, accuracy


@then('Acc@1 of "{name}" alone is {share:g}')
def alone_accuracy(context: Context, name: str, share: float) -> None:
    figures = _figures(context)
    assert name in figures.per_strategy, f"{name} has no figures: {figures.not_run}"
    assert figures.per_strategy[name].accuracy[1] == share, figures.per_strategy[name]


@then("the index time per task is measured")
def index_time(context: Context) -> None:
    figures = _figures(context)
    assert figures.index_seconds > 0, figures
    assert figures.mix.query_ms > 0, figures.mix


@then('the measurement fails saying "{words}"')
def measurement_fails(context: Context, words: str) -> None:
    assert context.error is not None, "the measurement succeeded"
    message = str(context.error)
    assert words.replace('\\"', '"') in message, message
    assert "\n" not in message, message
