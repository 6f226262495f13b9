"""Steps for determinism: the same request twice gives byte-identical output."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from unittest.mock import patch

from behave import given, then, when
from behave.runner import Context
from testkit import (
    SAMPLE_FILES,
    ScriptedStrategy,
    assemble,
    fragments_from_table,
    propose,
    register_strategy,
    result,
    set_mtime,
    unhurried,
    write_files,
)

from contextpipe import AssembledContext, ContextRequest, OutputFormat, Pipeline
from contextpipe.core._memo import BoundedMemo


def _request(context: Context) -> ContextRequest:
    assembled = result(context)
    return ContextRequest(query=assembled.query, budget=assembled.budget, output=assembled.output)


@when("I ask the same again from a freshly opened pipeline")
def ask_again_fresh(context: Context) -> None:
    context.first = result(context)
    fresh = Pipeline.open(project_dir=context.project, overrides=unhurried({}), environ={})
    try:
        context.result = fresh.assemble(_request(context))
    finally:
        fresh.close()


@when("I ask the same again")
def ask_again(context: Context) -> None:
    context.first = result(context)
    assemble(context, _request(context))


@given('a strategy "{name}" that finishes slowly on the {which} request only, proposing:')
def slow_once(context: Context, name: str, which: str) -> None:
    answer = propose(fragments_from_table(context))
    slow_call = {"first": 1, "second": 2}[which]
    calls: list[int] = []

    def behaviour(request: ContextRequest, budget: int) -> object:
        calls.append(budget)
        if len(calls) == slow_call:
            # Every other strategy finishes first this time: ten times what a loaded machine
            # takes to run an instant strategy.
            time.sleep(1.0)
        return answer(request, budget)

    register_strategy(context, ScriptedStrategy(name, behaviour))


def _elapsed(assembled: AssembledContext, name: str) -> float:
    (found,) = [r.elapsed_ms for r in assembled.strategies if r.name == name]
    return found


@then('"{late}" finished after "{early}" the first time and before it the second time')
def finishing_order_swapped(context: Context, late: str, early: str) -> None:
    first, second = context.first, result(context)
    assert _elapsed(first, late) > _elapsed(first, early), first.strategies
    assert _elapsed(second, late) < _elapsed(second, early), second.strategies


@then("both answers dropped candidates")
def both_dropped(context: Context) -> None:
    first, second = context.first, result(context)
    assert len(first.dropped) > 1 and len(second.dropped) > 1, (first.dropped, second.dropped)


@then("both answers have byte-identical text, messages, fragments and dropped lists")
def identical(context: Context) -> None:
    first, second = context.first, result(context)
    assert first.fragments, "the context is empty"
    assert first.text.encode() == second.text.encode(), "the rendered text differs"
    assert first.messages == second.messages
    assert first.fragments == second.fragments, (first.fragments, second.fragments)
    assert first.dropped == second.dropped, (first.dropped, second.dropped)
    assert first.tokens_used == second.tokens_used


_QUESTIONS = (
    "how is the token budget split between strategies?",
    "what happens to leftovers?",
    "keyword search strategies",
    "split_budget weights error",
    "floors caps leftovers allocator",
)


def _answer(pipeline: Pipeline, question: str, output: OutputFormat) -> AssembledContext:
    return pipeline.assemble(question, budget=150, output=output)


@when(
    "{count:d} threads share one freshly opened pipeline, each asking every question of the "
    "sample list in its own order, in every format"
)
def threads_share_pipeline(context: Context, count: int) -> None:
    _share_pipeline(context, count)


@when(
    "{count:d} threads share one freshly opened pipeline whose memos keep {capacity:d} entries"
    " each, each asking every question of the sample list in its own order, in every format"
)
def threads_share_forgetful_pipeline(context: Context, count: int, capacity: int) -> None:
    # A service that has run for hours: every memo full, forgetting at each miss.
    small = BoundedMemo.__init__
    context.memos, context.memo_capacity = [], capacity

    def forgetful(memo: BoundedMemo[object, object], _: int) -> None:
        small(memo, capacity)
        context.memos.append(memo)

    with patch.object(BoundedMemo, "__init__", forgetful):
        _share_pipeline(context, count)


@then("none of its memos holds more entries than that")
def memos_bounded(context: Context) -> None:
    assert context.memos, "no memo was made"
    sizes = [len(memo._values) for memo in context.memos]  # pyright: ignore[reportPrivateUsage]
    assert max(sizes) <= context.memo_capacity, sizes
    assert max(sizes) == context.memo_capacity, f"no memo ever filled up: {sizes}"


def _share_pipeline(context: Context, count: int) -> None:
    asks = [(question, output) for question in _QUESTIONS for output in OutputFormat]
    shared = Pipeline.open(project_dir=context.project, overrides=unhurried({}), environ={})
    answers: dict[tuple[str, OutputFormat], list[AssembledContext]] = {ask: [] for ask in asks}
    start = threading.Barrier(count)

    def ask_all(number: int) -> None:
        start.wait()  # all at once, so that the caches fill concurrently
        for question, output in random.Random(number).sample(asks, len(asks)):
            answers[(question, output)].append(_answer(shared, question, output))

    try:
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(ask_all, range(count)))  # re-raises a thread's error
    finally:
        shared.close()
    context.threaded_answers = answers


@then(
    "every answer is byte-identical to the one a single thread gets for the same question "
    "and format"
)
def threaded_answers_identical(context: Context) -> None:
    alone = Pipeline.open(project_dir=context.project, overrides=unhurried({}), environ={})
    try:
        for (question, output), answers in context.threaded_answers.items():
            expected = _answer(alone, question, output)
            assert expected.fragments, f"no context for {question!r}"
            for answer in answers:
                assert answer.text == expected.text, (question, output)
                assert answer.messages == expected.messages, (question, output)
                assert answer.fragments == expected.fragments, (question, output)
                assert answer.dropped == expected.dropped, (question, output)
                assert answer.tokens_used == expected.tokens_used, (question, output)
    finally:
        alone.close()


# -- across processes ----------------------------------------------------------------------

# Timings are the only part of an answer that may differ from one run to the next.
_TIMINGS = re.compile(rb'("elapsed_ms": )[0-9.e+-]+|("timings_ms": )\{[^}]*\}')


def _contextpipe(project: Path, seed: str, *args: str) -> bytes:
    """Run the installed `contextpipe` command in `project` with this hash seed (and no
    contextpipe settings from the calling environment); its stdout.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    command = Path(sys.executable).with_name("contextpipe")
    done = subprocess.run(
        [str(command), *args],
        cwd=project,
        env={**env, "PYTHONHASHSEED": seed},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"contextpipe {' '.join(args)}: {done.stderr.decode()}"
    return done.stdout


@given("the sample documentation, not yet indexed, in two project folders")
def sample_documentation_twice(context: Context) -> None:
    context.copies = [context.project / "one", context.project / "two"]
    written = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)  # modification times are output too
    for folder in context.copies:
        write_files(folder, SAMPLE_FILES)
        for relative in SAMPLE_FILES:
            set_mtime(folder / relative, written)


@when(
    'the contextpipe command indexes each and asks "{query}" within {budget:d} tokens in every '
    "format, in one with PYTHONHASHSEED={first} and in the other with PYTHONHASHSEED={second}"
)
def across_hash_seeds(context: Context, query: str, budget: int, first: str, second: str) -> None:
    def index_and_ask(project: Path, seed: str) -> dict[str, bytes]:
        _contextpipe(project, seed, "index", ".")
        ask = ("query", query, "--budget", str(budget), "--format")
        return {
            output.value: _contextpipe(project, seed, *ask, output.value) for output in OutputFormat
        }

    with ThreadPoolExecutor(2) as pool:  # two processes at a time: half the wait
        context.printed = list(pool.map(index_and_ask, context.copies, (first, second)))


@then("both processes printed byte-identical output in every format, apart from timings")
def identical_across_processes(context: Context) -> None:
    first, second = context.printed
    assert b'"fragments": [\n' in first["json"], first["json"].decode()
    assert b'"dropped": [\n' in first["json"], "nothing was dropped: " + first["json"].decode()
    for output, printed in first.items():
        expected = _TIMINGS.sub(rb"\1\2#", printed)
        found = _TIMINGS.sub(rb"\1\2#", second[output])
        assert found == expected, f"{output}:\n{expected.decode()}\n---\n{found.decode()}"
