"""Steps that register strategies scripted by a scenario (through pluggy hook implementations)."""

from __future__ import annotations

import sys
import threading
import time
from typing import cast

from behave import given, then
from behave.runner import Context
from testkit import (
    DEFAULT_TOKENIZER,
    ScriptedAsyncStrategy,
    ScriptedStrategy,
    fragments_from_table,
    in_context,
    make_fragment,
    named,
    propose,
    register_strategy,
    result,
)

from contextpipe import (
    Candidate,
    ContextFragment,
    ContextRequest,
    Retrieved,
    get_tokenizer,
)
from contextpipe.core.models import DetailDepth


def _add(context: Context, strategy: ScriptedStrategy) -> None:
    context.strategies[strategy.name] = strategy
    register_strategy(context, strategy)


@given('a strategy "{name}" that proposes:')
def strategy_proposing(context: Context, name: str) -> None:
    _add(context, ScriptedStrategy(name, propose(fragments_from_table(context))))


@given('a strategy "{name}" of quality {quality:g} that proposes:')
def strategy_of_quality_proposing(context: Context, name: str, quality: float) -> None:
    _add(context, ScriptedStrategy(name, propose(fragments_from_table(context)), quality=quality))


@given('a strategy "{name}" of quality {quality:g} that proposes nothing')
def strategy_of_quality(context: Context, name: str, quality: float) -> None:
    _add(context, ScriptedStrategy(name, propose([]), quality=quality))


@given('a strategy "{name}" that echoes a search, proposing:')
def strategy_echoing(context: Context, name: str) -> None:
    proposing = propose(fragments_from_table(context))

    def behaviour(request: ContextRequest, budget: int) -> list[Candidate]:
        proposed = cast("list[Candidate]", proposing(request, budget))
        return [candidate.model_copy(update={"echo": True}) for candidate in proposed]

    _add(context, ScriptedStrategy(name, behaviour))


@given('a strategy "{name}" with confidence {confidence:g} that proposes:')
def strategy_with_confidence(context: Context, name: str, confidence: float) -> None:
    strategy = ScriptedStrategy(name, propose(fragments_from_table(context)), confidence=confidence)
    _add(context, strategy)


@given('a strategy "{name}" that proposes, with the note "{note}" for its report:')
def strategy_with_note(context: Context, name: str, note: str) -> None:
    proposing = propose(fragments_from_table(context))

    def behaviour(request: ContextRequest, budget: int) -> Retrieved:
        return Retrieved(proposing(request, budget), note)

    _add(context, ScriptedStrategy(name, behaviour))


@given('a strategy "{name}" that returns no candidates and a note of {length:d} characters')
def strategy_with_long_note(context: Context, name: str, length: int) -> None:
    note = ("unknown focus: " + "x" * length)[:length]
    _add(context, ScriptedStrategy(name, lambda request, budget: Retrieved([], note)))


@given('a strategy "{name}" that returns a note with {output} for candidates')
def strategy_with_note_and_malformed(context: Context, name: str, output: str) -> None:
    raw = cast("list[Candidate]", _MALFORMED[output])  # wrong on purpose: the contract is checked
    _add(context, ScriptedStrategy(name, lambda request, budget: Retrieved(raw, "fine")))


@given(
    'a strategy "{name}" that raises RuntimeError "{message}" when asked again, having proposed:'
)
def strategy_failing_second_time(context: Context, name: str, message: str) -> None:
    proposing = propose(fragments_from_table(context))
    calls: list[int] = []

    def behaviour(request: ContextRequest, budget: int) -> object:
        calls.append(budget)
        if len(calls) > 1:
            raise RuntimeError(message)
        return proposing(request, budget)

    _add(context, ScriptedStrategy(name, behaviour))


@given('a strategy "{name}" that raises {error} "{message}"')
def strategy_raising(context: Context, name: str, error: str, message: str) -> None:
    exception = {"ValueError": ValueError, "RuntimeError": RuntimeError, "OSError": OSError}[error]

    def behaviour(request: ContextRequest, budget: int) -> object:
        raise exception(message)

    _add(context, ScriptedStrategy(name, behaviour))


class UnreadableError(Exception):
    """An exception whose message cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no message today")


def _misbehave(misbehaviour: str) -> None:
    if misbehaviour == "calls sys.exit(3)":
        sys.exit(3)
    if misbehaviour == "raises KeyboardInterrupt":
        raise KeyboardInterrupt
    assert misbehaviour == "raises an exception whose message is broken", misbehaviour
    raise UnreadableError


@given('a strategy "{name}" that {misbehaviour} in retrieve')
def strategy_misbehaving(context: Context, name: str, misbehaviour: str) -> None:
    def behaviour(request: ContextRequest, budget: int) -> object:
        _misbehave(misbehaviour)
        return []

    _add(context, ScriptedStrategy(name, behaviour))


@given('an async strategy "{name}" that {misbehaviour} in retrieve')
def async_strategy_misbehaving(context: Context, name: str, misbehaviour: str) -> None:
    def behaviour(request: ContextRequest, budget: int) -> object:
        _misbehave(misbehaviour)
        return []

    _add(context, ScriptedAsyncStrategy(name, behaviour))


@given('a strategy "{name}" that {misbehaviour} in can_handle')
def strategy_misbehaving_in_can_handle(context: Context, name: str, misbehaviour: str) -> None:
    class Rogue(ScriptedStrategy):
        def can_handle(self, request: ContextRequest, backends: object) -> float:
            _misbehave(misbehaviour)
            return 1.0

    _add(context, Rogue(name, propose([])))


@given('a strategy "{name}" whose confidence check raises KeyError "{message}"')
def strategy_confidence_raising(context: Context, name: str, message: str) -> None:
    class Fussy(ScriptedStrategy):
        def can_handle(self, request: ContextRequest, backends: object) -> float:
            raise KeyError(message)

    _add(context, Fussy(name, propose([])))


@given('an async strategy "{name}" that proposes:')
def async_strategy_proposing(context: Context, name: str) -> None:
    _add(context, ScriptedAsyncStrategy(name, propose(fragments_from_table(context))))


@given('a strategy "{name}" that proposes only once {count:d} strategies run at once:')
def strategy_meeting(context: Context, name: str, count: int) -> None:
    """A plain strategy that blocks until `count` such strategies are running; when they
    run one after another, it never proposes (the barrier breaks when the scenario ends).
    """
    fragments = fragments_from_table(context)
    barrier: threading.Barrier | None = getattr(context, "barrier", None)
    if barrier is None:
        barrier = context.barrier = threading.Barrier(count)
        context.add_cleanup(barrier.abort)
    meeting = barrier

    def behaviour(request: ContextRequest, budget: int) -> object:
        meeting.wait()
        return propose(fragments)(request, budget)

    _add(context, ScriptedStrategy(name, behaviour))


@given('a strategy "{name}" that hangs for {seconds:g} seconds')
def strategy_hanging(context: Context, name: str, seconds: float) -> None:
    def behaviour(request: ContextRequest, budget: int) -> object:
        time.sleep(seconds)
        return []

    _add(context, ScriptedStrategy(name, behaviour))


_MALFORMED: dict[str, object] = {
    "a list of strings": ["budget.md", "allocator.py"],
    "a list of dictionaries missing the fragment": [{"score": 1.0, "reason": "trust me"}],
    "a dictionary": {"budget.md": 1.0},
    "a string": "budget.md",
    "None": None,
}


@given('a strategy "{name}" that returns {output}')
def strategy_returning(context: Context, name: str, output: str) -> None:
    raw = _MALFORMED[output]
    _add(context, ScriptedStrategy(name, lambda request, budget: raw))


def _text_of_about(tokens: int, prefix: str) -> str:
    """Distinct words (so that no two texts look like duplicates) adding up to ~`tokens`."""
    tokenizer = get_tokenizer(DEFAULT_TOKENIZER)
    words: list[str] = []
    while tokenizer.count(" ".join(words)) < tokens:
        words.append(f"{prefix}w{len(words)}")
    return " ".join(words)


@given('a strategy "{name}" that proposes {count:d} fragments of about {tokens:d} tokens each')
def strategy_bulky(context: Context, name: str, count: int, tokens: int) -> None:
    fragments = [
        make_fragment(
            f"uko://doc/{name}.md#part-{number}",
            _text_of_about(tokens, f"{name}{number}"),
            f"{name}.md",
            number * 10 + 1,
            number * 10 + 9,
        )
        for number in range(count)
    ]
    for number, fragment in enumerate(fragments):
        context.fragments[f"{name}-{number}"] = fragment
    _add(context, ScriptedStrategy(name, propose(fragments)))


def _text_of_exactly(tokens: int, prefix: str) -> str:
    """Distinct words padded with " a" (one token each) to exactly `tokens` tokens."""
    tokenizer = get_tokenizer(DEFAULT_TOKENIZER)
    words: list[str] = []
    while tokenizer.count(" ".join([*words, f"{prefix}w{len(words)}"])) <= tokens - 8:
        words.append(f"{prefix}w{len(words)}")
    text = " ".join(words)
    while tokenizer.count(text) < tokens:
        text += " a"
    assert tokenizer.count(text) == tokens, (tokens, tokenizer.count(text))
    return text


@given('a strategy "{name}" that proposes {count:d} fragments filling its allocation exactly')
def strategy_filling_exactly(context: Context, name: str, count: int) -> None:
    """Texts whose tokens add up to the allocation the strategy is given, to the last one;
    named `NAME-0`, `NAME-1`... once it made them.
    """

    def behaviour(request: ContextRequest, budget: int) -> object:
        fragments: list[ContextFragment] = []
        for number in range(count):
            share = budget // count + (1 if number < budget % count else 0)
            fragment = make_fragment(
                f"uko://doc/{name}.md#part-{number}",
                _text_of_exactly(share, f"{name}{number}"),
                f"{name}.md",
                number * 10 + 1,
                number * 10 + 9,
            )
            context.fragments[f"{name}-{number}"] = fragment
            fragments.append(fragment)
        return propose(fragments)(request, budget)

    _add(context, ScriptedStrategy(name, behaviour))


@given('a strategy "{name}" that proposes nodes at several depths, best first:')
def strategy_proposing_depths(context: Context, name: str) -> None:
    """Rows `| node | depth | tokens |`: a text of about `tokens` tokens for the node at that
    depth; a node's depths share its lines, as a node's stored depths do. An optional
    `text of` column names a node of the scenario whose text the row repeats (a copy).
    """
    lines: dict[str, int] = {}
    fragments: list[ContextFragment] = []
    for row in context.table:
        node, depth = row["node"], cast(DetailDepth, int(row["depth"]))
        start = lines.setdefault(node, len(lines) * 10 + 1)
        copied = row.get("text of", "")
        text = (
            named(context, copied).text
            if copied
            else _text_of_about(int(row["tokens"]), f"{node}d{depth}")
        )
        fragment = make_fragment(
            f"uko://doc/{name}.md#{node}", text, f"{name}.md", start, start + 8, depth
        )
        context.fragments.setdefault(node, fragment)
        fragments.append(fragment)
    _add(context, ScriptedStrategy(name, propose(fragments)))


@given('a strategy "{name}" that needs the "{backend}" backend')
def strategy_needing_backend(context: Context, name: str, backend: str) -> None:
    strategy = ScriptedStrategy(name, propose([]), required_backends=frozenset({backend}))
    _add(context, strategy)


@then('the fragment "{name}" was proposed by "{strategy}" of plugin "{plugin}"')
def fragment_proposed_by(context: Context, name: str, strategy: str, plugin: str) -> None:
    fragment = in_context(context, name)
    assert fragment is not None, f"{name} is not in the context"
    votes = [(vote.strategy, vote.plugin) for vote in fragment.provenance]
    assert (strategy, plugin) in votes, f"{name} was proposed by {votes}"


@then('the context holds a fragment proposed by "{strategy}" of plugin "{plugin}"')
def some_fragment_proposed_by(context: Context, strategy: str, plugin: str) -> None:
    votes = {(v.strategy, v.plugin) for f in result(context).fragments for v in f.provenance}
    assert (strategy, plugin) in votes, f"the context's fragments were proposed by {votes}"


@then('"{name}" was asked for candidates within {tokens:d} tokens')
def asked_within(context: Context, name: str, tokens: int) -> None:
    calls = context.strategies[name].calls
    assert calls == [tokens], f"{name} was called with budgets {calls}"
