"""Steps for the StrategyExecutor: timing, isolation, contract checks and log events."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import parse
from behave import given, register_type, then, when
from behave.runner import Context
from structlog.testing import capture_logs
from testkit import (
    ScriptedStrategy,
    assemble,
    left_for_the_collector,
    pipeline,
    propose,
    register_strategy,
    report,
    result,
)

from contextpipe import Backends, ContextRequest, RequestFilters, StrategySelection
from contextpipe.core.logs import configure_logging


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


# -- strategies that never return ---------------------------------------------------------


@dataclass
class _Held:
    """Calls of a strategy held until the scenario lets them go, one by one (all of them
    when it ends), and how many were made and let go.
    """

    gate: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    calls: int = 0
    returned: int = 0

    def wait(self) -> None:
        self.calls += 1
        self.gate.acquire()
        self.returned += 1

    async def wait_unless_cancelled(self) -> None:
        self.calls += 1
        while not self.gate.acquire(blocking=False):
            await asyncio.sleep(0.01)  # cancelled: it ends here, without returning
        self.returned += 1

    async def wait_ignoring_cancellation(self) -> None:
        self.calls += 1
        while not self.gate.acquire(blocking=False):
            with contextlib.suppress(asyncio.CancelledError):  # and waits on
                await asyncio.sleep(0.01)
        self.returned += 1


class _HungRetrieve(ScriptedStrategy):
    held: _Held

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> object:
        self.held.wait()
        return []


class _HungConfidence(ScriptedStrategy):
    held: _Held

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        self.held.wait()
        return 1.0


class _HungPreparation(ScriptedStrategy):
    held: _Held

    def prepare(self, request: ContextRequest, backends: Backends) -> None:
        self.held.wait()


class _FailingPreparation(ScriptedStrategy):
    prepared = 0
    moved = 0  # can_handle calls on another thread than the prepare before them

    def prepare(self, request: ContextRequest, backends: Backends) -> None:
        self.prepared += 1
        self.prepared_on = threading.get_ident()
        raise RuntimeError("graph names unreadable")

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        self.moved += threading.get_ident() != self.prepared_on
        return super().can_handle(request, backends)


class _PatientAsync(ScriptedStrategy):
    held: _Held
    stubborn = False  # goes on waiting when it is cancelled

    async def retrieve(  # type: ignore[override]
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> object:
        if self.stubborn:
            await self.held.wait_ignoring_cancellation()
        else:
            await self.held.wait_unless_cancelled()
        return []


class _StubbornAsync(_PatientAsync):
    stubborn = True


class _BlockingAsync(ScriptedStrategy):
    held: _Held

    async def retrieve(  # type: ignore[override]
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> object:
        self.held.wait()  # a blocking call in async code: its event loop waits with it
        return []


_HANGS: dict[str, type[ScriptedStrategy]] = {
    "never returns from retrieve": _HungRetrieve,
    "never returns from can_handle": _HungConfidence,
    "never returns from prepare": _HungPreparation,
    "never returns from an async retrieve unless cancelled": _PatientAsync,
    "never returns from an async retrieve, cancelled or not": _StubbornAsync,
    "blocks its event loop for good": _BlockingAsync,
}


@parse.with_pattern("|".join(re.escape(hangs) for hangs in _HANGS))
def _hangs(text: str) -> str:
    return text


register_type(Hangs=_hangs)


@given('a strategy "{name}" that {hangs:Hangs}')
def hung_strategy(context: Context, name: str, hangs: str) -> None:
    held = _Held()
    strategy: Any = _HANGS[hangs](name, propose([]))
    strategy.held = held
    context.held = held
    # Whatever the scenario left hanging returns when it ends: no thread outlives it.
    context.add_cleanup(held.gate.release, 1000)
    register_strategy(context, strategy)


@given('a strategy "{name}" whose prepare raises')
def failing_preparation(context: Context, name: str) -> None:
    context.failing = _FailingPreparation(name, propose([]))
    register_strategy(context, context.failing)


@then('"{name}" was prepared {times:d} times')
def prepared_times(context: Context, name: str, times: int) -> None:
    prepared = context.failing.prepared
    assert prepared == times, f"{name} was prepared {prepared} times"


@then('"{name}" was asked each time on the worker it was prepared on')
def asked_where_prepared(context: Context, name: str) -> None:
    moved = context.failing.moved
    assert moved == 0, f"{name} was asked {moved} times on another worker"


@when('I ask for "{query}" within {budget:d} tokens {times:d} times with a deadline of {ms:d} ms')
def ask_times(context: Context, query: str, budget: int, times: int, ms: int) -> None:
    for _ in range(times):
        assemble(context, ContextRequest(query=query, budget=budget, deadline_ms=ms))
        result(context)


@when('one of the calls of "{name}" returns')
def one_call_returns(context: Context, name: str) -> None:
    held: _Held = context.held
    before = held.returned
    held.gate.release()
    for _ in range(6000):  # it returns once its thread runs: wait for that (a minute at most)
        if held.returned > before:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"the call of {name} did not return")


@then('"{name}" was called {calls:d} times, and {returned} of its calls returned')
def calls_held(context: Context, name: str, calls: int, returned: str) -> None:
    held: _Held = context.held
    expected = 0 if returned == "none" else int(returned)
    assert (held.calls, held.returned) == (calls, expected), (
        f"{name} was called {held.calls} times; {held.returned} of its calls returned"
    )


@when(
    'the store is searched for "{query}" from {times:d} threads that then end,'
    " with the collector off"
)
def search_from_ending_threads(context: Context, query: str, times: int) -> None:
    store = pipeline(context).store
    context.hits = []

    def searching() -> None:
        for _ in range(times):
            searcher = threading.Thread(
                target=lambda: context.hits.append(store.search(query, 10, RequestFilters()))
            )
            searcher.start()
            searcher.join()

    left_for_the_collector(context, searching)


@then("each of those searches found something")
def searches_found(context: Context) -> None:
    assert context.hits and all(context.hits), context.hits
