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
    allocated_tokens: int
    deadline_ms: int


@dataclass(frozen=True)
class RunOutcome:
    """A strategy's report, the candidates accepted from it (best first), and those cut
    because they went beyond its allocation.
    """

    report: StrategyReport
    candidates: tuple[Candidate, ...]
    cut: tuple[Candidate, ...] = ()


class _ContractError(Exception):
    """The strategy returned something the contract does not allow."""


def _run_in_daemon_thread(call: Callable[[], object]) -> asyncio.Future[object]:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[object] = loop.create_future()

    def deliver(setter: Callable[[Any], None], value: object) -> None:
        if not future.done():
            setter(value)

    def work() -> None:
        try:
            result = call()
        except BaseException as exc:  # delivered to the awaiting side, which reports it
            outcome, setter = exc, future.set_exception
        else:
            outcome, setter = result, future.set_result
        # RuntimeError: the loop is gone, the request finished without waiting for us.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(deliver, setter, outcome)

    threading.Thread(target=work, name="contextpipe-strategy", daemon=True).start()
    return future


def _accept(raw: object, allocation: int) -> tuple[list[Candidate], list[Candidate]]:
    """Validate a strategy's output; split it into what fits its allocation and the rest."""
    if not isinstance(raw, list | tuple):
        raise _ContractError(
            f"retrieve() returned {type(raw).__name__}, expected a list of Candidate"
        )
    candidates: list[Candidate] = []
    for position, item in enumerate(cast(Sequence[object], raw), start=1):
        if isinstance(item, Candidate):
            candidates.append(item)
            continue
        try:
            candidates.append(Candidate.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "candidate"
            raise _ContractError(
                f"malformed candidate #{position}: {where}: {first['msg']}"
            ) from None
    kept: list[Candidate] = []
    cut: list[Candidate] = []
    spent: dict[str, int] = {}
    total = 0
    for candidate in candidates:
        fragment = candidate.fragment
        # Depth alternatives of one node are counted once, at their largest.
        extra = max(0, fragment.token_count - spent.get(fragment.uko_uri, 0))
        if total + extra > allocation:
            cut.append(candidate)
            continue
        spent[fragment.uko_uri] = spent.get(fragment.uko_uri, 0) + extra
        total += extra
        kept.append(candidate)
    return kept, cut


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
            cut: Sequence[Candidate] = (),
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
