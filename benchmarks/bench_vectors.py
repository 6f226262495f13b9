"""Vector top-k over the embedded store at 10k and 100k full-text fragments (issue 9; the
quick run of CI, 10k only).

The corpora of `_corpus.build_corpora` get their vectors from the static embedder
`wordllama` (256-d; minilm would take half an hour at 100k), once per asv run. Measured
over the same queries, in the same process:

- `nearest`: the `vectors` capability as a strategy calls it (query embedding, exact
  search over the store's matrix, the 20 fragments read back);
- the floor: numpy alone on the same matrix (one matrix-vector product and a partial sort),
  with the query vectors embedded beforehand.

The ratio of the two says what the store adds to the bare arithmetic.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import contextpipe
from contextpipe.vector_search import with_vectors

from ._corpus import QUICK, SIZES, build_corpora, latency_queries, memoized, percentiles

EMBEDDER = "wordllama"
TOP_K = 20
QUERIES = 100
#: CI's quick run measures 10k only: embedding the 100k store alone takes most of a minute.
MEASURED = tuple(size for size in SIZES if size >= 10_000 and not (QUICK and size > 10_000))


def _opened(project: str) -> contextpipe.Pipeline:
    return contextpipe.Pipeline.open(project_dir=project, overrides={"embedding.model": EMBEDDER})


def _embedded(projects: dict[int, str], fragments: int) -> dict[str, float]:
    def embed() -> dict[str, float]:
        pipeline = _opened(projects[fragments])
        try:
            summary = pipeline.embed()
        finally:
            pipeline.close()
        return {"texts": summary.embedded, "seconds": round(summary.seconds, 2)}

    return memoized(projects, f"vectors-{fragments}", embed)


def _measure(projects: dict[int, str], fragments: int) -> dict[str, float]:
    _embedded(projects, fragments)
    pipeline = _opened(projects[fragments])
    try:
        backends = with_vectors(pipeline.store.backends(), pipeline.store, pipeline.embedder)
        vectors = backends.vectors
        assert vectors is not None, backends.reasons
        queries = latency_queries(QUERIES)
        filters = contextpipe.RequestFilters()
        vectors.nearest(queries[0], TOP_K, filters)  # the matrix is read once per process
        searched: list[float] = []
        for query in queries:
            started = time.perf_counter()
            vectors.nearest(query, TOP_K, filters)
            searched.append((time.perf_counter() - started) * 1000)
        # The matrix the embedded store saved for the next process, read into memory.
        matrix = np.load(Path(pipeline.stats().location) / "vectors.matrix.npy")
        embedded = pipeline.embedder.embed(queries)
        floor: list[float] = []
        for vector in embedded:
            started = time.perf_counter()
            scores = matrix @ vector
            best = np.argpartition(-scores, TOP_K)[:TOP_K]
            best[np.argsort(-scores[best])]
            floor.append((time.perf_counter() - started) * 1000)
    finally:
        pipeline.close()
    ours, bare = percentiles(searched), percentiles(floor)
    return {
        "p50": ours["p50"],
        "p95": ours["p95"],
        "floor_p50": bare["p50"],
        "floor_p95": bare["p95"],
        "ratio_p50": round(ours["p50"] / max(bare["p50"], 1e-6), 2),
    }


class VectorTopK:
    """p50/p95 ms of a top-20 vector search, and the same-run numpy floor."""

    params = (list(MEASURED),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        self.stats = memoized(
            projects, f"vector-topk-{fragments}", lambda: _measure(projects, fragments)
        )

    def track_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p95"]

    def track_floor_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["floor_p50"]

    def track_ratio_to_floor(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["ratio_p50"]

    track_ratio_to_floor.unit = "x"  # type: ignore[attr-defined]


class EmbedStore:
    """Seconds to compute the vectors of a whole store with wordllama."""

    params = (list(MEASURED),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200
    unit = "s"

    def track_embed_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return _embedded(projects, fragments)["seconds"]
