"""Steps for fusion (same content, weighted RRF) and packing (duplicates, MMR, dropped)."""

from __future__ import annotations

from behave import given, then, when
from behave.runner import Context
from testkit import (
    ScriptedStrategy,
    assemble,
    in_context,
    named,
    names_in_context,
    pipeline,
    propose,
    register_strategy,
    report,
    result,
)

from contextpipe import ContextFragment, ContextRequest, StrategySelection


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


@then('the fragment "{name}" was proposed by "{strategy}" at rank {rank:d} only')
def proposed_once(context: Context, name: str, strategy: str, rank: int) -> None:
    fragment = in_context(context, name)
    assert fragment is not None, f"{name} is not in the context"
    votes = [(vote.strategy, vote.rank) for vote in fragment.provenance]
    assert votes == [(strategy, rank)], votes


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


@then('the fragments of "{names}" left out are listed in dropped[] by their ids')
def dropped_by_id(context: Context, names: str) -> None:
    ids = {named(context, name.strip()).id for name in names.split(",")}
    listed = [entry.id for entry in result(context).dropped if entry.id in ids]
    assert len(listed) > 1, f"dropped[] lists {listed} of them"
    assert listed == sorted(listed), f"dropped[] lists {listed}, not by their ids"


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


@given('a strategy "{name}" that proposes the stored texts of "{uris}", best first')
def strategy_proposing_stored(context: Context, name: str, uris: str) -> None:
    """The nodes' full texts as the store holds them, each named by its URI's anchor."""
    fragments: list[ContextFragment] = []
    for uri in (uri.strip() for uri in uris.split(",")):
        full = pipeline(context).store.variants(uri)[0]
        assert full.detail_depth == 9, full
        context.fragments[uri.partition("#")[2]] = full
        fragments.append(full)
    register_strategy(context, ScriptedStrategy(name, propose(fragments)))


@when(
    'I ask for "{query}" within the output\'s frame and the tokens of "{names}",'
    ' using only the strategy "{name}"'
)
def ask_within_texts(context: Context, query: str, names: str, name: str) -> None:
    """A budget whose usable part (what the only strategy is allotted) is exactly the named
    fragments' texts: the frame is what a first request did not allot.
    """
    only = {name: StrategySelection()}
    assemble(context, ContextRequest(query=query, budget=10_000, strategies=only))
    frame = 10_000 - report(context, name).allocated_tokens
    texts = sum(named(context, n.strip()).token_count for n in names.split(","))
    assemble(context, ContextRequest(query=query, budget=frame + texts, strategies=only))


@when('I ask for "{query}" within exactly the tokens its context took')
def ask_within_tokens_used(context: Context, query: str) -> None:
    assemble(context, ContextRequest(query=query, budget=result(context).tokens_used))


@then('the context holds "{uri}" at depth {depth:d} as "{text}"')
def holds_at_depth(context: Context, uri: str, depth: int, text: str) -> None:
    found = [(f.detail_depth, f.text) for f in result(context).fragments if f.uko_uri == uri]
    expected = text.replace("\\n", "\n")  # a feature file writes a line break as \n
    assert found == [(depth, expected)], f"the context holds {uri} as {found}"
