"""Steps for pipelines that share a `RetrievalMemo`."""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from behave.runner import Context
from testkit import ScriptedStrategy, plugin_of, result, unhurried

from contextpipe import AssembledContext, ContextRequest, Pipeline, RetrievalMemo


def _assembled(
    context: Context, query: str, budget: int, overrides: dict[str, Any], memo: RetrievalMemo | None
) -> AssembledContext:
    pipeline = Pipeline.open(
        project_dir=context.project,
        overrides=unhurried({**context.overrides, **overrides}),
        memo=memo,
    )
    try:
        for name, strategy in context.strategies.items():
            info = pipeline.registry.register(plugin_of([strategy]), f"{name}-plugin")
            assert info.status == "ok", info.error
        return pipeline.assemble(query, budget=budget)
    finally:
        pipeline.close()


def _value(raw: str) -> float:
    return float(raw)


@when(
    'I assemble "{query}" within {budget:d} tokens with "{key}" {value}, then with "{key2}"'
    ' {value2} and "{key3}" {value3}, sharing a memo'
)
def assemble_twice_three(
    context: Context,
    query: str,
    budget: int,
    key: str,
    value: str,
    key2: str,
    value2: str,
    key3: str,
    value3: str,
) -> None:
    _twice(
        context, query, budget, {key: _value(value)}, {key2: _value(value2), key3: _value(value3)}
    )


@when(
    'I assemble "{query}" within {budget:d} tokens with "{key}" {value}, then with "{key2}"'
    " {value2}, sharing a memo"
)
def assemble_twice(
    context: Context, query: str, budget: int, key: str, value: str, key2: str, value2: str
) -> None:
    _twice(context, query, budget, {key: _value(value)}, {key2: _value(value2)})


def _twice(
    context: Context, query: str, budget: int, first: dict[str, Any], second: dict[str, Any]
) -> None:
    for overrides in (first, second):
        for key, value in overrides.items():
            if key == "fusion.rrf_k":
                overrides[key] = int(value)
    context.memo = RetrievalMemo()
    _assembled(context, query, budget, first, context.memo)
    context.result = _assembled(context, query, budget, second, context.memo)
    context.error = None
    context.last = (query, budget, second)


@given('the strategy "{name}" raises RuntimeError "{message}" on its first run')
def fails_first(context: Context, name: str, message: str) -> None:
    strategy: ScriptedStrategy = context.strategies[name]
    behaviour = strategy.behaviour

    def first_fails(request: ContextRequest, budget: int) -> object:
        if len(strategy.calls) == 1:
            raise RuntimeError(message)
        return behaviour(request, budget)

    strategy.behaviour = first_fails


@then('the strategy "{name}" was run once')
def run_once(context: Context, name: str) -> None:
    calls = context.strategies[name].calls
    assert len(calls) == 1, f"{name} was run {len(calls)} times"


@then('the strategy "{name}" was run {times:d} times')
def run_times(context: Context, name: str, times: int) -> None:
    calls = context.strategies[name].calls
    assert len(calls) == times, f"{name} was run {len(calls)} times"


@then("the memo answered {count:d} strategy runs")
def memo_answered(context: Context, count: int) -> None:
    assert context.memo.hits == count, f"the memo answered {context.memo.hits}"


@then("the last context is the one a pipeline without the memo assembles")
def same_as_fresh(context: Context) -> None:
    query, budget, overrides = context.last
    fresh = _assembled(context, query, budget, overrides, None)
    remembered = result(context)
    assert remembered.text == fresh.text, (remembered.text, fresh.text)
    assert [f.id for f in remembered.fragments] == [f.id for f in fresh.fragments]
    assert [(f.id, f.score) for f in remembered.fragments] == [
        (f.id, f.score) for f in fresh.fragments
    ]
