"""Steps for finding the turns of a conversation that answer a question."""

from __future__ import annotations

import json

from behave import given, step, then, when
from behave.runner import Context
from testkit import assemble, pipeline, report, result

from contextpipe import RequestFilters, ResultFragment, StrategySelection


@when(
    'I ask for "{query}" within {budget:d} tokens as user "{user}" using only the strategy "{name}"'
)
def ask_as_user_with(context: Context, query: str, budget: int, user: str, name: str) -> None:
    assemble(context, query, budget=budget, user=user, strategies={name: StrategySelection()})


@when(
    'I ask for "{query}" within {budget:d} tokens in the paths "{paths}" as user "{user}"'
    ' using only the strategy "{name}"'
)
def ask_as_user_in_paths(
    context: Context, query: str, budget: int, paths: str, user: str, name: str
) -> None:
    filters = RequestFilters(paths=tuple(p.strip() for p in paths.split(",")), user=user)
    assemble(
        context,
        query,
        budget=budget,
        user=user,
        filters=filters,
        strategies={name: StrategySelection()},
    )


def _turns(context: Context) -> list[ResultFragment]:
    """The memory in the last context, in its order."""
    return [f for f in result(context).fragments if f.source.kind == "memory"]


def _turn(context: Context, turn: str) -> ResultFragment:
    for fragment in _turns(context):
        if fragment.uko_uri.endswith(f"/{turn}"):
            return fragment
    raise AssertionError(f"{turn} is not in the context: {_ids(context)}")


def _ids(context: Context) -> list[str]:
    return [f.uko_uri.rsplit("/", 1)[1] for f in _turns(context)]


@then('the memory in the context includes the turn "{turn}"')
def includes_turn(context: Context, turn: str) -> None:
    assert turn in _ids(context), _ids(context)


@then('the memory in the context does not include the turn "{turn}"')
def lacks_turn(context: Context, turn: str) -> None:
    assert turn not in _ids(context), _ids(context)


@then('the turn "{turn}" in the context reads "{text}"')
def turn_reads(context: Context, turn: str, text: str) -> None:
    shown = _turn(context, turn).text.split("] ", 1)[1]
    assert shown == text, shown


@then('the memory in the context starts with the turns "{turns}"')
@then('the memory in the context starts with the turn "{turns}"')
def starts_with(context: Context, turns: str) -> None:
    expected = [turn.strip() for turn in turns.split(",")]
    assert _ids(context)[: len(expected)] == expected, _ids(context)


@then('the reason of the turn "{turn}" from "{name}" mentions "{words}"')
def turn_reason(context: Context, turn: str, name: str, words: str) -> None:
    reasons = [p.reason for p in _turn(context, turn).provenance if p.strategy == name]
    assert reasons and words in reasons[0], reasons


@then('no reason from "{name}" mentions "{words}"')
def no_reason_mentions(context: Context, name: str, words: str) -> None:
    said = [
        p.reason
        for f in result(context).fragments
        for p in f.provenance
        if p.strategy == name and words in p.reason
    ]
    assert not said, said


@then("the first memory turn in the context is said by {speaker}")
def first_said_by(context: Context, speaker: str) -> None:
    first = _turns(context)[0].text.split("] ", 1)[1]
    assert first.startswith(f"{speaker}: "), first


@step("the vectors are computed")
def vectors_computed(context: Context) -> None:
    pipeline(context).embed()


@then('the turns following "{turn}" are "{turns}"')
def turns_following(context: Context, turn: str, turns: str) -> None:
    hit = _turn(context, turn).uko_uri
    following = [
        f.uko_uri.rsplit("/", 1)[1]
        for f in _turns(context)
        if any(p.reason.startswith(f"said right after {hit},") for p in f.provenance)
    ]
    expected = [] if turns == "none" else [t.strip() for t in turns.split(",")]
    assert following == expected, following


_FLAVOURS = ("green", "black", "mint", "jasmine", "smoky", "sweet", "bitter", "cold")


@given('a conversation of {count:d} short turns about tea imported for the user "{user}"')
def tea_conversation(context: Context, count: int, user: str) -> None:
    turns = [
        {
            "id": f"t{number}",
            "speaker": "Ann" if number % 2 else "Ben",
            "time": f"2024-05-{1 + number // 60:02d}T{8 + number % 60 // 6:02d}:0{number % 6}:00",
            "text": f"Cup {number} of {_FLAVOURS[number % len(_FLAVOURS)]} tea, brew {number}.",
        }
        for number in range(count)
    ]
    (context.project / "tea.json").write_text(json.dumps(turns), encoding="utf-8")
    pipeline(context).import_conversation(context.project / "tea.json", user=user)


@then('"{name}" proposed {how} {count:d} candidates')
def strategy_proposed(context: Context, name: str, how: str, count: int) -> None:
    proposed = report(context, name).proposed
    assert (proposed <= count) if how == "at most" else (proposed > count), proposed
