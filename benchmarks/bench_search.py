"""Keyword top-k of the embedded store (issue 9): `EmbeddedStore.search` at 10k and 100k
full-text fragments (target at 100k: p95 <= 5 ms), beside a baseline measured in the same
run on the same store and queries: the FTS5 query the store ran before its keyword index
(the OR of the query's terms ranked by `bm25()` in SQL, `ORDER BY` rank `LIMIT`), which
ranks every match before the limit applies. Also: one changed file in the 100k store,
indexed again and searched (target <= 1 s).

The stores are `_corpus.build_corpora`'s (shared with `bench_assemble`); see that module
for what "N fragments" means. The searches are timed in the process, warm (the store's
keyword index loaded by a first search), `LATENCY_QUERIES` deterministic queries each;
`KeywordSearchCold` times them in a fresh process, the store's pages in the OS page cache
or dropped from it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from contextpipe import Pipeline, RequestFilters, query_terms
from contextpipe.stores.embedded._text_layout import fts_expression
from contextpipe.stores.embedded.backend import EmbeddedStore

from ._corpus import (
    LARGEST,
    LATENCY_SIZES,
    QUICK,
    build_corpora,
    latency_queries,
    memoized,
    percentiles,
)
from ._fresh import in_fresh_process

#: Queries per percentile measurement.
LATENCY_QUERIES = 50 if QUICK else 200
#: `simple-keyword` asks for 50 hits first, and for up to 500 when those are too few.
LIMITS = (50, 500)
_UNFILTERED = RequestFilters()


def _store(project: str) -> tuple[Pipeline, EmbeddedStore]:
    pipeline = Pipeline.open(project_dir=Path(project))
    store = pipeline.store
    if not isinstance(store, EmbeddedStore):
        raise RuntimeError(f"the benchmark store is not the embedded one: {store!r}")
    return pipeline, store


def measure_search(project: str, limit: int, count: int) -> dict[str, float]:
    """Percentiles of `store.search` and of the old FTS5 ranking query over the same
    queries: all searches, then all baseline queries (in rotation, each would run on caches
    the other just emptied).
    """
    pipeline, store = _store(project)
    connection = sqlite3.connect(store.database)
    try:
        queries = latency_queries(count)
        ranked = (
            "SELECT rowid, bm25(fts, 3.0, 1, 0.5) AS rank FROM fts WHERE fts MATCH ?"
            " ORDER BY rank LIMIT ?"
        )
        expressions = [fts_expression(query_terms(query)) for query in queries]
        for query, expression in zip(queries[:4], expressions, strict=False):  # warm
            store.search(query, limit, _UNFILTERED)
            connection.execute(ranked, (expression, limit)).fetchall()
        searched: list[float] = []
        for query in queries:
            started = time.perf_counter()
            store.search(query, limit, _UNFILTERED)
            searched.append((time.perf_counter() - started) * 1000)
        baseline: list[float] = []
        for expression in expressions:
            started = time.perf_counter()
            connection.execute(ranked, (expression, limit)).fetchall()
            baseline.append((time.perf_counter() - started) * 1000)
    finally:
        connection.close()
        pipeline.close()
    ours, theirs = percentiles(searched), percentiles(baseline)
    return {
        "p50": ours["p50"],
        "p95": ours["p95"],
        "baseline_p50": theirs["p50"],
        "baseline_p95": theirs["p95"],
    }


class KeywordSearch:
    """p50 and p95 of `search(query, limit)` and of the old FTS5 query (the baseline), from
    the same samples (measured once per run, see `_corpus.memoized`).
    """

    params = (list(LATENCY_SIZES), list(LIMITS))
    param_names = ("fragments", "limit")
    setup_cache = staticmethod(build_corpora)
    timeout = 900
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int, limit: int) -> None:
        self.stats = memoized(
            projects,
            f"search-{fragments}-{limit}",
            lambda: measure_search(projects[fragments], limit, LATENCY_QUERIES),
        )

    def track_p50_ms(self, projects: dict[int, str], fragments: int, limit: int) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int, limit: int) -> float:
        return self.stats["p95"]

    def track_baseline_p50_ms(self, projects: dict[int, str], fragments: int, limit: int) -> float:
        return self.stats["baseline_p50"]

    def track_baseline_p95_ms(self, projects: dict[int, str], fragments: int, limit: int) -> float:
        return self.stats["baseline_p95"]


def _evicted(database: Path) -> None:
    """Drop the database's pages from the OS page cache (only this file's), as hours of
    other work on a machine do: the next read comes from disk.
    """
    descriptor = os.open(database, os.O_RDONLY)
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def measure_cold(project: str, limit: int, count: int) -> dict[str, float]:
    """`measure_search` in a fresh process, as a one-shot command or a restarted service
    meets the store: with its pages in the page cache (`cached_*`), and after they were
    dropped from it (`evicted_*`).
    """
    database = Path(project) / ".contextpipe" / "index.sqlite3"
    measured: dict[str, float] = {}
    for state in ("cached", "evicted"):
        if state == "evicted":
            _evicted(database)
        found = in_fresh_process("benchmarks.bench_search", "measure_search", project, limit, count)
        measured.update({f"{state}_{key}": found[key] for key in ("p50", "p95")})
    return measured


class KeywordSearchCold:
    """p50 and p95 of the first searches of a fresh process at 100k (10k quick), the
    store's pages in the page cache or dropped from it: the state a one-shot
    `contextpipe query` meets.
    """

    params = (list(LIMITS),)
    param_names = ("limit",)
    setup_cache = staticmethod(build_corpora)
    timeout = 900
    unit = "ms"

    def setup(self, projects: dict[int, str], limit: int) -> None:
        size = LARGEST
        self.stats = memoized(
            projects,
            f"search-cold-{size}-{limit}",
            lambda: measure_cold(projects[size], limit, LATENCY_QUERIES),
        )

    def track_cached_p95_ms(self, projects: dict[int, str], limit: int) -> float:
        return self.stats["cached_p95"]

    def track_evicted_p50_ms(self, projects: dict[int, str], limit: int) -> float:
        return self.stats["evicted_p50"]

    def track_evicted_p95_ms(self, projects: dict[int, str], limit: int) -> float:
        return self.stats["evicted_p95"]


def measure_update(project: str) -> dict[str, float]:
    """Seconds to index one changed file again and search for its new words: the file
    alone, then its whole corpus folder (a walk of every file). The file is put back as it
    was afterwards (indexed again, untimed), so that the store holds what it held.
    """
    root = Path(project)
    changed = min((root / "corpus").rglob("*.md"))
    original = changed.read_text(encoding="utf-8")
    pipeline, store = _store(project)
    timings: dict[str, float] = {}
    try:
        store.search("retry backoff", 50, _UNFILTERED)  # warm, as a running service is
        for name, target in (("file", changed), ("folder", root / "corpus")):
            changed.write_text(original + "\n## Zanzibar quokka\n\nA new quokka.\n", "utf-8")
            started = time.perf_counter()
            pipeline.index([target])
            hits = store.search("zanzibar quokka", 50, _UNFILTERED)
            timings[name] = round(time.perf_counter() - started, 3)
            if not hits or hits[0].fragment.source.path != changed.relative_to(root).as_posix():
                raise RuntimeError(f"the changed file is not found first: {hits[:1]}")
            changed.write_text(original, "utf-8")
            pipeline.index([target])
    finally:
        changed.write_text(original, "utf-8")
        pipeline.close()
    return timings


class KeywordUpdate:
    """One changed file in the 100k store: `index` of that file (`file`) or of its corpus
    folder (`folder`), then the next search, in seconds.
    """

    params = (["file", "folder"],)
    param_names = ("index",)
    setup_cache = staticmethod(build_corpora)
    timeout = 900
    unit = "s"

    def setup(self, projects: dict[int, str], index: str) -> None:
        self.stats = memoized(
            projects, f"update-{LARGEST}", lambda: measure_update(projects[LARGEST])
        )

    def track_reindex_and_query_s(self, projects: dict[int, str], index: str) -> float:
        return self.stats[index]
