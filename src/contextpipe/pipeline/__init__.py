"""Pipeline: the one entry point every interface (Python, CLI, services) goes through.

pipeline = Pipeline.open()                       # config.toml and .contextpipe/ of cwd
pipeline.index(["docs/"])
context = pipeline.assemble("how is the budget split?", budget=1200)
print(context.text)

A request runs plan -> run -> accept -> fuse -> pack -> report: the planner picks the
strategies and their shares, the executor runs them under deadlines, acceptance holds their
candidates to the contract, fusion merges them, the packer fills the budget, and the report
says what happened to everything. The store is reached through its protocols only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..assembly.acceptance import CandidateChecks
from ..assembly.budget import check_budget
from ..assembly.code_questions import source_first
from ..assembly.executor import PlannedRun, RetrievalMemo, RunOutcome, StrategyExecutor
from ..assembly.fusion import RankedList, fuse
from ..assembly.packing import Packer, PackingCache, PackingPolicy
from ..assembly.planning import Plan, Planner
from ..assembly.rendering import renderer_for
from ..assembly.reporting import assembled_context, log_assembly
from ..assembly.variants import RequestVariants
from ..config import (
    LoadedSettings,
    effective_items,
    load_settings,
)
from ..contract.capabilities import VECTORS, Backends, GraphView
from ..contract.records import CarriedMemory, MemoryItem, MemoryScope, StoreStats
from ..contract.store import Store
from ..core.chat import ChatContext, ChatRequest
from ..core.chunks import OptimizedContext, OptimizeRequest
from ..core.errors import (
    BudgetError,
    ConfigError,
    ContextpipeError,
    EmbedderError,
    StoreError,
    validation_problem,
)
from ..core.logs import configure_logging, is_configured, logger
from ..core.models import (
    AssembledContext,
    ContextRequest,
    DroppedRow,
    RequestScope,
    StrategyReport,
)
from ..plugins import (
    EmbedderRegistry,
    PluginInfo,
    RegisteredStrategy,
    StoreRegistry,
    StrategyRegistry,
    commented_default_config,
)
from ..text.tokens import Tokenizer, get_tokenizer, preload_tokenizer, warm_up_tokenizer
from ._host_memory import available_memory
from ._shared_search import with_shared_text
from .chat import chat_context, plan_chat, strategies_deadline, within
from .vectors import DISABLED, with_vectors, without_vectors

if TYPE_CHECKING:
    from ..contract.embedding import Embedder
    from ..ingest.embedding import EmbedProgress, EmbedSummary
    from ..ingest.indexer import ForgetSummary, IndexProgress, IndexSummary, IngestLimits


@dataclass(frozen=True)
class WarmUp:
    """What `Pipeline.warm_up` did, and the seconds each part took."""

    tokenizer: str
    tokenizer_seconds: float
    #: None when the store offers no graph (or holds no index yet).
    graph_seconds: float | None
    #: Bytes of the store's files read into the operating system's cache.
    store_bytes: int = 0
    store_seconds: float = 0.0


class Pipeline:
    """Index sources and assemble budgeted, cited context from them."""

    def __init__(
        self,
        loaded: LoadedSettings,
        store: Store,
        registry: StrategyRegistry,
        embedder: Embedder,
        memo: RetrievalMemo | None = None,
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.store = store
        self.registry = registry
        self.embedder = embedder
        self._executor = StrategyExecutor(memo)
        self._planner = Planner(self.settings, registry, self._executor)
        self._packing_cache = PackingCache()

    @classmethod
    def open(
        cls,
        store: str | Path | None = None,
        config: str | Path | None = None,
        *,
        project_dir: str | Path | None = None,
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        memo: RetrievalMemo | None = None,
    ) -> Pipeline:
        """Load settings (config file, `CONTEXTPIPE_*`, `overrides` as dotted keys), open
        the store of the configured backend and discover strategy plugins. With a `memo`,
        a strategy's answer to a request at an allocation it already answered is the one
        the memo kept (see `RetrievalMemo`).
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
        preload_tokenizer(loaded.settings.tokenizer.name)  # ready by the first request
        try:
            opened = StoreRegistry().open(loaded.settings, loaded.project_dir)
            embedder = EmbedderRegistry().embedder(loaded.settings)
            registry = StrategyRegistry.discover(loaded.settings, environ)
        except ConfigError as exc:  # a bad backend name or plugin option: name file and line
            raise loaded.located(exc) from None
        not_loaded = [f"{p.name} ({p.status})" for p in registry.plugins if p.status != "ok"]
        for name, warning in loaded.unknown_strategies(registry.strategies, not_loaded):
            logger.warning("unknown strategy", strategy=name, message=warning)
        return cls(loaded, opened, registry, embedder, memo)

    @staticmethod
    def effective_config(
        config: str | Path | None = None, store: str | Path | None = None
    ) -> list[tuple[str, Any, str]]:
        """Every effective setting as (dotted key, value, where it came from), without
        opening the store or loading plugins.
        """
        overrides = {"store.path": str(Path(store).resolve())} if store is not None else None
        loaded = load_settings(
            config_file=Path(config) if config else None, cli_overrides=overrides
        )
        return effective_items(loaded)

    @staticmethod
    def default_config() -> str:
        """The commented default config.toml, with the options of every installed strategy."""
        return commented_default_config()

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin found, including broken and disabled ones."""
        return list(self.registry.plugins)

    @property
    def strategies(self) -> list[RegisteredStrategy]:
        """Strategies that loaded, by name."""
        return [self.registry.strategies[name] for name in sorted(self.registry.strategies)]

    def strategy(self, name: str) -> RegisteredStrategy | None:
        """The loaded strategy called `name`, if there is one."""
        return self.registry.get(name)

    def strategy_rows(self) -> list[dict[str, Any]]:
        """Each strategy of each plugin (a plugin that failed to load as one row named
        `-`): `contextpipe strategies --format json` and `GET /v1/strategies`.
        """
        rows: list[dict[str, Any]] = []
        for plugin in self.plugins:
            for name in plugin.provides or ("-",):
                registered = self.strategy(name)
                strategy = registered.strategy if registered else None
                rows.append(
                    {
                        "strategy": name,
                        "plugin": plugin.name,
                        "distribution": plugin.distribution,
                        "version": plugin.version,
                        "status": plugin.status,
                        "quality": strategy.quality if strategy else None,
                        "needs": sorted(strategy.required_backends) if strategy else [],
                        "error": plugin.error,
                        "load_ms": plugin.load_ms,
                        "slow": plugin.slow,
                    }
                )
        return rows

    @property
    def tokenizer(self) -> Tokenizer:
        """The configured tokenizer."""
        return get_tokenizer(self.settings.tokenizer.name)

    @property
    def ingest_limits(self) -> IngestLimits:
        """What `index` reads and how it cuts it, from `[ingest]`."""
        from ..ingest.indexer import IngestLimits

        return IngestLimits.from_settings(self.settings.ingest)

    def index_roots(self, paths: Iterable[str | Path]) -> list[Path]:
        """The roots `index(paths)` brings up to date: each path resolved (a folder, or
        exactly one regular file); a path that does not exist, or is neither (a FIFO, a
        device), is an error.
        """
        roots: list[Path] = []
        for raw in paths:
            root = Path(raw).resolve()
            if not root.exists():
                raise ContextpipeError(f"{raw}: no such file or directory")
            if not (root.is_dir() or root.is_file()):
                raise ContextpipeError(
                    f"{raw}: not a regular file or a folder; index reads only those"
                )
            roots.append(root)
        return roots

    def index(
        self, paths: Iterable[str | Path], progress: IndexProgress | None = None
    ) -> list[IndexSummary]:
        """Bring the store up to date with each folder or file in `paths`: add and update
        what is there, remove what vanished from under it, leave other roots alone.
        """
        from ..ingest.indexer import index_folder

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

    def embed(self, progress: EmbedProgress | None = None) -> EmbedSummary:
        """Compute the vectors the store lacks with the configured embedder (after `index`;
        resumable: what was embedded stays when a run is cut short). An `EmbedderError`
        when the model is not installed or damaged, or embedding is disabled in config.
        """
        from ..ingest.embedding import embed_pending

        if not self.settings.embedding.enabled:
            raise EmbedderError(DISABLED)
        self.store.check()
        return embed_pending(
            self.store, self.embedder, self.settings.embedding.batch_size, progress
        )

    def forget(self, path: str | Path) -> ForgetSummary:
        """Remove every indexed file at or under `path` (which need not exist any more)
        from the store; an error when nothing is indexed there.
        """
        from ..ingest.indexer import forget_root

        return forget_root(self.store, Path(path).resolve(), self.loaded.project_dir)

    def remember(
        self,
        text: str,
        *,
        session: str | None = None,
        user: str | None = None,
        at: datetime | None = None,
        item_id: str | None = None,
        speaker: str = "",
    ) -> MemoryItem:
        """Keep a memory item for `session` or `user` (neither: every request may see it),
        said at `at` (default: now); see `ingest/memory.py` for its node, text and id.
        """
        from ..ingest.memory import memory_item, memory_scope

        scope, owner = memory_scope(session, user)
        item = memory_item(text, scope, owner, at or datetime.now(UTC), item_id, speaker)
        self.remember_all([item])
        return item

    def remember_all(self, items: Iterable[MemoryItem]) -> int:
        """Keep memory items, all in one write (all or none); how many. Their vectors come
        with the next `embed`, as a file's do.
        """
        from ..ingest.memory import remember_items

        neighbours = self.settings.memory.searched_neighbours
        return remember_items(self.store, self.tokenizer, items, neighbours)

    def import_conversation(
        self, path: str | Path, *, session: str | None = None, user: str | None = None
    ) -> list[MemoryItem]:
        """Keep each turn of a conversation file (a JSON list of turns with `id`,
        `speaker`, `time`, `text`) as a memory item that keeps its id.
        """
        from ..ingest.memory import memory_scope, read_conversation

        items = read_conversation(Path(path), *memory_scope(session, user))
        self.remember_all(items)
        return items

    def forget_memory(
        self,
        *,
        session: str | None = None,
        user: str | None = None,
        everything_global: bool = False,
        ids: Sequence[str] = (),
    ) -> int:
        """Forget the memory of one session, one user, or global memory (only the items
        `ids` names when given); how many went. Files are never touched.
        """
        named = [session is not None, user is not None, everything_global]
        if sum(named) != 1:
            raise ContextpipeError("name one session, one user, or global memory to forget")
        if session is not None or user is not None:
            from ..ingest.memory import memory_scope

            scope, owner = memory_scope(session, user)
        else:
            scope, owner = MemoryScope.GLOBAL, ""
        if not self.store.exists():
            return 0
        with self.store.writer() as writer:
            return writer.remove_memory(scope, owner, ids)

    def pin(self, target: str) -> None:
        """Pin a node URI, a path, a folder (ending in '/') or a glob of paths: the tiered
        strategy's hot tier holds it in every request.
        """
        if not target.strip():
            raise ContextpipeError("name a node URI, a path or a glob to pin")
        with self.store.writer() as writer:
            writer.pin(target)

    def unpin(self, target: str) -> bool:
        """Unpin a target `pin` pinned; whether it was pinned."""
        if not self.store.exists():
            return False
        with self.store.writer() as writer:
            return writer.unpin(target)

    def move_store_aside(self) -> str | None:
        """Keep the current index under another name (see `Store.move_aside`), so that the
        next `index` starts a new one; where it went, or None when there was none.
        """
        return self.store.move_aside()

    def carry_memory(self, previous: str) -> CarriedMemory:
        """Copy what no file can give back (memory items, pins, each session's access log)
        from the store `move_store_aside` moved to `previous` into the new one (see
        `Store.carry_memory`); what could not be read stays there, named in `left`.
        """
        return self.store.carry_memory(previous)

    def check(self) -> None:
        """Raise `StoreError`, saying what to run, unless the index exists and is whole."""
        self.store.check()

    def verify_store(self) -> str:
        """Check the whole store, reading everything (see `Store.verify`): what was
        checked, or a `StoreError` naming the damage found and what to run.
        """
        return self.store.verify()

    def stats(self) -> StoreStats:
        """How many files and fragments the store holds."""
        return self.store.stats()

    def graph(self) -> GraphView:
        """The store's resolved graph; a `StoreError` when nothing is indexed, the index is
        damaged, or the store offers no graph.
        """
        self.store.check()
        graph = self.store.backends().graph
        if graph is None:
            raise StoreError(f"{self.store.location}: this store offers no graph")
        return graph

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
            where, problem = validation_problem(exc)
            raise ContextpipeError(f"request {where}: {problem}") from None

    def assemble(self, request_or_query: ContextRequest | str, **fields: Any) -> AssembledContext:
        """Assemble context for a request (or a query with `budget=`, `output=`, ...)."""
        return asyncio.run(self.aassemble(request_or_query, **fields))

    async def aassemble(
        self, request_or_query: ContextRequest | str, **fields: Any
    ) -> AssembledContext:
        """`assemble` for callers already inside an event loop."""
        request = self.request(request_or_query, **fields)
        context, given = await self._assembled(request)
        given()
        return context

    async def _assembled(
        self, request: ContextRequest
    ) -> tuple[AssembledContext, Callable[[], None]]:
        """The context for `request`, and what to call once it is given to the caller: the
        tiered strategy's warm tier is what the session was given, not what was assembled.
        """
        started = time.perf_counter()
        tokenizer = get_tokenizer(request.tokenizer or self.settings.tokenizer.name)
        backends = self._backends(request.scope)
        variants = RequestVariants(backends.fragments, request.filters)
        checks = CandidateChecks(tokenizer, request.budget, variants)
        packer = self._packer(request, tokenizer, checks)
        timings: dict[str, float] = {}

        deadline = request.deadline_ms or self.settings.executor.deadline_ms
        frame = packer.frame_tokens(request)
        plan = await self._planner.plan(request, backends, frame, deadline, not self.store.exists())
        answers = await self._answers(plan, request, deadline, backends, checks, timings)
        finished = [answer.report for answer in answers]
        ranked = [answer.ranked for answer in answers if answer.ranked is not None]
        left_out = [row for answer in answers for row in answer.dropped]
        if self.store.exists():
            self.store.check()  # damage a strategy met fails the request, not just the strategy

        mark = time.perf_counter()
        fused = fuse(ranked, self.settings.fusion.rrf_k)
        if request.exclude:
            given = set(request.exclude)
            fused = [item for item in fused if item.fragment.id not in given]
        if request.prefer_source:
            fused = source_first(fused)
        timings["fusion"] = _ms(mark)

        mark = time.perf_counter()
        vectors = backends.vectors.vectors if backends.vectors is not None else None
        packed = packer.pack(fused, request, variants, vectors)
        timings["packing"] = _ms(mark)

        context = assembled_context(
            request, tokenizer, finished + plan.skipped, left_out, fused, packed, timings, started
        )
        log_assembly(context)
        sessions = backends.sessions if request.session is not None else None
        uris = [fragment.uko_uri for fragment in context.fragments]
        return context, (lambda: sessions.record_use(uris)) if sessions else _nothing

    def assemble_chat(self, request: ChatRequest | Mapping[str, Any]) -> ChatContext:
        """A model's conversation with context before it, within the model's window and the
        request's deadline (the rules are in `chat`). Bad input is a `ContextpipeError`;
        nothing else raises: a failed or late assembly leaves the messages as they were,
        with the reason in `metadata.fallback_reason`.
        """
        started = time.perf_counter()
        chat = _validated_chat(request)
        plan = plan_chat(self.settings, chat)
        if plan.budget <= 0:
            return chat_context(chat, plan, None, "no_room", _ms(started))
        inner = self.request(
            plan.query,
            budget=plan.budget,
            tokenizer=plan.tokenizer.name,
            session=chat.session,
            user=chat.user,
            deadline_ms=strategies_deadline(plan),
        )
        context, reason = None, ""
        try:
            left = plan.deadline_ms / 1000 - (time.perf_counter() - started)
            context, given = within(left, lambda: asyncio.run(self._assembled(inner)))
            given()  # a late context is not given, so not recorded
        except TimeoutError:
            reason = "deadline"
        except StoreError:
            reason = "store_unavailable"
        except BudgetError:
            reason = "no_room"
        except Exception as exc:  # a chat caller gets its messages back, whatever broke
            error = f"{type(exc).__name__}: {exc}"
            logger.warning("chat assembly failed", request_id=plan.request_id, error=error)
            reason = f"error:{type(exc).__name__}"
        return chat_context(chat, plan, context, reason, _ms(started))

    def chat_unchanged(self, request: ChatRequest | Mapping[str, Any], reason: str) -> ChatContext:
        """A chat request's messages as they came, with `reason` as the fallback: what a
        service answers a request it cannot take on (busy, or its deadline passed while it
        waited for a turn).
        """
        chat = _validated_chat(request)
        return chat_context(chat, plan_chat(self.settings, chat), None, reason, 0.0)

    def optimize(self, request: OptimizeRequest | Mapping[str, Any]) -> OptimizedContext:
        """A caller's own chunks, deduplicated, one per topic, diversified and packed into
        the request's budget (the rules are in `assembly.optimizing`); chunks and a query
        without vectors are embedded with the configured embedder. Bad input is a
        `ContextpipeError` naming the chunk and field.
        """
        request = _validated(OptimizeRequest, request, "optimize request")
        if problem := request.problem():
            raise ContextpipeError(f"optimize request {problem}")
        from .chunks import optimized  # numpy and scipy: on the first optimize request only

        tokenizer = get_tokenizer(request.tokenizer or self.settings.tokenizer.name)
        enabled = self.settings.embedding.enabled
        return optimized(request, self.embedder, enabled, tokenizer, self._packing_cache)

    def _backends(self, scope: RequestScope) -> Backends:
        """The store's capabilities for one request, bound to its scope, with vector search
        when an enabled strategy needs it (loading the embedding model is not free).
        """
        backends = with_shared_text(self.store.backends(scope))
        if not self._wants_vectors():
            return backends
        if not self.settings.embedding.enabled:
            return without_vectors(backends, DISABLED)
        return with_vectors(backends, self.store, self.embedder, scope)

    def _wants_vectors(self) -> bool:
        """Whether an enabled strategy needs vector search."""
        return any(
            VECTORS in registered.strategy.required_backends
            and self.settings.strategy(name).enabled
            for name, registered in self.registry.strategies.items()
        )

    async def _answers(
        self,
        plan: Plan,
        request: ContextRequest,
        deadline: int,
        backends: Backends,
        checks: CandidateChecks,
        timings: dict[str, float],
    ) -> list[_Answer]:
        """Each planned strategy's answer: run, then accepted; then, when some failed, those
        that delivered asked again with what the failed ones returned (planning's rule 6).
        A second answer replaces the first when it is `ok`; else the first stands.
        """
        mark = time.perf_counter()
        outcomes = await self._executor.run(plan.runs, request, backends, deadline)
        timings["strategies"] = _ms(mark)
        mark = time.perf_counter()
        answers = self._accept(plan.runs, outcomes, checks)
        timings["acceptance"] = _ms(mark)
        taken = {answer.report.name: answer.taken for answer in answers}
        returned = self._planner.returned(plan, [answer.report for answer in answers], taken)
        if not returned.runs:
            return answers
        mark = time.perf_counter()
        outcomes = await self._executor.run(returned.runs, request, backends, deadline)
        timings["strategies"] += _ms(mark)
        mark = time.perf_counter()
        again = self._accept(returned.runs, outcomes, checks)
        timings["acceptance"] += _ms(mark)
        seconds = {answer.report.name: answer for answer in again}
        by = ", ".join(returned.by)
        return [
            _asked_again(answer, seconds[answer.report.name], by)
            if answer.report.name in seconds
            else answer
            for answer in answers
        ]

    def _accept(
        self,
        plans: Sequence[PlannedRun],
        outcomes: Sequence[RunOutcome],
        checks: CandidateChecks,
    ) -> list[_Answer]:
        """Each strategy's report, its accepted candidates as fusion ranks them, and every
        candidate acceptance left out.
        """
        # Fusion weight: the configured weight times the strategy's quality prior.
        weights = {
            plan.registered.strategy.name: plan.weight * plan.registered.strategy.quality
            for plan in plans
        }
        answers: list[_Answer] = []
        for outcome in outcomes:
            if outcome.report.status != "ok":
                answers.append(_Answer(outcome.report))
                continue
            report, candidates = outcome.report, outcome.candidates
            taken = checks.accept(report, candidates)
            name = report.name
            ranked = RankedList(
                name, report.plugin, weights[name], taken.candidates, taken.ranks, taken.beyond
            )
            answers.append(_Answer(taken.report, ranked, taken.dropped))
        return answers

    def _packer(
        self, request: ContextRequest, tokenizer: Tokenizer, checks: CandidateChecks
    ) -> Packer:
        """The packer of one request: `[packing]`, with the request's own MMR trade-off."""
        policy = PackingPolicy.from_settings(self.settings.packing)
        if request.mmr_lambda is not None:
            policy = replace(policy, mmr_lambda=request.mmr_lambda)
        renderer = renderer_for(request.output)
        # Acceptance counted every candidate's text already: packing reuses the counts.
        return Packer(renderer, tokenizer, policy, self._packing_cache, checks.counted)

    def warm_up(self) -> WarmUp:
        """Do now what a long-running process would otherwise do inside its first requests:
        read the store's files into the operating system's cache (as much as half the
        available memory holds: 0.7 s for 730 MB at 100k fragments), build the configured
        tokenizer's full encoder (about 0.2 s; until then a process counts its first
        megabyte of text in pure Python, three times slower) and the store's graph (its
        edges resolved: seconds at 100k fragments). For a service or an agent that answers
        many requests; a command that answers one should not call it. It changes no
        answer. A damaged index is a `StoreError`, as in `assemble`.
        """
        started = time.perf_counter()
        if self.store.exists():
            self.store.check()  # a damaged index is said before it is read
        store_bytes = self.store.prefetch(available_memory() // 2)
        store_done = time.perf_counter()
        name = self.settings.tokenizer.name
        warm_up_tokenizer(name)
        tokenizer_done = time.perf_counter()
        graph = self.store.backends().graph
        graph_seconds = None
        if graph is not None:
            graph.neighbours("uko://repo/")  # the first read of any node's edges reads all
            graph_seconds = round(time.perf_counter() - tokenizer_done, 3)
        warmed = WarmUp(
            name,
            round(tokenizer_done - store_done, 3),
            graph_seconds,
            store_bytes,
            round(store_done - started, 3),
        )
        logger.info(
            "warmed up",
            store_bytes=store_bytes,
            store_s=warmed.store_seconds,
            tokenizer=name,
            tokenizer_s=warmed.tokenizer_seconds,
            graph_s=warmed.graph_seconds,
        )
        return warmed

    def close(self) -> None:
        """Release the store's connections and the event loops of async strategies."""
        self.store.close()
        self._executor.close()


@dataclass(frozen=True)
class _Answer:
    """One strategy's report after acceptance, its accepted candidates as fusion ranks
    them (None when it did not answer `ok`), and what acceptance left out.
    """

    report: StrategyReport
    ranked: RankedList | None = None
    dropped: tuple[DroppedRow, ...] = ()

    @property
    def taken(self) -> int:
        """How many of its candidates were accepted."""
        return 0 if self.ranked is None else len(self.ranked.candidates)


def _asked_again(first: _Answer, second: _Answer, returned_by: str) -> _Answer:
    """A strategy's answer when it was asked again with more tokens: the second when it is
    `ok`, else the first; the report says which, and counts the time of both.
    """
    more = second.report.allocated_tokens - first.report.allocated_tokens
    asked = f"asked again with {more} more tokens, which {returned_by} returned"
    elapsed = round(first.report.elapsed_ms + second.report.elapsed_ms, 3)
    if second.report.status == "ok":
        reason = "; ".join(part for part in (asked, second.report.reason) if part)
        report = second.report.model_copy(update={"reason": reason, "elapsed_ms": elapsed})
        return replace(second, report=report)
    again = f"{asked}: {second.report.status}, {second.report.reason}; its first answer stands"
    reason = "; ".join(part for part in (first.report.reason, again) if part)
    report = first.report.model_copy(update={"reason": reason, "elapsed_ms": elapsed})
    return replace(first, report=report)


def _nothing() -> None:
    pass


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


M = TypeVar("M", bound=BaseModel)


def _validated_chat(request: ChatRequest | Mapping[str, Any]) -> ChatRequest:
    return _validated(ChatRequest, request, "chat request")


def _validated(model: type[M], request: M | Mapping[str, Any], what: str) -> M:
    """`request` as a `model`, or a `ContextpipeError` naming `what` and the field at fault."""
    if isinstance(request, model):
        return request
    try:
        return model.model_validate(request)
    except ValidationError as exc:
        where, problem = validation_problem(exc)
        raise ContextpipeError(f"{what} {where}: {problem}") from None
