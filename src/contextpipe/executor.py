"""StrategyExecutor: run strategies concurrently, each isolated and under its deadline.

Async strategies run on the event loop; plain ones on daemon worker threads (see
`_PlainBatch`), so a strategy that hangs can be abandoned at its deadline without holding
up the request or the process's exit. Whatever a strategy does (raise, hang, ignore its
cancellation, return the wrong types, exceed its allocation) becomes a `StrategyReport`;
it never fails the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from .backends import Backends
from .models import Candidate, ContextRequest, StrategyReport, StrategyStatus
from .registry import RegisteredStrategy


@dataclass(frozen=True)
class PlannedRun:
    """A strategy chosen to run, with its allocation and deadline."""

    registered: RegisteredStrategy
    confidence: float
    weight: float  # the configured or requested weight
    allocated_tokens: int
    deadline_ms: int


@dataclass(frozen=True)
class RunOutcome:
    """A strategy's report and its candidates, best first, as it returned them."""

    report: StrategyReport
    candidates: tuple[Candidate, ...] = ()


class _ContractError(Exception):
    """The strategy returned something the contract does not allow."""


#: A strategy call to run on a worker; it returns what wakes the caller with its outcome.
_Job = Callable[[], Callable[[], None]]


class _DaemonWorkers:
    """Daemon threads that run plain strategies, reused across requests (starting a thread
    costs more than an instant strategy). A worker stuck in a hung strategy is simply never
    idle again; a new one starts whenever none is idle, and idle ones leave after a while.
    """

    def __init__(self, idle_seconds: float = 60.0) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # workers waiting for a job that no submit has claimed yet
        self._idle_seconds = idle_seconds

    def submit(self, job: _Job) -> None:
        """Run `job` on an idle worker, or on a new one; then call what it returns."""
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                worker = threading.Thread(target=self._work, name="contextpipe-strategy")
                worker.daemon = True
                worker.start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # unclaimed: nobody is about to hand this worker a job
                        self._idle -= 1
                        return
                continue
            notify = job()
            with self._lock:
                self._idle += 1
            # Waking the waiting loop comes last: its thread then runs without having to
            # hand the GIL back to this one for the bookkeeping above.
            notify()


_WORKERS = _DaemonWorkers()


#: A plain strategy's outcome on its worker: its index, and its error or its return value.
_Result = tuple[int, BaseException | None, object]

#: How long one worker runs a request's plain strategies one after another before those it
#: has not started go to workers of their own.
_SPREAD_AFTER_S = 0.002


class _PlainBatch:
    """A request's plain strategies on daemon workers, with one future each.

    Waking a thread costs more than an instant strategy, and on a busy machine a woken
    thread may resume on a cold CPU. So one worker runs the calls one after another and
    wakes the loop once, with every result. If it has not finished after `_SPREAD_AFTER_S`,
    the loop delivers the results it has and hands the calls it has not started to workers
    of their own: a slow or hung strategy holds up no other.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, calls: Sequence[Callable[[], object]]):
        self._loop = loop
        self._calls = list(calls)
        self.futures: list[asyncio.Future[object]] = [loop.create_future() for _ in calls]
        self._lock = threading.Lock()
        self._next = 0  # the first call no worker has taken
        self._finished: list[_Result] = []  # results not yet handed to the loop
        self._timer: asyncio.TimerHandle | None = None
        if len(self._calls) == 1:
            _WORKERS.submit(functools.partial(self._alone, 0))
        elif self._calls:
            _WORKERS.submit(self._in_turn)
            self._timer = loop.call_later(_SPREAD_AFTER_S, self._spread)

    def _run(self, index: int) -> _Result:
        try:
            return index, None, self._calls[index]()
        except BaseException as exc:  # delivered to the awaiting side, which reports it
            return index, exc, None

    def _alone(self, index: int) -> Callable[[], None]:
        result = self._run(index)
        return lambda: self._post([result])

    def _in_turn(self) -> Callable[[], None]:
        while True:
            with self._lock:
                if self._next == len(self._calls):
                    finished, self._finished = self._finished, []
                    return lambda: self._post(finished)
                index = self._next
                self._next += 1
            result = self._run(index)
            with self._lock:
                self._finished.append(result)

    def _spread(self) -> None:
        """On the loop: deliver what is finished, give each waiting call its own worker."""
        with self._lock:
            waiting = range(self._next, len(self._calls))
            self._next = len(self._calls)
            finished, self._finished = self._finished, []
        self._deliver(finished)
        for index in waiting:
            _WORKERS.submit(functools.partial(self._alone, index))

    def _post(self, results: list[_Result]) -> None:
        if not results:  # the loop took them all when it spread the calls out
            return
        # RuntimeError: the loop is gone, the request finished without waiting for us.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._deliver, results)

    def _deliver(self, results: list[_Result]) -> None:
        for index, error, value in results:
            future = self.futures[index]
            if future.done():  # given up on at its deadline
                continue
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)
        if self._timer is not None and all(future.done() for future in self.futures):
            self._timer.cancel()


def _candidates(raw: object) -> list[Candidate]:
    """A strategy's output as candidates; anything else breaks the contract."""
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
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "candidate"
        raise _ContractError(f"malformed candidate #{position}: {where}: {first['msg']}") from None


async def _within(pending: asyncio.Future[object], seconds: float) -> object:
    """The strategy's result, or TimeoutError after `seconds`. Unlike `asyncio.wait_for`,
    this does not wait for the cancelled strategy to stop: one that ignores its
    cancellation is abandoned, as a hung plain strategy is.
    """
    done, _ = await asyncio.wait((pending,), timeout=seconds)
    if not done:
        pending.cancel()
        pending.add_done_callback(_discard_outcome)
        raise TimeoutError
    return pending.result()


def _discard_outcome(future: asyncio.Future[object]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so that asyncio does not report it as lost


def _is_async(plan: PlannedRun) -> bool:
    return inspect.iscoroutinefunction(plan.registered.strategy.retrieve)


class StrategyExecutor:
    """Runs planned strategies concurrently under per-strategy and global deadlines."""

    async def run(
        self,
        plans: Sequence[PlannedRun],
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
    ) -> list[RunOutcome]:
        """One outcome per plan, in plan order."""

        def call(plan: PlannedRun) -> Callable[[], object]:
            strategy = plan.registered.strategy
            return lambda: strategy.retrieve(request, backends, plan.allocated_tokens)

        plain = [plan for plan in plans if not _is_async(plan)]
        batch = _PlainBatch(asyncio.get_running_loop(), [call(plan) for plan in plain])
        arriving = iter(batch.futures)
        runs = [
            self._run_one(
                plan,
                request,
                backends,
                global_deadline_ms,
                None if _is_async(plan) else next(arriving),
            )
            for plan in plans
        ]
        return list(await asyncio.gather(*runs))

    async def _run_one(
        self,
        plan: PlannedRun,
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
        plain_result: asyncio.Future[object] | None,
    ) -> RunOutcome:
        """`plain_result` is where a plain strategy's result arrives; None for async ones."""
        strategy = plan.registered.strategy
        deadline_ms = min(plan.deadline_ms, global_deadline_ms)
        started = time.perf_counter()

        def outcome(
            status: StrategyStatus,
            reason: str,
            proposed: int = 0,
            candidates: Sequence[Candidate] = (),
        ) -> RunOutcome:
            report = StrategyReport(
                name=strategy.name,
                plugin=plan.registered.plugin.label,
                status=status,
                reason=reason,
                confidence=plan.confidence,
                allocated_tokens=plan.allocated_tokens,
                proposed=proposed,
                elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
            )
            return RunOutcome(report, tuple(candidates))

        try:
            if plain_result is None:
                pending: asyncio.Future[object] = asyncio.ensure_future(
                    cast(Any, strategy.retrieve(request, backends, plan.allocated_tokens))
                )
            else:
                pending = plain_result
            raw = await _within(pending, deadline_ms / 1000)
            if inspect.isawaitable(raw):
                raise _ContractError("retrieve() returned an awaitable from a plain method")
            candidates = _candidates(raw)
        except TimeoutError:
            return outcome("timeout", f"no answer within its deadline of {deadline_ms} ms")
        except _ContractError as exc:
            return outcome("error", str(exc))
        except Exception as exc:  # a plugin's failure is reported, never raised
            return outcome("error", f"{type(exc).__name__}: {exc}")
        return outcome("ok", "", len(candidates), candidates)
