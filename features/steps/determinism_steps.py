"""Steps for determinism: the same request twice gives byte-identical output."""

from __future__ import annotations

import time

from behave import given, then, when
from behave.runner import Context
from testkit import (
    ScriptedStrategy,
    assemble,
    fragments_from_table,
    propose,
    register_strategy,
    result,
)

from contextpipe import ContextRequest, Pipeline


def _request(context: Context) -> ContextRequest:
    assembled = result(context)
    return ContextRequest(query=assembled.query, budget=assembled.budget, output=assembled.output)


@when("I ask the same again from a freshly opened pipeline")
def ask_again_fresh(context: Context) -> None:
    context.first = result(context)
    fresh = Pipeline.open(project_dir=context.project, environ={})
    try:
        context.result = fresh.assemble(_request(context))
    finally:
        fresh.close()


@when("I ask the same again")
def ask_again(context: Context) -> None:
    context.first = result(context)
    assemble(context, _request(context))


@given('a strategy "{name}" that finishes slowly on the first request only, proposing:')
def slow_first_time(context: Context, name: str) -> None:
    answer = propose(fragments_from_table(context))
    calls: list[int] = []

    def behaviour(request: ContextRequest, budget: int) -> object:
        calls.append(budget)
        if len(calls) == 1:
            time.sleep(0.1)  # every other strategy finishes first this time
        return answer(request, budget)

    register_strategy(context, ScriptedStrategy(name, behaviour))


@then("both answers have byte-identical text, messages, fragments and dropped lists")
def identical(context: Context) -> None:
    first, second = context.first, result(context)
    assert first.fragments, "the context is empty"
    assert first.text.encode() == second.text.encode(), "the rendered text differs"
    assert first.messages == second.messages
    assert first.fragments == second.fragments
    assert first.dropped == second.dropped
    assert first.tokens_used == second.tokens_used
