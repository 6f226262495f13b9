"""StrategyExecutor: run strategies concurrently, each isolated and under its deadline.

Async strategies run on the event loop; plain ones each run in their own daemon thread, so
a strategy that hangs can be abandoned at its deadline without holding up the request or
the process's exit. Whatever a strategy does (raise, hang, return the wrong types, exceed
its allocation) becomes a `StrategyReport`; it never fails the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from .backends import Backends
from .models import Candidate, ContextFragment, ContextRequest, StrategyReport, StrategyStatus
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
    """A strategy's report, the candidates accepted from it (best first), and the fragments
    of those cut because they went beyond its allocation.
    """

    report: StrategyReport
    candidates: tuple[Candidate, ...]
    cut: tuple[ContextFragment, ...] = ()


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


def _run_in_daemon_thread(call: Callable[[], object]) -> asyncio.Future[object]:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[object] = loop.create_future()

    def deliver(setter: Callable[[Any], None], value: object) -> None:
        if not future.done():
            setter(value)

    def job() -> Callable[[], None]:
        try:
            result = call()
        except BaseException as exc:  # delivered to the awaiting side, which reports it
            outcome, setter = exc, future.set_exception
        else:
            outcome, setter = result, future.set_result

        def notify() -> None:
            # RuntimeError: the loop is gone, the request finished without waiting for us.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(deliver, setter, outcome)

        return notify

    _WORKERS.submit(job)
    return future


def _accept(raw: object, allocation: int) -> tuple[list[Candidate], list[ContextFragment]]:
    """Validate a strategy's output; split it into what fits its allocation and the rest."""
    if not isinstance(raw, list | tuple):
        raise _ContractError(
            f"retrieve() returned {type(raw).__name__}, expected a list of Candidate"
        )
    kept: list[Candidate] = []
    cut: list[ContextFragment] = []
    spent: dict[str, int] = {}
    total = 0
    for position, item in enumerate(cast(Sequence[object], raw), start=1):
        candidate = item if isinstance(item, Candidate) else _validated(item, position)
        fragment = candidate.fragment
        # Depth alternatives of one node are counted once, at their largest.
        before = spent.get(fragment.uko_uri, 0)
        extra = fragment.token_count - before
        if extra <= 0:
            kept.append(candidate)
        elif total + extra > allocation:
            cut.append(fragment)
        else:
            spent[fragment.uko_uri] = before + extra
            total += extra
            kept.append(candidate)
    return kept, cut


def _validated(item: object, position: int) -> Candidate:
    try:
        return Candidate.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "candidate"
        raise _ContractError(f"malformed candidate #{position}: {where}: {first['msg']}") from None


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
        return list(
            await asyncio.gather(
                *(self._run_one(plan, request, backends, global_deadline_ms) for plan in plans)
            )
        )

    async def _run_one(
        self, plan: PlannedRun, request: ContextRequest, backends: Backends, global_deadline_ms: int
    ) -> RunOutcome:
        strategy = plan.registered.strategy
        deadline_ms = min(plan.deadline_ms, global_deadline_ms)
        started = time.perf_counter()

        def outcome(
            status: StrategyStatus,
            reason: str,
            proposed: int = 0,
            accepted: Sequence[Candidate] = (),
            cut: Sequence[ContextFragment] = (),
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
            return RunOutcome(report, tuple(accepted), tuple(cut))

        def call() -> object:
            return strategy.retrieve(request, backends, plan.allocated_tokens)

        try:
            if inspect.iscoroutinefunction(strategy.retrieve):
                pending: asyncio.Future[object] = asyncio.ensure_future(
                    cast(Any, strategy.retrieve(request, backends, plan.allocated_tokens))
                )
            else:
                pending = _run_in_daemon_thread(call)
            raw = await asyncio.wait_for(pending, timeout=deadline_ms / 1000)
            if inspect.isawaitable(raw):
                raise _ContractError("retrieve() returned an awaitable from a plain method")
            accepted, cut = _accept(raw, plan.allocated_tokens)
            proposed = len(accepted) + len(cut)
        except TimeoutError:
            return outcome("timeout", f"no answer within its deadline of {deadline_ms} ms")
        except _ContractError as exc:
            return outcome("error", str(exc))
        except Exception as exc:  # a plugin's failure is reported, never raised
            return outcome("error", f"{type(exc).__name__}: {exc}")
        reason = (
            f"cut {len(cut)} candidates over its allocation of {plan.allocated_tokens} tokens"
            if cut
            else ""
        )
        return outcome("ok", reason, proposed, accepted, cut)
