"""Steps of optimising a caller's own chunks (`Pipeline.optimize`)."""

from __future__ import annotations

import json
import re
from typing import Any

from behave import given, then, when
from behave.runner import Context
from testkit import pipeline

from contextpipe import ContextpipeError, OptimizedContext, Removal

# Placeholders for texts too long to write in a table.
_WORDS = re.compile(r"<a text of (\d+) words about (\w+)>")
_TABLE = re.compile(r"<a table of (\d+) rows>")


def _text(cell: str) -> str:
    if words := _WORDS.fullmatch(cell):
        count, subject = int(words[1]), words[2]
        return " ".join(f"{subject}{i % 17}" if i % 3 else subject for i in range(count))
    if rows := _TABLE.fullmatch(cell):
        lines = [f"| day {i} | {i * 7 % 100} GB | ok |" for i in range(int(rows[1]))]
        return "\n".join(["| day | size | status |", *lines])
    return cell


@given("the chunks:")
def the_chunks(context: Context) -> None:
    assert context.table is not None
    chunks: list[dict[str, Any]] = []
    for row in context.table:
        chunk: dict[str, Any] = {"id": row["id"], "text": _text(row["text"])}
        if row.get("score"):
            chunk["score"] = float(row["score"])
        if row.get("vector"):
            chunk["embedding"] = [float(value) for value in row["vector"].split(",")]
        if row.get("namespace"):
            chunk["metadata"] = {"namespace": row["namespace"]}
        chunks.append(chunk)
    context.chunks = chunks


@given("{count:d} chunks of one line each")
def many_chunks(context: Context, count: int) -> None:
    context.chunks = [{"id": f"c{i}", "text": f"line {i}"} for i in range(count)]


def _optimize(context: Context, query: str, budget: int, options: dict[str, Any]) -> None:
    request = {"chunks": context.chunks, "query": query, "token_budget": budget, **options}
    context.optimized, context.error = None, None
    try:
        context.optimized = pipeline(context).optimize(request)
    except ContextpipeError as exc:
        context.error = exc


def _optimized(context: Context) -> OptimizedContext:
    assert context.error is None, f"the optimisation failed: {context.error}"
    assert context.optimized is not None
    return context.optimized


@when('I optimize them for "{query}" within {budget:d} tokens')
def optimize(context: Context, query: str, budget: int) -> None:
    _optimize(context, query, budget, {})


@when('I optimize them for "{query}" within {budget:d} tokens with the options:')
def optimize_with(context: Context, query: str, budget: int) -> None:
    _optimize(context, query, budget, json.loads(context.text))


@when('I optimize them for "{query}" within {budget:d} tokens twice')
def optimize_twice(context: Context, query: str, budget: int) -> None:
    _optimize(context, query, budget, {})
    context.first = _optimized(context)
    _optimize(context, query, budget, {})


@then('the chunks kept are "{ids}" in this order')
def kept_in_order(context: Context, ids: str) -> None:
    result = _optimized(context)
    kept = [chunk.id for chunk in result.chunks]
    removed = [f"{r.id}: {r.detail}" for r in result.removed]
    assert kept == ids.split(", "), f"kept {kept}; removed {removed}"


def _removal(context: Context, chunk_id: str) -> tuple[Removal, str | None, int | None, str]:
    result = _optimized(context)
    removed = {r.id: r for r in result.removed}
    assert chunk_id in removed, f"{chunk_id} was kept: {[c.id for c in result.chunks]}"
    found = removed[chunk_id]
    return found.reason, found.by, found.cluster, found.detail


@then('"{chunk_id}" was left out as an exact duplicate of "{other}"')
def exact_duplicate(context: Context, chunk_id: str, other: str) -> None:
    reason, by, _, detail = _removal(context, chunk_id)
    assert (reason, by) == (Removal.EXACT_DUPLICATE, other), detail
    assert detail == f"exact duplicate of {other}", detail


@then('"{chunk_id}" was left out as a paraphrase of "{other}"')
def paraphrase(context: Context, chunk_id: str, other: str) -> None:
    reason, by, _, detail = _removal(context, chunk_id)
    assert (reason, by) == (Removal.PARAPHRASE, other), detail
    assert detail.startswith(f"paraphrase of {other} (cosine "), detail


@then('"{chunk_id}" was left out as represented by "{other}" in cluster {number:d}')
def represented(context: Context, chunk_id: str, other: str, number: int) -> None:
    reason, by, cluster, detail = _removal(context, chunk_id)
    assert (reason, by, cluster) == (Removal.CLUSTER, other, number), detail
    assert detail.startswith(f"represented by {other} in cluster {number}"), detail


@then('"{chunk_id}" was left out by MMR')
def by_mmr(context: Context, chunk_id: str) -> None:
    reason, _, _, detail = _removal(context, chunk_id)
    assert reason is Removal.MMR and detail.startswith("MMR: "), detail


@then('"{chunk_id}" was left out beyond target_k')
def beyond_target(context: Context, chunk_id: str) -> None:
    reason, _, _, detail = _removal(context, chunk_id)
    assert reason is Removal.TARGET_K and "(target_k)" in detail, detail


@then('"{chunk_id}" was left out over budget')
def over_budget(context: Context, chunk_id: str) -> None:
    reason, _, _, detail = _removal(context, chunk_id)
    assert reason is Removal.BUDGET and detail.startswith("over budget: budget: needs "), detail
    assert _optimized(context).stats.budget_skipped == 1


@then("no chunk was left out as a paraphrase")
def no_paraphrase(context: Context) -> None:
    result = _optimized(context)
    assert result.stats.semantic_duplicates == 0
    assert all(r.reason is not Removal.PARAPHRASE for r in result.removed), result.removed


@then("{count:d} vectors were made by the embedder")
def vectors_made(context: Context, count: int) -> None:
    assert _optimized(context).stats.embedded == count


@then("the output uses at most the budget")
def within_budget(context: Context) -> None:
    result = _optimized(context)
    counted = pipeline(context).tokenizer.count(result.text)
    assert counted == result.tokens_used <= result.budget, (counted, result.tokens_used)


@then('the chunk "{chunk_id}" was kept compressed, ending "{end}"')
def kept_compressed(context: Context, chunk_id: str, end: str) -> None:
    (chunk,) = [c for c in _optimized(context).chunks if c.id == chunk_id]
    assert chunk.compressed and chunk.text.endswith(end), chunk.text[-80:]
    assert chunk.text in _optimized(context).text


@then('the chunk "{chunk_id}" was kept as "{text}"')
def kept_as(context: Context, chunk_id: str, text: str) -> None:
    (chunk,) = [c for c in _optimized(context).chunks if c.id == chunk_id]
    assert chunk.text == text, chunk.text


@then("no kept chunk is longer than it came in")
def none_longer(context: Context) -> None:
    given = {chunk["id"]: chunk["text"] for chunk in context.chunks}
    for chunk in _optimized(context).chunks:
        assert len(chunk.text) <= len(given[chunk.id]), chunk.id


@then("both answers are the same, but for their times")
def same_answers(context: Context) -> None:
    def timeless(result: OptimizedContext) -> str:
        stats = {"latency_ms": 0.0, "embedding_ms": 0.0}
        return result.model_copy(
            update={"stats": result.stats.model_copy(update=stats)}
        ).model_dump_json()

    assert timeless(context.first) == timeless(_optimized(context))


@then('the optimisation fails saying "{words}"')
def fails_saying(context: Context, words: str) -> None:
    assert context.error is not None, "the optimisation did not fail"
    message = str(context.error)
    assert words in message and "\n" not in message, message
