"""Pipeline: the one entry point every interface (Python, CLI, services) goes through.

pipeline = Pipeline.open()                       # config.toml and .contextpipe/ of cwd
pipeline.index(["docs/"])
context = pipeline.assemble("how is the budget split?", budget=1200)
print(context.text)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .acceptance import CandidateChecks
from .backends import Backends, VariantLookup
from .budget import AllocationRequest, BudgetAllocator, check_budget
from .config import LoadedSettings, StrategySettings, load_settings
from .errors import ConfigError, ContextpipeError
from .executor import PlannedRun, RunOutcome, StrategyExecutor
from .fusion import FusedItem, RankedList, fuse
from .ingest.indexer import (
    ForgetSummary,
    IndexProgress,
    IndexSummary,
    IngestLimits,
    forget_root,
    index_folder,
)
from .logs import configure_logging, is_configured, logger
from .models import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    DroppedList,
    DroppedRow,
    StrategyReport,
    StrategyStatus,
    result_fragments,
)
from .packing import Packed, Packer, PackingCache, PackingPolicy
from .registry import PluginInfo, RegisteredStrategy, StrategyRegistry
from .rendering import Renderer, renderer_for
from .store.embedded import EmbeddedStore
from .tokenizers import Tokenizer, get_tokenizer


class Pipeline:
    """Index sources and assemble budgeted, cited context from them."""

    def __init__(
        self, loaded: LoadedSettings, store: EmbeddedStore, registry: StrategyRegistry
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.store = store
        self.registry = registry
        self._allocator = BudgetAllocator()
        self._executor = StrategyExecutor()
        self._packing_cache = PackingCache()
        self._checks = CandidateChecks()
        # One event loop per calling thread, reused: setting one up and tearing it down
        # costs a good part of a millisecond, as much as fusing hundreds of candidates.
        self._loops: dict[int, asyncio.AbstractEventLoop] = {}

    @classmethod
    def open(
        cls,
        store: str | Path | None = None,
        config: str | Path | None = None,
        *,
        project_dir: str | Path | None = None,
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Pipeline:
        """Load settings (config file, `CONTEXTPIPE_*`, `overrides` as dotted keys), open
        the store and discover strategy plugins.
        """
        if not is_configured():
            configure_logging()
        settings_overrides = dict(overrides or {})
        if store is not None:
            settings_overrides["store.path"] = str(Path(store).resolve())
        loaded = load_settings(
            Path(project_dir) if project_dir else None,
            Path(config) if config else None,
            settings_overrides,
            environ,
        )
        try:
            registry = StrategyRegistry.discover(loaded.settings, environ)
        except ConfigError as exc:  # a plugin rejected its options: name file and line
            raise loaded.located(exc) from None
        not_loaded = [f"{p.name} ({p.status})" for p in registry.plugins if p.status != "ok"]
        for name, warning in loaded.unknown_strategies(registry.strategies, not_loaded):
            logger.warning("unknown strategy", strategy=name, message=warning)
        return cls(loaded, EmbeddedStore(loaded.store_path), registry)

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin found, including broken and disabled ones."""
        return list(self.registry.plugins)

    @property
    def strategies(self) -> list[RegisteredStrategy]:
        """Strategies that loaded, by name."""
        return [self.registry.strategies[name] for name in sorted(self.registry.strategies)]

    @property
    def tokenizer(self) -> Tokenizer:
        """The configured tokenizer."""
        return get_tokenizer(self.settings.tokenizer.name)

    @property
    def ingest_limits(self) -> IngestLimits:
        """What `index` reads and how it cuts it, from `[ingest]`."""
        return IngestLimits.from_settings(self.settings.ingest)

    def index_roots(self, paths: Iterable[str | Path]) -> list[Path]:
        """The roots `index(paths)` brings up to date: each path resolved (a folder, or
        exactly one file); a path that does not exist is an error.
        """
        roots: list[Path] = []
        for raw in paths:
            root = Path(raw).resolve()
            if not root.exists():
                raise ContextpipeError(f"{raw}: no such file or directory")
            roots.append(root)
        return roots

    def index(
        self, paths: Iterable[str | Path], progress: IndexProgress | None = None
    ) -> list[IndexSummary]:
        """Bring the store up to date with each folder or file in `paths`: add and update
        what is there, remove what vanished from under it, leave other roots alone.
        """
        return [
            index_folder(
                self.store,
                root,
                self.loaded.project_dir,
                self.tokenizer,
                self.ingest_limits,
                progress,
            )
            for root in self.index_roots(paths)
        ]

    def forget(self, path: str | Path) -> ForgetSummary:
        """Remove every indexed file at or under `path` (which need not exist any more)
        from the store; an error when nothing is indexed there.
        """
        return forget_root(self.store, Path(path).resolve(), self.loaded.project_dir)

    def request(self, request_or_query: ContextRequest | str, **fields: Any) -> ContextRequest:
        """A validated request: a query string plus fields, or a request with fields replaced."""
        if isinstance(request_or_query, ContextRequest):
            data = request_or_query.model_dump()
            data.update({k: v for k, v in fields.items() if v is not None})
        else:
            data = {k: v for k, v in fields.items() if v is not None}
            data["query"] = request_or_query
        data.setdefault("budget", self.settings.budget.default)
        check_budget(int(data["budget"]))
        try:
            return ContextRequest.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(part) for part in error["loc"])
            raise ContextpipeError(
                f"request {key}: {error['msg']} (got {error['input']!r})"
            ) from None

    def assemble(self, request_or_query: ContextRequest | str, **fields: Any) -> AssembledContext:
        """Assemble context for a request (or a query with `budget=`, `output=`, ...)."""
        # Not asyncio.run: on Python 3.11/3.12 its teardown formats the whole result as a
        # string (restoring the SIGINT handler), which costs more than the packing itself.
        loop = self._loops.get(threading.get_ident())
        if loop is None or loop.is_closed():
            loop = self._loops[threading.get_ident()] = asyncio.new_event_loop()
        return loop.run_until_complete(self.aassemble(request_or_query, **fields))

    async def aassemble(
        self, request_or_query: ContextRequest | str, **fields: Any
    ) -> AssembledContext:
        """`assemble` for callers already inside an event loop."""
        started = time.perf_counter()
        request = self.request(request_or_query, **fields)
        tokenizer = get_tokenizer(request.tokenizer or self.settings.tokenizer.name)
        renderer = renderer_for(request.output)
        backends = self._backends()
        timings: dict[str, float] = {}
        packer = self._packer(renderer, tokenizer)

        deadline = request.deadline_ms or self.settings.executor.deadline_ms
        plans, skipped = await self._plan(request, backends, packer.frame_tokens(request), deadline)
        mark = time.perf_counter()
        outcomes = await self._executor.run(plans, request, backends, deadline)
        timings["strategies"] = _ms(mark)

        mark = time.perf_counter()
        fragments = backends.fragments
        variants = fragments.variants if fragments else _no_variants
        finished, ranked, left_out = self._accept(plans, outcomes, request, tokenizer, variants)
        timings["acceptance"] = _ms(mark)

        mark = time.perf_counter()
        fused = fuse(ranked, self.settings.fusion.rrf_k)
        timings["fusion"] = _ms(mark)

        mark = time.perf_counter()
        packed = packer.pack(fused, request, variants)
        timings["packing"] = _ms(mark)

        reports = _final_reports(finished + skipped, packed)
        context = AssembledContext(
            query=request.query,
            budget=request.budget,
            tokens_used=packed.tokens_used,
            tokenizer=tokenizer.name,
            output=request.output,
            text=packed.rendered.text,
            messages=packed.rendered.messages,
            fragments=result_fragments(
                {
                    **vars(selected.fragment),
                    "score": round(selected.item.score, 6),
                    "provenance": [vote._asdict() for vote in selected.item.provenance],
                }
                for selected in packed.selected
            ),
            strategies=reports,
            dropped=DroppedList(left_out) + packed.dropped + _copies(fused),
            elapsed_ms=_ms(started),
            timings_ms=timings,
        )
        for report in reports:
            logger.info(
                "strategy",
                strategy=report.name,
                status=report.status,
                reason=report.reason,
                elapsed_ms=report.elapsed_ms,
                proposed=report.proposed,
                rejected=report.rejected,
                accepted=report.accepted,
                allocated_tokens=report.allocated_tokens,
                used_tokens=report.used_tokens,
            )
        logger.info(
            "assembled",
            query=request.query,
            budget=request.budget,
            tokens_used=context.tokens_used,
            fragments=len(context.fragments),
            dropped=len(context.dropped),
            elapsed_ms=context.elapsed_ms,
        )
        return context

    def _accept(
        self,
        plans: Sequence[PlannedRun],
        outcomes: Sequence[RunOutcome],
        request: ContextRequest,
        tokenizer: Tokenizer,
        variants: VariantLookup,
    ) -> tuple[list[StrategyReport], list[RankedList], list[DroppedRow]]:
        """Each strategy's final report, its accepted candidates as fusion ranks them, and
        every candidate acceptance left out.
        """
        # Fusion weight: the configured weight times the strategy's quality prior.
        weights = {
            plan.registered.strategy.name: plan.weight * plan.registered.strategy.quality
            for plan in plans
        }
        reports: list[StrategyReport] = []
        ranked: list[RankedList] = []
        left_out: list[DroppedRow] = []
        for outcome in outcomes:
            if outcome.report.status != "ok":
                reports.append(outcome.report)
                continue
            report, candidates = outcome.report, outcome.candidates
            taken = self._checks.accept(report, candidates, tokenizer, request.budget, variants)
            reports.append(taken.report)
            left_out += taken.dropped
            name = report.name
            ranked.append(
                RankedList(
                    name, report.plugin, weights[name], taken.candidates, taken.ranks, taken.beyond
                )
            )
        return reports, ranked, left_out

    def _packer(self, renderer: Renderer, tokenizer: Tokenizer) -> Packer:
        policy = PackingPolicy.from_settings(self.settings.packing)
        return Packer(renderer, tokenizer, policy, self._packing_cache)

    def _backends(self) -> Backends:
        if not self.store.exists():
            return Backends()
        self.store.check()
        return Backends(fragments=self.store, text=self.store)

    @staticmethod
    def _weight(name: str, configured: float, request: ContextRequest) -> float:
        """The configured weight, unless the request sets another."""
        if request.strategies and (override := request.strategies.get(name)) is not None:
            return override.weight if override.weight is not None else configured
        return configured

    async def _plan(
        self,
        request: ContextRequest,
        backends: Backends,
        frame_tokens: int,
        deadline_ms: int,
    ) -> tuple[list[PlannedRun], list[StrategyReport]]:
        """Which strategies run, with what allocation; reports for those that do not. The
        request's deadline starts here: `can_handle` answers within it too.
        """
        request_ends = time.perf_counter() + deadline_ms / 1000
        wanted = request.strategies
        if wanted:
            unknown = sorted(set(wanted) - set(self.registry.strategies))
            if unknown:
                known = ", ".join(sorted(self.registry.strategies)) or "none"
                raise ContextpipeError(
                    f"unknown strategy {unknown[0]!r} in request; registered: {known}"
                )
        available = backends.available()
        skipped: list[StrategyReport] = []
        eligible: list[tuple[RegisteredStrategy, StrategySettings]] = []
        for registered in self.strategies:
            strategy = registered.strategy
            if wanted and strategy.name not in wanted:
                continue
            config = self.settings.strategy(strategy.name)
            if not config.enabled:
                skipped.append(_skipped(registered, "skipped", "disabled in config"))
                continue
            missing = sorted(strategy.required_backends - available)
            if missing:
                reason = f"needs backend {', '.join(missing)}, which the store lacks" + (
                    "" if self.store.exists() else " (nothing indexed yet)"
                )
                skipped.append(_skipped(registered, "skipped", reason))
                continue
            eligible.append((registered, config))

        answers = await self._executor.confidences(
            [registered.strategy for registered, _ in eligible], request, backends, deadline_ms
        )
        candidates: list[tuple[RegisteredStrategy, float, StrategySettings, float]] = []
        for (registered, config), answer in zip(eligible, answers, strict=True):
            confidence = answer.value
            weight = self._weight(registered.strategy.name, config.weight, request)
            if answer.status != "ok":
                skipped.append(
                    _skipped(registered, answer.status, answer.reason, elapsed_ms=answer.elapsed_ms)
                )
            elif confidence == 0.0:
                reason = "can_handle returned 0 for this request"
                skipped.append(_skipped(registered, "skipped", reason))
            elif weight == 0.0:
                skipped.append(_skipped(registered, "skipped", "weight is 0", confidence))
            else:
                candidates.append((registered, confidence, config, weight))

        usable = max(0, request.budget - frame_tokens)
        shares = self._allocator.allocate(
            usable,
            [
                AllocationRequest(
                    name=registered.strategy.name,
                    weight=weight,
                    quality=registered.strategy.quality,
                    confidence=confidence,
                    floor_tokens=config.floor_tokens,
                    cap_fraction=config.cap_fraction,
                )
                for registered, confidence, config, weight in candidates
            ],
        )
        executor = self.settings.executor
        plans = [
            PlannedRun(
                registered=registered,
                confidence=confidence,
                weight=weight,
                allocated_tokens=shares[registered.strategy.name],
                deadline_ms=config.deadline_ms or executor.strategy_deadline_ms,
                request_ends=request_ends,
            )
            for registered, confidence, config, weight in candidates
        ]
        return plans, skipped

    def close(self) -> None:
        """Release the store's connections, the event loops `assemble` kept and those of
        async strategies.
        """
        self.store.close()
        self._executor.close()
        for loop in list(self._loops.values()):
            if not loop.is_running():
                loop.close()
        self._loops.clear()


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


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


def _no_variants(uko_uri: str) -> Sequence[ContextFragment]:
    return ()


def _copies(fused: Sequence[FusedItem]) -> DroppedList:
    """The copies of a text, each listed once, pointing at the item that stands for them."""
    return DroppedList(
        (id_, uri, f"same text as {item.fragment.id} ({item.fragment.uko_uri})")
        for item in fused
        for id_, uri in item.copies
    )


def _final_reports(reports: Sequence[StrategyReport], packed: Packed) -> tuple[StrategyReport, ...]:
    """Reports with accepted counts and used tokens from what was packed, by name."""
    accepted: dict[str, int] = {}
    used: dict[str, int] = {}
    for selected in packed.selected:
        for vote in selected.item.provenance:
            accepted[vote.strategy] = accepted.get(vote.strategy, 0) + 1
            used[vote.strategy] = used.get(vote.strategy, 0) + selected.tokens
    return tuple(
        report.model_copy(
            update={
                "accepted": accepted.get(report.name, 0),
                "used_tokens": used.get(report.name, 0),
            }
        )
        for report in sorted(reports, key=lambda r: r.name)
    )
