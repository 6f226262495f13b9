"""Steps for fusion (same content, weighted RRF) and packing (duplicates, MMR, dropped)."""

from __future__ import annotations

from behave import then, when
from behave.runner import Context
from testkit import assemble, in_context, named, names_in_context, pipeline, result

from contextpipe import ContextRequest


@then('the fragment "{name}" has the fused score {score:g}')
def fused_score(context: Context, name: str, score: float) -> None:
    fragment = in_context(context, name)
    assert fragment is not None, f"{name} is not in the context"
    assert abs(fragment.score - score) < 1e-6, f"{name} has the fused score {fragment.score}"


@then(
    'the fragment "{name}" was proposed by "{first}" at rank {first_rank:d}'
    ' and by "{second}" at rank {second_rank:d}'
)
def proposed_by_both(
    context: Context, name: str, first: str, first_rank: int, second: str, second_rank: int
) -> None:
    fragment = in_context(context, name)
    assert fragment is not None, f"{name} is not in the context"
    votes = sorted((vote.strategy, vote.rank) for vote in fragment.provenance)
    assert votes == sorted([(first, first_rank), (second, second_rank)]), votes


@then("the context holds {count:d} fragment")
@then("the context holds {count:d} fragments")
def holds_count(context: Context, count: int) -> None:
    found = names_in_context(context)
    assert len(found) == count, f"the context holds {found}"


def _dropped_reason(context: Context, name: str) -> str:
    fragment = named(context, name)
    for entry in result(context).dropped:
        if entry.uko_uri == fragment.uko_uri:
            assert entry.id == fragment.id, entry
            return entry.reason
    raise AssertionError(f"{name} is not listed as dropped: {result(context).dropped}")


@then('the fragment "{name}" is dropped as a duplicate of "{original}"')
def dropped_as_duplicate(context: Context, name: str, original: str) -> None:
    reason = _dropped_reason(context, name)
    expected = f"duplicate of {named(context, original).id}"
    assert reason.startswith(expected), f"the reason is {reason!r}"
    assert in_context(context, name) is None, f"{name} is in the context all the same"


@then(
    'the fragment "{name}" is dropped as a duplicate of "{original}" with similarity {similarity}'
)
def dropped_as_duplicate_with(context: Context, name: str, original: str, similarity: str) -> None:
    dropped_as_duplicate(context, name, original)
    reason = _dropped_reason(context, name)
    assert reason.endswith(f"(similarity {similarity})"), f"the reason is {reason!r}"


@then('the fragment "{name}" is dropped with a reason mentioning "{words}"')
def dropped_because(context: Context, name: str, words: str) -> None:
    reason = _dropped_reason(context, name)
    assert words in reason, f"the reason is {reason!r}"
    assert in_context(context, name) is None, f"{name} is in the context all the same"


@when('I ask for "{query}" within {extra:d} tokens more than the full text of "{uri}"')
def ask_just_above(context: Context, query: str, extra: int, uri: str) -> None:
    full = pipeline(context).store.variants(uri)[0]
    assert full.detail_depth == 9, full
    assemble(context, ContextRequest(query=query, budget=full.token_count + extra))


@then('the context holds "{uri}" at depth {depth:d} as "{text}"')
def holds_at_depth(context: Context, uri: str, depth: int, text: str) -> None:
    found = [(f.detail_depth, f.text) for f in result(context).fragments if f.uko_uri == uri]
    expected = text.replace("\\n", "\n")  # a feature file writes a line break as \n
    assert found == [(depth, expected)], f"the context holds {uri} as {found}"
