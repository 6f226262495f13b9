"""`recency` and `tiered` (issue 10), each alone and in the default mix of a session, at
10k and 100k full-text fragments: p50/p95 of `assemble(q, budget=4000)`, against the
keyword-only mix measured in the same process on the same queries (the 35 ms p95 budget
of the whole default mix is issue 9's).

Each store of `_corpus.build_corpora` is copied once per asv run and given memory as an
agent would: `MEMORY_ITEMS` items spread over `SESSIONS` sessions and a year of
timestamps, a pinned glob of three files, and an access log warmed by the asking session's
earlier assemblies. The stores have no vectors (keyword-only, as `AssembleLatency`), so the
semantic strategies are skipped and recency and tiered match by text.

`MemoryMixLatency` gives memory likewise to the stores of `AssembleDefaultMix` (vectors of
the default embedder; 1k fragments in a quick run) and times a session's default mix
there: the searches of each strategy must leave out the memory of the other sessions
without reading it all back (a vector search once scanned every row for it: 0.7 s per
request at 100k with 2,000 items).
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import contextpipe

from ._corpus import BUDGET, LATENCY_SIZES, build_corpora, latency_queries, memoized, percentiles
from .bench_assemble import MIX_SIZES, mix_project

MEMORY_ITEMS = 2_000
SESSIONS = 20
#: The asking session of every measured request.
SESSION = "bench-session-0"
AS_OF = datetime(2025, 1, 1, tzinfo=UTC)
#: Quick or not, as `bench_navigator.REQUESTS` (a p95 of 50 requests is their third slowest).
LATENCY_QUERIES = 200
#: Each measured run: which strategies (None: the default mix), and how queries are asked.
RUNS = {
    "recency, declining a plain query": ("recency",),
    "recency, asking for what is new": ("recency",),
    "tiered": ("tiered",),
    "default mix, in a session": None,
}


def memory_project(projects: dict[int, str], fragments: int) -> str:
    """A copy of the `fragments` store with memory, pins and an access log, made once per
    asv run.
    """
    return _with_memory(projects, Path(projects[fragments]), f"memory-{fragments}")


def _with_memory(projects: dict[int, str], source: Path, name: str, embed: bool = False) -> str:
    """A copy of the project `source` with memory, pins and an access log, made once per
    asv run (`name`: its record among the run's measurements); `embed`: the memory given
    vectors too, as `contextpipe remember` gives them.
    """
    target = source.with_name(f"{source.name}-memory")

    def build() -> dict[str, float]:
        shutil.rmtree(target, ignore_errors=True)  # a copy cut short by an earlier crash
        shutil.copytree(source / ".contextpipe", target / ".contextpipe")
        pipeline = contextpipe.Pipeline.open(project_dir=target)
        try:
            queries = latency_queries(MEMORY_ITEMS)
            items = [
                contextpipe.MemoryItem(
                    id=f"m{number}",
                    text=f"note {number}: {queries[number]}",
                    at=AS_OF - timedelta(hours=4 * number),
                    scope=contextpipe.MemoryScope.SESSION,
                    owner=f"bench-session-{number % SESSIONS}",
                )
                for number in range(MEMORY_ITEMS)
            ]
            pipeline.remember_all(items)
            if embed:
                pipeline.embed()
            pipeline.pin("corpus/part0000/*00000[012].*")
            for query in latency_queries(5, seed=7):
                pipeline.assemble(query, budget=BUDGET, session=SESSION)
        finally:
            pipeline.close()
        return {"items": MEMORY_ITEMS}

    memoized(projects, name, build)
    return str(target)


def measure(project: str, run: str) -> dict[str, float]:
    """Percentiles of the run and of the keyword-only mix, alternating query by query."""
    pipeline = contextpipe.Pipeline.open(project_dir=project)
    try:
        names = RUNS[run]
        selection = {name: contextpipe.StrategySelection() for name in names} if names else None
        keyword = {"simple-keyword": contextpipe.StrategySelection()}
        prefix = "latest " if "new" in run else ""
        queries = [prefix + query for query in latency_queries(LATENCY_QUERIES)]
        pipeline.warm_up()  # as a long-running service would, before its first request
        for query in queries[:4]:
            pipeline.assemble(query, budget=BUDGET, session=SESSION, as_of=AS_OF)
        timed: list[float] = []
        floor: list[float] = []
        for query in queries:
            started = time.perf_counter()
            pipeline.assemble(
                query, budget=BUDGET, strategies=selection, session=SESSION, as_of=AS_OF
            )
            timed.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            pipeline.assemble(query, budget=BUDGET, strategies=keyword)
            floor.append((time.perf_counter() - started) * 1000)
    finally:
        pipeline.close()
    mine, base = percentiles(timed), percentiles(floor)
    return {
        "p50": mine["p50"],
        "p95": mine["p95"],
        "keyword_p50": base["p50"],
        "keyword_p95": base["p95"],
        "ratio_p95": round(mine["p95"] / base["p95"], 3),
    }


class _Figures:
    """The figures of one `measure`, kept in `stats` by `setup`: p50/p95, the keyword-only
    p95 of the same queries and the ratio to it.
    """

    setup_cache = staticmethod(build_corpora)
    unit = "ms"
    stats: dict[str, float]

    def track_p50_ms(self, projects: dict[int, str], *params: object) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], *params: object) -> float:
        return self.stats["p95"]

    def track_keyword_p95_ms(self, projects: dict[int, str], *params: object) -> float:
        return self.stats["keyword_p95"]

    def track_ratio_p95(self, projects: dict[int, str], *params: object) -> float:
        return self.stats["ratio_p95"]

    track_ratio_p95.unit = "x"  # type: ignore[attr-defined]


class MemoryStrategyLatency(_Figures):
    """recency and tiered alone, and a session's default mix."""

    params = (list(LATENCY_SIZES), list(RUNS))
    param_names = ("fragments", "run")
    timeout = 1800

    def setup(self, projects: dict[int, str], fragments: int, run: str) -> None:
        project = memory_project(projects, fragments)
        name = f"memory-latency-{fragments}-{run}"
        self.stats = memoized(projects, name, lambda: measure(project, run))


class MemoryMixLatency(_Figures):
    """A session's default mix over a store with vectors and memory of many sessions."""

    params = (list(MIX_SIZES),)
    param_names = ("fragments",)
    # Embedding the 100k store with the default model takes most of an hour.
    timeout = 4 * 3600

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        mixed, _ = mix_project(projects, fragments)
        project = _with_memory(projects, Path(mixed), f"memory-mix-{fragments}", embed=True)
        run = "default mix, in a session"
        name = f"memory-mix-latency-{fragments}"
        self.stats = memoized(projects, name, lambda: measure(project, run))
