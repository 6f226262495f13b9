"""Steps for the StrategyExecutor: timing, isolation, contract checks and log events."""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from behave.runner import Context
from structlog.testing import capture_logs
from testkit import assemble, report, result

from contextpipe import ContextRequest, StrategySelection
from contextpipe.logs import configure_logging


@then("the assembly took less than {seconds:g} seconds")
def took_less_than(context: Context, seconds: float) -> None:
    result(context)
    assert context.elapsed_seconds < seconds, f"it took {context.elapsed_seconds:.2f} s"


@then('the report of "{name}" shows {count:d} candidates proposed')
def proposed(context: Context, name: str, count: int) -> None:
    strategy_report = report(context, name)
    assert strategy_report.proposed == count, strategy_report


@given("verbose logging")
def verbose_logging(context: Context) -> None:
    configure_logging("info")  # what `contextpipe --verbose` does
    context.add_cleanup(configure_logging, "warning")


@when('I ask for "{query}" within {budget:d} tokens while capturing the log')
def ask_capturing(context: Context, query: str, budget: int) -> None:
    with capture_logs() as events:
        assemble(context, ContextRequest(query=query, budget=budget))
    context.log_events = list(events)


def _events(context: Context, name: str) -> list[dict[str, Any]]:
    return [event for event in context.log_events if event["event"] == name]


@then('the log has exactly one "strategy" event for each of "{names}"')
def one_event_each(context: Context, names: str) -> None:
    logged = sorted(event["strategy"] for event in _events(context, "strategy"))
    assert logged == sorted(name.strip() for name in names.split(",")), logged


@then('every "strategy" event carries "{keys}"')
def events_carry(context: Context, keys: str) -> None:
    wanted = [key.strip() for key in keys.split(",")]
    for event in _events(context, "strategy"):
        missing = [key for key in wanted if key not in event]
        assert not missing, f"{event['strategy']} event lacks {missing}: {event}"


@then(
    'the "strategy" event of "{name}" says status "{status}", proposed {proposed:d}'
    " and accepted {accepted:d}"
)
def event_counts(context: Context, name: str, status: str, proposed: int, accepted: int) -> None:
    (event,) = [e for e in _events(context, "strategy") if e["strategy"] == name]
    assert (event["status"], event["proposed"], event["accepted"]) == (
        status,
        proposed,
        accepted,
    ), event
    assert event["allocated_tokens"] > 0 and event["used_tokens"] > 0, event


@then('the "strategy" event of "{name}" says status "{status}"')
def event_status(context: Context, name: str, status: str) -> None:
    (event,) = [e for e in _events(context, "strategy") if e["strategy"] == name]
    assert event["status"] == status, event


@then('the log has exactly one "assembled" event, with the budget and the tokens used')
def assembled_event(context: Context) -> None:
    events = _events(context, "assembled")
    assert len(events) == 1, events
    assembled = result(context)
    assert events[0]["budget"] == assembled.budget, events[0]
    assert events[0]["tokens_used"] == assembled.tokens_used, events[0]
    assert events[0]["elapsed_ms"] >= 0, events[0]


@when('I ask for "{query}" within {budget:d} tokens giving "{name}" weight {weight:g}')
def ask_with_weight(context: Context, query: str, budget: int, name: str, weight: float) -> None:
    selection = {name: StrategySelection(weight=weight)}
    assemble(context, ContextRequest(query=query, budget=budget, strategies=selection))


@then('the report of "{name}" shows an elapsed time of at least {milliseconds:d} ms')
def elapsed_at_least(context: Context, name: str, milliseconds: int) -> None:
    strategy_report = report(context, name)
    assert strategy_report.elapsed_ms >= milliseconds, strategy_report


@then(
    'the report of "{name}" says {status:Status} with a reason of {length:d} characters'
    ' ending in "{end}"'
)
def report_reason_cut(context: Context, name: str, status: str, length: int, end: str) -> None:
    strategy_report = report(context, name)
    assert strategy_report.status == status, strategy_report
    reason = strategy_report.reason
    assert len(reason) == length and reason.endswith(end), f"reason is {reason!r}"
