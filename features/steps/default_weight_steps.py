"""Steps for strategies that declare the weight they run with (`default_weight`)."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass

from behave import given, then, when
from behave.runner import Context
from testkit import (
    ScriptedStrategy,
    assemble,
    fragments_from_table,
    in_context,
    pipeline,
    plugin_of,
    propose,
    register_strategy,
)


@dataclass
class _Declaring(ScriptedStrategy):
    """A scripted strategy that declares the weight it runs with."""

    default_weight: object = 1.0


def _declaring(context: Context, name: str, quality: float, weight: float) -> _Declaring:
    fragments = fragments_from_table(context) if context.table else []
    strategy = _Declaring(name, propose(fragments), quality=quality, default_weight=weight)
    context.strategies[name] = strategy
    return strategy


@given('a strategy "{name}" of quality {quality:g} and default weight {weight:g} that proposes:')
def declaring_proposing(context: Context, name: str, quality: float, weight: float) -> None:
    register_strategy(context, _declaring(context, name, quality, weight))


@given(
    'a strategy "{name}" of quality {quality:g} and default weight {weight:g} that proposes nothing'
)
def declaring_nothing(context: Context, name: str, quality: float, weight: float) -> None:
    register_strategy(context, _declaring(context, name, quality, weight))


@given('a plugin "{plugin}" whose strategy declares the default weight {value}')
def declaring_badly(context: Context, plugin: str, value: str) -> None:
    weight: object = tomllib.loads(f"v = {value}")["v"]
    strategy = _Declaring("heavy", propose([]), default_weight=weight)
    pipeline(context).registry.register(plugin_of([strategy]), plugin)


def _selection(weight: str) -> dict[str, float]:
    return {} if weight == "none" else {"weight": float(weight)}


@when(
    'I ask for "{query}" within {budget:d} tokens naming "{first}" with {one} and'
    ' "{second}" with {other}'
)
def ask_naming_two(
    context: Context, query: str, budget: int, first: str, one: str, second: str, other: str
) -> None:
    """A request naming both strategies; `weight 1` gives one its own weight, `none` not."""
    one = one.removeprefix("weight ")
    other = other.removeprefix("weight ")
    selection = {first: _selection(one), second: _selection(other)}
    assemble(context, query, budget=budget, strategies=selection)


@then('the fused scores of "{first}" and "{second}" are equal')
def equal_fused_scores(context: Context, first: str, second: str) -> None:
    one, other = in_context(context, first), in_context(context, second)
    assert one is not None and other is not None, "both must be in the context"
    assert math.isclose(one.score, other.score), (one.score, other.score)


@then('its table "{table}" sets {key} to {value:g}')
def table_sets(context: Context, table: str, key: str, value: float) -> None:
    data = tomllib.loads(context.default_toml)
    section = data
    for part in table.split("."):
        section = section[part]
    assert section.get(key) == value, f"[{table}] {key} = {section.get(key)!r}"


@when("I look at the strategies a default pipeline loads")
def default_pipeline(context: Context) -> None:
    context.loaded_pipeline = pipeline(context)


@then('the strategy "{name}" runs with weight {weight:g}')
def runs_with_weight(context: Context, name: str, weight: float) -> None:
    loaded = context.loaded_pipeline
    registered = loaded.strategy(name)
    assert registered is not None, f"{name} is not loaded"
    assert loaded.settings.strategy(name).weight is None, "config sets its weight"
    assert registered.default_weight == weight, registered.default_weight
