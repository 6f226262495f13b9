"""Steps for `eval locomo`: a tiny LoCoMo-format file, read and evaluated."""

from __future__ import annotations

import json
from typing import Any

from behave import given, then, when
from behave.runner import Context

from contextpipe import ContextpipeError
from contextpipe.faces.evaluation import evaluate_locomo, memory_project, read_locomo
from contextpipe.faces.evaluation.locomo import normalised_ids


@given('a LoCoMo file "{name}" with the conversation "{sample}" of the sessions:')
def locomo_file(context: Context, name: str, sample: str) -> None:
    conversation: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Ben"}
    for row in context.table:
        key = f"session_{row['session']}"
        conversation[f"{key}_date_time"] = row["time"]
        conversation.setdefault(key, []).append(
            {"speaker": row["speaker"], "dia_id": row["id"], "text": row["text"]}
        )
    context.locomo = (context.project / name, [{"sample_id": sample, "conversation": conversation}])


@given('the questions of "{sample}":')
def locomo_questions(context: Context, sample: str) -> None:
    path, samples = context.locomo
    (found,) = [s for s in samples if s["sample_id"] == sample]
    found["qa"] = [
        {
            "question": row["question"],
            "answer": "",
            "category": int(row["category"]),
            "evidence": json.loads(row["evidence"]),
        }
        for row in context.table
    ]
    path.write_text(json.dumps(samples), encoding="utf-8")


@when('the LoCoMo file "{name}" is evaluated without vectors')
def evaluate(context: Context, name: str) -> None:
    (context.project / "config.toml").write_text("[embedding]\nenabled = false\n")
    conversations = read_locomo(context.project / name)
    with memory_project(conversations, context.project / "config.toml") as project:
        context.evaluation = evaluate_locomo(project, conversations)


@when('the LoCoMo file "{name}" is read')
def read(context: Context, name: str) -> None:
    context.error = None
    try:
        context.conversations = read_locomo(context.project / name)
    except ContextpipeError as exc:
        context.error = exc


@then('the turn "{turn}" of "{sample}" reads "{text}", said by "{speaker}" at "{moment}"')
def turn_reads(
    context: Context, turn: str, sample: str, text: str, speaker: str, moment: str
) -> None:
    (conversation,) = [c for c in context.conversations if c.sample_id == sample]
    (item,) = [t for t in conversation.turns if t.id == turn]
    assert (item.text, item.speaker, item.at.isoformat()) == (text, speaker, moment), item


@then(
    "{count:d} questions were measured over categories 1-4, and {skipped:d} was skipped"
    " without valid evidence"
)
def measured(context: Context, count: int, skipped: int) -> None:
    result = context.evaluation
    assert result.mix.overall.questions == count, result.mix
    assert result.skipped == skipped, result.skipped


@then('the categories measured are "{names}", each with 1 question')
def categories(context: Context, names: str) -> None:
    by_category = context.evaluation.mix.by_category
    assert list(by_category) == [n.strip() for n in names.split(",")], list(by_category)
    assert all(recall.questions == 1 for recall in by_category.values()), by_category


@then("{name} alone has recall@5 {r5:g}, recall@10 {r10:g} and recall@25 {r25:g}")
def alone(context: Context, name: str, r5: float, r10: float, r25: float) -> None:
    figures = context.evaluation.per_strategy[name].overall
    assert dict(figures.at) == {5: r5, 10: r10, 25: r25}, figures


@then('the JSON keys are "{keys}"')
def json_keys(context: Context, keys: str) -> None:
    found = list(context.evaluation.as_json())
    assert found == [k.strip() for k in keys.split(",")], found


@then('the evidence "{raw}" reads "{ids}"')
def evidence_reads(context: Context, raw: str, ids: str) -> None:
    assert normalised_ids(raw) == [i.strip() for i in ids.split(",")], normalised_ids(raw)
