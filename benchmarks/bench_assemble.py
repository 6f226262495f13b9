"""End-to-end `Pipeline.assemble` latency over the embedded store (SQLite FTS5 and the
built-in `simple-keyword` strategy) at 1k, 10k and 100k full-text fragments, budget 4000.

The corpora are generated and indexed once per asv run by `_corpus.build_corpora`
(setup_cache); see that module for what "N fragments" means.
"""

from __future__ import annotations

import time

import contextpipe

from ._corpus import (
    BUDGET,
    QUERIES,
    QUICK,
    SIZES,
    build_corpora,
    latency_queries,
    memoized,
    percentiles,
)

QUERY_KINDS = dict(zip(("question", "keywords", "identifier", "phrase"), QUERIES, strict=True))

#: Queries per percentile measurement.
LATENCY_QUERIES = 50 if QUICK else 200


class IndexBuild:
    """Seconds `Pipeline.index` took to build each store in setup_cache (a fresh index of
    the generated files: chunking, token counting, SQLite and FTS5 inserts).
    """

    params = (list(SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    unit = "s"

    def track_index_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return memoized(projects, f"index-{fragments}", _not_recorded)["index_s"]


def _not_recorded() -> dict[str, float]:
    raise RuntimeError("build_corpora did not record this index build")


class Assemble:
    """One `assemble` call with a warm pipeline (tokenizer loaded, SQLite pages cached)."""

    params = (list(SIZES), list(QUERY_KINDS))
    param_names = ("fragments", "query")
    setup_cache = staticmethod(build_corpora)
    timeout = 300

    def setup(self, projects: dict[int, str], fragments: int, query: str) -> None:
        self.pipeline = contextpipe.Pipeline.open(project_dir=projects[fragments])
        self.query = QUERY_KINDS[query]
        self.pipeline.assemble(self.query, budget=BUDGET)

    def teardown(self, projects: dict[int, str], fragments: int, query: str) -> None:
        self.pipeline.close()

    def time_assemble(self, projects: dict[int, str], fragments: int, query: str) -> None:
        self.pipeline.assemble(self.query, budget=BUDGET)


class AssembleLatency:
    """p50 and p95 wall time of `assemble` over 50 (quick) or 200 deterministic queries,
    both from the same samples (measured once per run, see `_corpus.memoized`).
    """

    params = (list(SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 900
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        def measure() -> dict[str, float]:
            pipeline = contextpipe.Pipeline.open(project_dir=projects[fragments])
            try:
                return measure_latency(pipeline, LATENCY_QUERIES)
            finally:
                pipeline.close()

        self.stats = memoized(projects, f"latency-{fragments}", measure)

    def track_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p95"]


def measure_latency(pipeline: contextpipe.Pipeline, count: int) -> dict[str, float]:
    """Percentiles of `count` assemblies (after one warm-up call per fixed query)."""
    for query in QUERIES:
        pipeline.assemble(query, budget=BUDGET)
    samples: list[float] = []
    for query in latency_queries(count):
        started = time.perf_counter()
        pipeline.assemble(query, budget=BUDGET)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)
