"""Planning: which strategies run for a request, and with what share of the budget.

The rules, in the order the planner applies them:

1. A request that names a strategy nobody registered is an error that lists the known ones.
2. Only the strategies the request names run (all, when it names none). Of those, one
   disabled in config, or needing a capability the store does not offer, is `skipped`
   with that reason.
3. The rest are asked `can_handle` (by the executor, inside the request's deadline, which
   starts here; a strategy the executor quarantined is not asked, and is `skipped`,
   saying so). One that fails or runs out of time is reported so; one that answers 0, or
   whose weight (the request's, else the configured one, else the strategy's own
   `default_weight`, else 1) is 0, is `skipped`. Those that have a `prepare` method
   are given it first, on the same worker, up to half the request's deadline
   (`Preparing`): one-time work (the graph's names, half a second at 100k nodes in a new
   process) that no `can_handle` window must hold, or the same request would be answered
   with or without the strategy as the machine is quick or slow.
4. The allocator shares the budget left after the output's frame among the rest, by
   weight, quality and confidence, within each one's floor and cap.
5. Each planned run carries its own deadline (`[strategies.NAME] deadline_ms`, else the
   executor's) and the end of the request's deadline; its first answer is due, at the
   latest, before the last `[executor] ask_again_share` of the request's deadline, which
   is kept for rule 6 (a strategy that hung until the request's end left no time to give
   what it was allotted to those that delivered).
6. Once the strategies answered and their candidates were accepted, what a strategy
   that failed (`error`), timed out, or had every candidate rejected was allotted returns
   to those that delivered (status `ok`, candidates accepted, none rejected): the
   allocator shares it among them as in rule 4, on top of their shares and within their
   caps. Each whose share grew is asked again with it while the request's deadline lasts
   (`returned`): a strategy proposes for its allocation, so the tokens returned are
   filled only if it is asked for more.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..config import Settings, StrategySettings
from ..contract.capabilities import Backends
from ..core.errors import ContextpipeError
from ..core.models import ContextRequest, StrategyReport, StrategyStatus
from ..plugins import RegisteredStrategy, StrategyRegistry
from .budget import AllocationRequest, BudgetAllocator
from .executor import PlannedRun, StrategyExecutor


@dataclass(frozen=True)
class Plan:
    """The strategies that run, and reports for those that do not; the budget the runs
    share (after the output's frame) and their claims on it, by name.
    """

    runs: list[PlannedRun]
    skipped: list[StrategyReport]
    usable: int
    claims: Mapping[str, AllocationRequest]


@dataclass(frozen=True)
class Returned:
    """Rule 6: the strategies whose allotment returned, and the runs that are asked again
    with a larger share.
    """

    by: tuple[str, ...]
    runs: list[PlannedRun]


@dataclass(frozen=True)
class _Eligible:
    registered: RegisteredStrategy
    config: StrategySettings
    weight: float
    confidence: float = 0.0


class Planner:
    """Plans requests for the strategies registered at the time (see the module docstring)."""

    def __init__(
        self, settings: Settings, registry: StrategyRegistry, executor: StrategyExecutor
    ) -> None:
        self._settings = settings
        self._registry = registry
        self._executor = executor
        self._allocator = BudgetAllocator()

    async def plan(
        self,
        request: ContextRequest,
        backends: Backends,
        frame_tokens: int,
        deadline_ms: int,
        nothing_indexed: bool,
    ) -> Plan:
        """The plan for `request`, given what `backends` offer and the tokens the output's
        frame takes; `nothing_indexed` explains a missing capability.
        """
        started = time.perf_counter()
        request_ends = started + deadline_ms / 1000
        answer_by = started + (1 - self._settings.executor.ask_again_share) * deadline_ms / 1000
        self._check_names(request)
        eligible, skipped = self._eligible(request, backends, nothing_indexed)
        strategies = [item.registered.strategy for item in eligible]
        answers = await self._executor.confidences(strategies, request, backends, deadline_ms)
        confident: list[_Eligible] = []
        for item, answer in zip(eligible, answers, strict=True):
            registered = item.registered
            if answer.status != "ok":
                status, reason = answer.status, answer.reason
                skipped.append(_skipped(registered, status, reason, elapsed_ms=answer.elapsed_ms))
            elif answer.value == 0.0:
                reason = "can_handle returned 0 for this request"
                skipped.append(_skipped(registered, "skipped", reason))
            elif item.weight == 0.0:
                skipped.append(_skipped(registered, "skipped", "weight is 0", answer.value))
            else:
                confident.append(_Eligible(registered, item.config, item.weight, answer.value))
        usable = max(0, request.budget - frame_tokens)
        claims = {
            item.registered.strategy.name: AllocationRequest(
                name=item.registered.strategy.name,
                weight=item.weight,
                quality=item.registered.strategy.quality,
                confidence=item.confidence,
                floor_tokens=item.config.floor_tokens,
                cap_fraction=item.config.cap_fraction,
            )
            for item in confident
        }
        shares = self._allocator.allocate(usable, list(claims.values()))
        default_deadline = self._settings.executor.strategy_deadline_ms
        runs = [
            PlannedRun(
                registered=item.registered,
                confidence=item.confidence,
                weight=item.weight,
                allocated_tokens=shares[item.registered.strategy.name],
                deadline_ms=item.config.deadline_ms or default_deadline,
                request_ends=request_ends,
                answer_by=answer_by,
            )
            for item in confident
        ]
        return Plan(runs, skipped, usable, claims)

    def returned(
        self, plan: Plan, reports: Sequence[StrategyReport], taken: Mapping[str, int]
    ) -> Returned:
        """Rule 6, given each run's report after acceptance and how many of its candidates
        were accepted, by name.
        """
        answered = {report.name: report for report in reports}

        def failed(run: PlannedRun) -> bool:
            report = answered[run.name]
            return report.status in ("error", "timeout") or (
                report.rejected > 0 and not taken.get(run.name)
            )

        def delivered(run: PlannedRun) -> bool:
            report = answered[run.name]
            return report.status == "ok" and report.rejected == 0 and bool(taken.get(run.name))

        back = [run for run in plan.runs if failed(run)]
        given = [run for run in plan.runs if delivered(run)]
        claims = [
            _headroom(plan.claims[run.name], plan.usable, run.allocated_tokens) for run in given
        ]
        more = self._allocator.allocate(sum(run.allocated_tokens for run in back), claims)
        now = time.perf_counter()
        again = [
            replace(
                run,
                allocated_tokens=run.allocated_tokens + more[run.name],
                answer_by=run.request_ends,
            )
            for run in given
            if more[run.name] > 0 and run.request_ends > now
        ]
        return Returned(tuple(run.name for run in back), again)

    def _check_names(self, request: ContextRequest) -> None:
        if not request.strategies:
            return
        known = set(self._registry.strategies)
        unknown = sorted(set(request.strategies) - known)
        if unknown:
            listed = ", ".join(sorted(known)) or "none"
            raise ContextpipeError(
                f"unknown strategy {unknown[0]!r} in request; registered: {listed}"
            )

    def _eligible(
        self,
        request: ContextRequest,
        backends: Backends,
        nothing_indexed: bool,
    ) -> tuple[list[_Eligible], list[StrategyReport]]:
        """Rule 2: the wanted strategies that are enabled and have what they need, and
        reports for the others.
        """
        skipped: list[StrategyReport] = []
        wanted = request.strategies
        available = backends.available()
        eligible: list[_Eligible] = []
        strategies = self._registry.strategies
        for registered in (strategies[name] for name in sorted(strategies)):
            strategy = registered.strategy
            if wanted and strategy.name not in wanted:
                continue
            config = self._settings.strategy(strategy.name)
            if not config.enabled:
                skipped.append(_skipped(registered, "skipped", "disabled in config"))
                continue
            missing = sorted(strategy.required_backends - available)
            if missing:
                reason = f"needs backend {', '.join(missing)}, which the store lacks" + (
                    " (nothing indexed yet)" if nothing_indexed else ""
                )
                explained = [backends.reasons[name] for name in missing if name in backends.reasons]
                if explained:
                    reason = f"needs backend {', '.join(missing)}: {'; '.join(explained)}"
                skipped.append(_skipped(registered, "skipped", reason))
                continue
            eligible.append(_Eligible(registered, config, _weight(registered, config, request)))
        return eligible, skipped


def _headroom(claim: AllocationRequest, usable: int, share: int) -> AllocationRequest:
    """Rule 6: a claim on what others returned, up to its cap (its floor is met)."""
    return replace(claim, floor_tokens=0, cap_fraction=1.0, cap_tokens=claim.cap(usable) - share)


def _weight(
    registered: RegisteredStrategy, config: StrategySettings, request: ContextRequest
) -> float:
    """The request's weight, else the configured one, else the strategy's default."""
    configured = registered.default_weight if config.weight is None else config.weight
    name = registered.strategy.name
    if request.strategies and (override := request.strategies.get(name)) is not None:
        return override.weight if override.weight is not None else configured
    return configured


def _skipped(
    registered: RegisteredStrategy,
    status: StrategyStatus,
    reason: str,
    confidence: float = 0.0,
    elapsed_ms: float = 0.0,
) -> StrategyReport:
    """The report of a strategy that does not run for this request."""
    return StrategyReport(
        name=registered.strategy.name,
        plugin=registered.plugin.label,
        status=status,
        reason=reason,
        confidence=confidence,
        elapsed_ms=elapsed_ms,
    )
