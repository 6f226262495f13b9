"""StrategyExecutor: ask the strategies whether they can handle a request, then run them
concurrently, each isolated and under its deadline.

No plugin code runs on the request's event loop, which only waits and so can give up on
anything at its deadline. Plain methods (`can_handle`, a plain `retrieve`) run on daemon
worker threads; an `async` `retrieve` runs on an event loop of its own strategy, on a
daemon thread of its own, so a strategy that blocks its loop (`time.sleep` in async code)
holds up only itself (`_threads` keeps those threads and loops). That its answer is a
list of candidates is also checked there, within its deadline; what each candidate may
be, and how much of the list is packed first, is `acceptance`'s business. Whatever a
strategy does (raise anything, `SystemExit` and `KeyboardInterrupt` included, hang, block,
ignore its cancellation, return the wrong types) becomes a `StrategyReport`; it never fails
the request, which answers within its deadline plus the time acceptance, fusion and
packing take. (The user's Ctrl-C interrupts the main thread, where no plugin code runs:
it still stops the command.) A call given up on at its deadline cannot be killed: it
keeps its thread until it returns. A strategy with `QUARANTINE_AFTER` such calls that
have not returned is quarantined, neither asked nor run until one of them returns, so
that one that never returns holds a bounded number of threads, not one per request.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import reprlib
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from ..contract.capabilities import Backends
from ..contract.strategy import NOTE_LIMIT, ContextStrategy, Preparing, Retrieved
from ..core.errors import described, validation_problem
from ..core.logs import logger
from ..core.models import Candidate, ContextRequest, StrategyReport, StrategyStatus
from ..plugins import RegisteredStrategy
from ._threads import OwnLoop, PlainBatch, StuckCalls, Ticket, stop_loops


@dataclass(frozen=True)
class PlannedRun:
    """A strategy chosen to run, with its allocation and deadline."""

    registered: RegisteredStrategy
    confidence: float
    weight: float  # the configured or requested weight
    allocated_tokens: int
    deadline_ms: int
    #: When the request's own deadline ends (a `time.perf_counter()` value). It started
    #: before `can_handle`, so the time the strategies took to answer that counts too.
    request_ends: float = math.inf
    #: When its answer is due at the latest (planning's rule 5), the same kind of value.
    answer_by: float = math.inf

    @property
    def name(self) -> str:
        """The strategy's name."""
        return self.registered.strategy.name


@dataclass(frozen=True)
class RunOutcome:
    """A strategy's report and its candidates, best first, as it returned them."""

    report: StrategyReport
    candidates: tuple[Candidate, ...] = ()


class RetrievalMemo:
    """What each strategy returned for a request at an allocation, kept to be returned
    again instead of running the strategy: for a caller that assembles the same requests
    over and over with settings that change only fusion, packing or the weights (`contextpipe
    tune`). Valid only while the store, the strategies and their options stay as they are;
    only whole answers (status `ok`) are kept. The reports returned are the ones first
    made, elapsed times included.
    """

    def __init__(self) -> None:
        self._outcomes: dict[tuple[str, int, str], RunOutcome] = {}
        self.hits = 0  # answers returned from the memo

    def __len__(self) -> int:
        return len(self._outcomes)

    def recall(self, key: tuple[str, int, str]) -> RunOutcome | None:
        """The answer kept for (strategy, allocation, request as JSON), counted as a hit."""
        outcome = self._outcomes.get(key)
        self.hits += outcome is not None
        return outcome

    def keep(self, key: tuple[str, int, str], outcome: RunOutcome) -> None:
        """Keep a whole answer (status `ok`)."""
        if outcome.report.status == "ok":
            self._outcomes[key] = outcome


@dataclass(frozen=True)
class Confidence:
    """A strategy's answer to `can_handle`: its confidence, or why it has none (status
    `error` or `timeout`, with the time it was given).
    """

    value: float
    status: StrategyStatus = "ok"
    reason: str = ""
    elapsed_ms: float = 0.0


#: `can_handle` has this share of the request's deadline to answer, at least
#: `CAN_HANDLE_MIN_MS` (an instant one can be kept waiting that long by a busy machine or a
#: garbage collection) but never more than half of it: the budget can only be split once
#: every strategy has answered, and the rest of the deadline is for `retrieve`.
CAN_HANDLE_SHARE = 0.1
CAN_HANDLE_MIN_MS = 100


#: A strategy with this many calls given up on at their deadlines that have not returned
#: yet is quarantined: neither asked nor run until one of them returns. Each such call of a
#: plain method holds a worker thread, so a strategy that never returns holds this many
#: (and one more for each request that was running it when it was quarantined).
QUARANTINE_AFTER = 3


def _can_handle_window_ms(deadline_ms: int) -> int:
    floor = min(CAN_HANDLE_MIN_MS, deadline_ms // 2)
    return max(floor, round(deadline_ms * CAN_HANDLE_SHARE))


#: A strategy's answer, checked to be a list of candidates, and its note for the report.
_Accepted = tuple[list[Candidate], str]


class _ContractError(Exception):
    """The strategy returned something the contract does not allow."""


class _PluginError(Exception):
    """A strategy method raised. The message is made where the method ran: making it runs
    the plugin's code (`__str__`), which may raise or hang too.
    """


def _answer_of(raw: object) -> _Accepted:
    """A strategy's output as candidates and its note for the report (see `Retrieved`)."""
    if isinstance(raw, Retrieved):
        note = " ".join(str(raw.note).split())
        if len(note) > NOTE_LIMIT:
            note = note[: NOTE_LIMIT - 1] + "…"
        return _candidates(raw.candidates), note
    return _candidates(raw), ""


def _candidates(raw: object) -> list[Candidate]:
    """A strategy's candidates; anything else breaks the contract."""
    if not isinstance(raw, list | tuple):
        raise _ContractError(
            f"retrieve() returned {type(raw).__name__}, expected a list of Candidate"
        )
    return [
        item if isinstance(item, Candidate) else _validated(item, position)
        for position, item in enumerate(cast(Sequence[object], raw), start=1)
    ]


def _validated(item: object, position: int) -> Candidate:
    try:
        return Candidate.model_validate(item)
    except ValidationError as exc:
        where, problem = validation_problem(exc)
        raise _ContractError(
            f"malformed candidate #{position}: {where or 'candidate'}: {problem}"
        ) from None


async def _within(pending: asyncio.Future[_Accepted], seconds: float) -> _Accepted | str:
    """The strategy's checked answer, or why it failed, or TimeoutError after `seconds`.
    Unlike `asyncio.wait_for`, this does not wait for the cancelled strategy to stop: one
    that ignores its cancellation is abandoned, as a hung plain strategy is. A failure
    comes back as its message, not raised again: raised, it would take this request's
    frames into its traceback, and they hold the future that holds it (a cycle).
    """
    done, _ = await asyncio.wait((pending,), timeout=seconds)
    if not done:
        pending.cancel()
        pending.add_done_callback(_discard_outcome)
        raise TimeoutError
    error = pending.exception()
    if error is None:
        return pending.result()
    if isinstance(error, _ContractError | _PluginError):  # their message is ours
        return str(error)
    return described(error)  # never raised: its loop closed under it, say


def _discard_outcome(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so that asyncio does not report it as lost


class _Call:
    """One strategy's `retrieve` for one request and the check of what it returned, where
    they run: on a worker, or on the strategy's own loop. Both run within the deadline;
    `answered` tells a timeout while its answer was checked from one while it was at work.
    """

    def __init__(
        self, plan: PlannedRun, request: ContextRequest, backends: Backends, ticket: Ticket
    ) -> None:
        self.plan = plan
        self.strategy = plan.registered.strategy
        self.is_async = inspect.iscoroutinefunction(self.strategy.retrieve)
        self._request = request
        self._backends = backends
        self.ticket = ticket
        self.answered = False

    def _retrieve(self) -> object:
        return self.strategy.retrieve(self._request, self._backends, self.plan.allocated_tokens)

    def _check(self, raw: object) -> _Accepted:
        self.answered = True
        return _answer_of(raw)

    def plain(self) -> _Accepted:
        return self.ticket.run(self._plain)

    async def awaited(self) -> _Accepted:
        return await self.ticket.awaited(self._awaited)

    def _plain(self) -> _Accepted:
        try:
            raw = self._retrieve()
            if inspect.isawaitable(raw):
                if inspect.iscoroutine(raw):
                    raw.close()  # never to be awaited: no "never awaited" warning later
                raise _ContractError("retrieve() returned an awaitable from a plain method")
            return self._check(raw)
        except _ContractError:
            raise
        except BaseException as exc:  # on a worker: whatever it raises is its own
            raise _PluginError(described(exc)) from None

    async def _awaited(self) -> _Accepted:
        try:
            return self._check(await cast(Awaitable[object], self._retrieve()))
        except _ContractError:
            raise
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and _cancelled():
                raise  # at its deadline: the task must end cancelled
            raise _PluginError(described(exc)) from None


def _cancelled() -> bool:
    """Whether the running task is being cancelled (rather than its code raising
    `CancelledError` of its own accord).
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _confidence(strategy: ContextStrategy, request: ContextRequest, backends: Backends) -> float:
    """On a worker: `can_handle`'s answer as a float (converting it runs plugin code too)."""
    try:
        answer: object = strategy.can_handle(request, backends)
    except BaseException as exc:  # on a worker: whatever it raises is its own
        raise _PluginError(f"can_handle raised {described(exc)}") from None
    try:
        return float(cast(Any, answer))
    except (TypeError, ValueError):
        raise _ContractError(
            f"can_handle returned {reprlib.repr(answer)}, expected a value in [0, 1]"
        ) from None
    except BaseException as exc:
        raise _PluginError(f"can_handle's answer raised {described(exc)}") from None


def _answer(future: asyncio.Future[object], window_ms: int, elapsed_ms: float) -> Confidence:
    if not future.done():
        future.cancel()  # its answer, should it come, is thrown away
        reason = f"can_handle gave no answer within {window_ms} ms; counted as declining"
        return Confidence(0.0, "timeout", reason, elapsed_ms)
    error = future.exception()
    if error is not None:  # _ContractError or _PluginError: their message is ours
        return Confidence(0.0, "error", str(error))
    value = cast(float, future.result())
    if not 0.0 <= value <= 1.0:
        return Confidence(0.0, "error", f"can_handle returned {value}, expected a value in [0, 1]")
    return Confidence(value)


async def _answered(batch: PlainBatch, window: float, give_up: float) -> None:
    """Wait until each `can_handle` of `batch` answered or ran for `window` seconds (one
    not started yet is given the window from now, and looked at again), or `give_up`.
    """
    while waiting := [i for i, future in enumerate(batch.futures) if not future.done()]:
        now = time.perf_counter()
        horizon = min(give_up, max((batch.started[i] or now) + window for i in waiting))
        if horizon <= now:
            return
        await asyncio.wait([batch.futures[i] for i in waiting], timeout=horizon - now)


def _found(batch: PlainBatch, window: float) -> list[Confidence]:
    """The answers of `batch` now: one that has not come is a timeout."""
    now = time.perf_counter()
    return [
        _answer(future, round(window * 1000), round((now - (started or now)) * 1000, 3))
        for future, started in zip(batch.futures, batch.started, strict=True)
    ]


class StrategyExecutor:
    """Asks strategies whether they can handle a request, and runs the planned ones
    concurrently under per-strategy and global deadlines.
    """

    def __init__(self, memo: RetrievalMemo | None = None) -> None:
        self.memo = memo
        self._own_loops: dict[int, OwnLoop] = {}  # by id() of the async strategy
        self._lock = threading.Lock()
        self._stuck = StuckCalls()  # by id() of the strategy
        self._close = weakref.finalize(self, stop_loops, self._own_loops)

    def close(self) -> None:
        """Stop the event loops of async strategies (done, too, when it is collected)."""
        self._close()

    def _own_loop(self, strategy: ContextStrategy) -> OwnLoop:
        own = self._own_loops.get(id(strategy))
        if own is None:
            with self._lock:
                own = self._own_loops.get(id(strategy))
                if own is None:
                    own = self._own_loops[id(strategy)] = OwnLoop(strategy)
        return own

    async def confidences(
        self,
        strategies: Sequence[ContextStrategy],
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
    ) -> list[Confidence]:
        """Each strategy's `can_handle`, in order. They run on workers, each after its
        strategy's `prepare` when it has one (`Preparing`), on the same worker; one that has
        run for a tenth of the request's deadline (at least 100 ms, at most half of it)
        without answering counts as declining, with status `timeout`. The time a call waits
        for a worker, or for its `prepare`, is not held against it, up to half the
        request's deadline; a `prepare` still running then is abandoned, as a hung call is,
        and its strategy is asked on another worker. A quarantined strategy is not asked:
        it declines, with status `skipped`.
        """
        answers = [self._quarantined(strategy) for strategy in strategies]
        asked = [s for s, answer in zip(strategies, answers, strict=True) if answer is None]
        if not asked:
            return [answer for answer in answers if answer is not None]
        window = _can_handle_window_ms(global_deadline_ms) / 1000
        preparing = {
            i: self._stuck.ticket(id(s)) for i, s in enumerate(asked) if isinstance(s, Preparing)
        }
        preludes = [
            functools.partial(preparing[i].run, functools.partial(s.prepare, request, backends))
            if i in preparing and isinstance(s, Preparing)
            else None
            for i, s in enumerate(asked)
        ]
        tickets, batch = self._ask(asked, request, backends, preludes)
        # However long calls wait, half the deadline is left for `retrieve`.
        give_up = time.perf_counter() + global_deadline_ms / 2000
        await _answered(batch, window, give_up)
        moved = [i for i in preparing if batch.move(i)]
        for i in moved:
            self._abandon(preparing[i], asked[i].name)
        found = _found(batch, window)
        if moved:  # asked again, past their `prepare`, with the whole window
            again_tickets, again = self._ask([asked[i] for i in moved], request, backends)
            await _answered(again, window, time.perf_counter() + window)
            for i, ticket, answer in zip(moved, again_tickets, _found(again, window), strict=True):
                tickets[i], found[i] = ticket, answer
        for strategy, ticket, answer in zip(asked, tickets, found, strict=True):
            if answer.status == "timeout":
                self._abandon(ticket, strategy.name)
        by_order = iter(found)
        return [next(by_order) if answer is None else answer for answer in answers]

    def _ask(
        self,
        strategies: Sequence[ContextStrategy],
        request: ContextRequest,
        backends: Backends,
        preludes: Sequence[Callable[[], object] | None] = (),
    ) -> tuple[list[Ticket], PlainBatch]:
        """Each strategy's `can_handle` on a worker (after its prelude): tickets and batch."""
        tickets = [self._stuck.ticket(id(s)) for s in strategies]
        calls = [
            functools.partial(ticket.run, functools.partial(_confidence, s, request, backends))
            for s, ticket in zip(strategies, tickets, strict=True)
        ]
        return tickets, PlainBatch(asyncio.get_running_loop(), calls, preludes)

    def _quarantined(self, strategy: ContextStrategy) -> Confidence | None:
        """A quarantined strategy's answer, for its report; None for one that may run."""
        stuck = self._stuck.count(id(strategy))
        if stuck < QUARANTINE_AFTER:
            return None
        reason = (
            f"quarantined: {stuck} of its calls hung past their deadlines and have not "
            "returned; it is not run until one of them does"
        )
        return Confidence(0.0, "skipped", reason)

    def _abandon(self, ticket: Ticket, name: str) -> None:
        """Give up on a call; the call that makes its strategy quarantined is logged."""
        if ticket.abandon() == QUARANTINE_AFTER:
            logger.warning("strategy quarantined", strategy=name, stuck_calls=QUARANTINE_AFTER)

    async def run(
        self,
        plans: Sequence[PlannedRun],
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
    ) -> list[RunOutcome]:
        """One outcome per plan, in plan order; from the memo, when the executor has one
        and it holds the strategy's answer to this request at this allocation.
        """
        memo = self.memo
        if memo is None:
            calls = [self._call(plan, request, backends) for plan in plans]
            return await self._run(calls, global_deadline_ms)
        asked = request.model_dump_json()
        keys = [(plan.registered.strategy.name, plan.allocated_tokens, asked) for plan in plans]
        known = [memo.recall(key) for key in keys]
        missing = [
            self._call(plan, request, backends)
            for plan, outcome in zip(plans, known, strict=True)
            if outcome is None
        ]
        fresh = iter(await self._run(missing, global_deadline_ms))
        outcomes: list[RunOutcome] = []
        for key, outcome in zip(keys, known, strict=True):
            if outcome is None:
                outcome = next(fresh)
                memo.keep(key, outcome)
            outcomes.append(outcome)
        return outcomes

    def _call(self, plan: PlannedRun, request: ContextRequest, backends: Backends) -> _Call:
        ticket = self._stuck.ticket(id(plan.registered.strategy))
        return _Call(plan, request, backends, ticket)

    async def _run(self, calls: Sequence[_Call], global_deadline_ms: int) -> list[RunOutcome]:
        batch = PlainBatch(asyncio.get_running_loop(), [c.plain for c in calls if not c.is_async])
        arriving = iter(batch.futures)
        runs = [
            self._run_one(
                call,
                self._own_loop(call.strategy).start(call.awaited)
                if call.is_async
                else next(arriving),
                global_deadline_ms,
            )
            for call in calls
        ]
        return list(await asyncio.gather(*runs))

    async def _run_one(
        self, call: _Call, pending: asyncio.Future[Any], global_deadline_ms: int
    ) -> RunOutcome:
        """`pending` is where the strategy's checked answer arrives."""
        plan = call.plan
        deadline_ms = min(plan.deadline_ms, global_deadline_ms)
        started = time.perf_counter()

        def outcome(
            status: StrategyStatus,
            reason: str,
            proposed: int = 0,
            candidates: Sequence[Candidate] = (),
        ) -> RunOutcome:
            report = StrategyReport(
                name=call.strategy.name,
                plugin=plan.registered.plugin.label,
                status=status,
                reason=reason,
                confidence=plan.confidence,
                allocated_tokens=plan.allocated_tokens,
                proposed=proposed,
                elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
            )
            return RunOutcome(report, tuple(candidates))

        due = min(plan.request_ends, plan.answer_by)
        seconds = max(0.0, min(deadline_ms / 1000, due - started))
        try:
            answer = await _within(pending, seconds)
        except TimeoutError:
            self._abandon(call.ticket, call.strategy.name)
            return outcome("timeout", self._late(call, deadline_ms, round(seconds * 1000)))
        if isinstance(answer, str):
            return outcome("error", answer)
        candidates, note = answer
        return outcome("ok", note, len(candidates), candidates)

    def _late(self, call: _Call, deadline_ms: int, allowed_ms: int) -> str:
        """Why a strategy timed out after `allowed_ms` of its deadline (less when the
        request's time ran out first: planning's rule 5), as far as can be told.
        """
        deadline = f"its deadline of {deadline_ms} ms"
        if allowed_ms < deadline_ms:
            deadline += f" (it had {allowed_ms} ms of the request's time)"
        if call.answered:
            return f"its answer could not be checked within {deadline}"
        reason = f"no answer within {deadline}"
        if call.is_async and self._own_loop(call.strategy).blocked():
            return f"{reason}: it blocked its event loop (a blocking call in async code)"
        return reason
