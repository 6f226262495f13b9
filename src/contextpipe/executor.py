"""StrategyExecutor: ask the strategies whether they can handle a request, then run them
concurrently, each isolated and under its deadline.

No plugin code runs on the request's event loop, which only waits and so can give up on
anything at its deadline. Plain methods (`can_handle`, a plain `retrieve`) run on daemon
worker threads (see `_PlainBatch`); an `async` `retrieve` runs on an event loop of its own
strategy, on a daemon thread of its own (see `_OwnLoop`), so a strategy that blocks its
loop (`time.sleep` in async code) holds up only itself. That its answer is a list of
candidates is also checked there, within its deadline; what each candidate may be, and
how much of the list is packed first, is `acceptance`'s business. Whatever a strategy does
(raise, hang, block, ignore its cancellation, return the wrong types) becomes a
`StrategyReport`; it never fails the request, which answers within its deadline plus the
time acceptance, fusion and packing take.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import math
import queue
import reprlib
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from .models import Candidate, ContextRequest, StrategyReport, StrategyStatus
from .registry import RegisteredStrategy
from .storage import Backends
from .strategy import ContextStrategy


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


@dataclass(frozen=True)
class RunOutcome:
    """A strategy's report and its candidates, best first, as it returned them."""

    report: StrategyReport
    candidates: tuple[Candidate, ...] = ()


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


def _can_handle_window_ms(deadline_ms: int) -> int:
    floor = min(CAN_HANDLE_MIN_MS, deadline_ms // 2)
    return max(floor, round(deadline_ms * CAN_HANDLE_SHARE))


class _ContractError(Exception):
    """The strategy returned something the contract does not allow."""


class _PluginError(Exception):
    """A strategy method raised. The message is made where the method ran: making it runs
    the plugin's code (`__str__`), which may raise or hang too.
    """


#: What a strategy method may raise that is reported, not passed on: `sys.exit()` in a
#: plugin ends neither the request nor the process.
_RAISED = (Exception, SystemExit)


def _described(exc: BaseException) -> str:
    """`Type: message`, or just the type when the message cannot be made."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return f"{type(exc).__name__} (its message could not be read)"


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
    """A request's calls of plain strategy methods (`can_handle`, a plain `retrieve` and the
    check of its answer) on daemon workers, with one future each.

    Waking a thread costs more than an instant strategy, and on a busy machine a woken
    thread may resume on a cold CPU. So one worker runs the calls one after another and
    wakes the loop once, with every result. If it has not finished after `_SPREAD_AFTER_S`,
    the loop delivers the results it has and hands the calls it has not started to workers
    of their own: a slow or hung strategy holds up no other. `started` says when each call
    began on its worker (`time.perf_counter()`), None before.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, calls: Sequence[Callable[[], object]]):
        self._loop = loop
        self._calls = list(calls)
        self.futures: list[asyncio.Future[object]] = [loop.create_future() for _ in calls]
        self.started: list[float | None] = [None] * len(self._calls)
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
        self.started[index] = time.perf_counter()
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


#: A strategy's answer, checked to be a list of candidates.
_Accepted = list[Candidate]


class _OwnLoop:
    """An event loop on a daemon thread of its own, for one async strategy, kept as long as
    its executor. A strategy that blocks it (a blocking call in async code) holds up only
    itself, and what it binds to its loop (a client session, say) stays usable from one
    request to the next.
    """

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = strategy  # holds on to its id(), the key of this loop
        self.loop = asyncio.new_event_loop()
        thread = threading.Thread(target=self._serve, name=f"contextpipe-async-{strategy.name}")
        thread.daemon = True
        thread.start()

    def _serve(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        loop.run_forever()
        # Stopped: its executor closed. Cancel what is left and let it finish (a strategy
        # that ignores its cancellation keeps this daemon thread until it is done).
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left))
        loop.close()

    def start(self, call: Callable[[], Awaitable[_Accepted]]) -> asyncio.Future[_Accepted]:
        """Run `call()` on this loop; its outcome arrives on the caller's loop."""

        async def awaited() -> _Accepted:
            return await call()  # the coroutine is created, too, on this loop

        started = asyncio.run_coroutine_threadsafe(awaited(), self.loop)
        return asyncio.wrap_future(started)

    def blocked(self) -> bool:
        """Whether one of its tasks is running right now. At a deadline: the strategy is
        holding its loop instead of waiting on it.
        """
        return asyncio.current_task(self.loop) is not None

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)


def _stop_loops(own_loops: dict[int, _OwnLoop]) -> None:
    for own in own_loops.values():
        own.stop()
    own_loops.clear()


class _Call:
    """One strategy's `retrieve` for one request and the check of what it returned, where
    they run: on a worker, or on the strategy's own loop. Both run within the deadline;
    `answered` tells a timeout while its answer was checked from one while it was at work.
    """

    def __init__(self, plan: PlannedRun, request: ContextRequest, backends: Backends) -> None:
        self.plan = plan
        self.strategy = plan.registered.strategy
        self.is_async = inspect.iscoroutinefunction(self.strategy.retrieve)
        self._request = request
        self._backends = backends
        self.answered = False

    def _retrieve(self) -> object:
        return self.strategy.retrieve(self._request, self._backends, self.plan.allocated_tokens)

    def _check(self, raw: object) -> _Accepted:
        self.answered = True
        return _candidates(raw)

    def plain(self) -> _Accepted:
        try:
            raw = self._retrieve()
            if inspect.isawaitable(raw):
                if inspect.iscoroutine(raw):
                    raw.close()  # never to be awaited: no "never awaited" warning later
                raise _ContractError("retrieve() returned an awaitable from a plain method")
            return self._check(raw)
        except _ContractError:
            raise
        except _RAISED as exc:
            raise _PluginError(_described(exc)) from None

    async def awaited(self) -> _Accepted:
        try:
            return self._check(await cast(Awaitable[object], self._retrieve()))
        except _ContractError:
            raise
        except _RAISED as exc:
            raise _PluginError(_described(exc)) from None


def _confidence(strategy: ContextStrategy, request: ContextRequest, backends: Backends) -> float:
    """On a worker: `can_handle`'s answer as a float (converting it runs plugin code too)."""
    try:
        answer: object = strategy.can_handle(request, backends)
    except _RAISED as exc:
        raise _PluginError(f"can_handle raised {_described(exc)}") from None
    try:
        return float(cast(Any, answer))
    except (TypeError, ValueError):
        raise _ContractError(
            f"can_handle returned {reprlib.repr(answer)}, expected a value in [0, 1]"
        ) from None
    except _RAISED as exc:
        raise _PluginError(f"can_handle's answer raised {_described(exc)}") from None


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


class StrategyExecutor:
    """Asks strategies whether they can handle a request, and runs the planned ones
    concurrently under per-strategy and global deadlines.
    """

    def __init__(self) -> None:
        self._own_loops: dict[int, _OwnLoop] = {}  # by id() of the async strategy
        self._lock = threading.Lock()
        self._close = weakref.finalize(self, _stop_loops, self._own_loops)

    def close(self) -> None:
        """Stop the event loops of async strategies (done, too, when it is collected)."""
        self._close()

    def _own_loop(self, strategy: ContextStrategy) -> _OwnLoop:
        own = self._own_loops.get(id(strategy))
        if own is None:
            with self._lock:
                own = self._own_loops.get(id(strategy))
                if own is None:
                    own = self._own_loops[id(strategy)] = _OwnLoop(strategy)
        return own

    async def confidences(
        self,
        strategies: Sequence[ContextStrategy],
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
    ) -> list[Confidence]:
        """Each strategy's `can_handle`, in order. They run on workers; one that has run
        for a tenth of the request's deadline (at least 100 ms, at most half of it) without
        answering counts as declining, with status `timeout`. The time a call waits for a
        worker to start it is not held against it, up to half the request's deadline.
        """
        if not strategies:
            return []
        window = _can_handle_window_ms(global_deadline_ms) / 1000
        calls = [functools.partial(_confidence, s, request, backends) for s in strategies]
        batch = _PlainBatch(asyncio.get_running_loop(), calls)
        # However long calls wait for a worker, half the deadline is left for `retrieve`.
        give_up = time.perf_counter() + global_deadline_ms / 2000
        while waiting := [i for i, future in enumerate(batch.futures) if not future.done()]:
            now = time.perf_counter()
            # By then each has run for the whole window (one not started yet is given the
            # window from now, and looked at again).
            horizon = min(give_up, max((batch.started[i] or now) + window for i in waiting))
            if horizon <= now:
                break
            await asyncio.wait([batch.futures[i] for i in waiting], timeout=horizon - now)
        now = time.perf_counter()
        return [
            _answer(future, round(window * 1000), round((now - (started or now)) * 1000, 3))
            for future, started in zip(batch.futures, batch.started, strict=True)
        ]

    async def run(
        self,
        plans: Sequence[PlannedRun],
        request: ContextRequest,
        backends: Backends,
        global_deadline_ms: int,
    ) -> list[RunOutcome]:
        """One outcome per plan, in plan order."""
        calls = [_Call(plan, request, backends) for plan in plans]
        batch = _PlainBatch(asyncio.get_running_loop(), [c.plain for c in calls if not c.is_async])
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

        seconds = max(0.0, min(deadline_ms / 1000, plan.request_ends - started))
        try:
            candidates = cast(list[Candidate], await _within(pending, seconds))
        except TimeoutError:
            return outcome("timeout", self._late(call, deadline_ms))
        except (_ContractError, _PluginError) as exc:  # their message is ours
            return outcome("error", str(exc))
        except Exception as exc:  # never raised: its loop closed under it, say
            return outcome("error", _described(exc))
        return outcome("ok", "", len(candidates), candidates)

    def _late(self, call: _Call, deadline_ms: int) -> str:
        """Why a strategy timed out, as far as can be told."""
        if call.answered:
            return f"its answer could not be checked within its deadline of {deadline_ms} ms"
        reason = f"no answer within its deadline of {deadline_ms} ms"
        if call.is_async and self._own_loop(call.strategy).blocked():
            return f"{reason}: it blocked its event loop (a blocking call in async code)"
        return reason
