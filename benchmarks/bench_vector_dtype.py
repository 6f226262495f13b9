"""Vectors held as float16 against float32 (`[store] vector_dtype`, issue 9): what float16
costs in results, and what it saves.

- Quality, on SciFact (5,183 abstracts, its 809 train queries, wordllama): exact top-20 of
  float16 against float32's (recall@20, share of queries with the very same ranking, the
  largest similarity difference), and the approximate index of each dtype against float32
  exact search.
- Speed and memory, on the 100k store of `_corpus.build_corpora` with exact search forced:
  p50 / p95 of a top-20 search and the RSS after the searches, each dtype in a fresh
  process, so that the one's mapped pages do not count for the other.
  `python -m benchmarks.bench_vector_dtype PROJECT` prints the same for any indexed
  project with wordllama vectors.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
from pathlib import Path

import contextpipe
from contextpipe.faces.evaluation.beir import read_beir
from contextpipe.faces.evaluation.project import indexed_project
from contextpipe.pipeline.vectors import with_vectors

from ._corpus import LARGEST, build_corpora, latency_queries, memoized
from ._fresh import in_fresh_process
from .bench_vectors import (
    EMBEDDER,
    EXACT,
    TOP_K,
    SciFactMeasured,
    embedded_vectors,
    timed_searches,
)
from .scifact_report import data_folder

DTYPES = ("float32", "float16")
#: Lowered so that SciFact's 5k abstracts get an approximate index.
_APPROXIMATE_ABOVE = 1_000


def _nearest(pipeline: contextpipe.Pipeline, queries: list[str]) -> list[list[tuple[str, float]]]:
    vectors = with_vectors(pipeline.store.backends(), pipeline.store, pipeline.embedder).vectors
    assert vectors is not None
    filters = contextpipe.RequestFilters()
    return [
        [(hit.fragment.id, hit.similarity) for hit in vectors.nearest(query, TOP_K, filters)]
        for query in queries
    ]


def _recall(found: list[list[tuple[str, float]]], exact: list[list[tuple[str, float]]]) -> float:
    shared = sum(
        len({i for i, _ in a} & {i for i, _ in e}) for a, e in zip(found, exact, strict=True)
    )
    return round(shared / sum(len(e) for e in exact), 4)


def _scifact_quality() -> dict[str, float | str]:
    """asv `setup_cache`: float16 against float32 on SciFact (see the module)."""
    try:
        folder = data_folder(None)
    except SystemExit as missing:
        return {"missing": str(missing)}  # `setup` skips: asv fails a failed setup_cache
    data = read_beir(folder, "train")
    queries = list(data.queries.values())
    with tempfile.TemporaryDirectory(prefix="contextpipe-bench-dtype-") as work:
        config = Path(work) / "config.toml"
        config.write_text(f'[embedding]\nmodel = "{EMBEDDER}"\n')
        with indexed_project(data, config) as project:
            found: dict[str, list[list[tuple[str, float]]]] = {}
            for way, overrides in (
                ("float32", {"store.approximate_vectors_above": EXACT}),
                ("float16", {"store.approximate_vectors_above": EXACT}),
                ("float32-approximate", {"store.approximate_vectors_above": _APPROXIMATE_ABOVE}),
                ("float16-approximate", {"store.approximate_vectors_above": _APPROXIMATE_ABOVE}),
            ):
                dtype = way.split("-")[0]
                pipeline = project.open({**overrides, "store.vector_dtype": dtype})
                try:
                    if way.endswith("approximate"):
                        pipeline.embed()  # builds the approximate index in this dtype
                    found[way] = _nearest(pipeline, queries)
                finally:
                    pipeline.close()
    exact, half = found["float32"], found["float16"]
    return {
        "recall": _recall(half, exact),
        "same_ranking": round(
            sum([i for i, _ in a] == [i for i, _ in e] for a, e in zip(half, exact, strict=True))
            / len(exact),
            4,
        ),
        "max_difference": max(
            abs(s - t)
            for a, e in zip(half, exact, strict=True)
            for (i, s), (j, t) in zip(a, e, strict=True)
            if i == j
        ),
        "approximate_recall": _recall(found["float16-approximate"], exact),
        "float32_approximate_recall": _recall(found["float32-approximate"], exact),
    }


_scifact_quality.timeout = 1800  # type: ignore[attr-defined]


class Float16QualitySciFact(SciFactMeasured):
    """float16 exact top-20 against float32's on SciFact, and the approximate index of each
    dtype against float32 exact search.
    """

    setup_cache = staticmethod(_scifact_quality)
    timeout = 1800

    def track_recall_at_20(self, measured: dict[str, float | str]) -> float:
        return float(measured["recall"])

    def track_same_ranking_share(self, measured: dict[str, float | str]) -> float:
        return float(measured["same_ranking"])

    def track_max_similarity_difference(self, measured: dict[str, float | str]) -> float:
        return float(measured["max_difference"])

    track_max_similarity_difference.unit = "similarity"  # type: ignore[attr-defined]

    def track_approximate_recall_at_20(self, measured: dict[str, float | str]) -> float:
        return float(measured["approximate_recall"])

    def track_float32_approximate_recall_at_20(self, measured: dict[str, float | str]) -> float:
        return float(measured["float32_approximate_recall"])


def measure_one(project: str, dtype: str, count: int) -> dict[str, float]:
    """p50 / p95 of `count` exact top-20 searches with vectors held as `dtype`, and the RSS
    of this process in MB after them, and at its peak (run it in a process of its own).
    """
    pipeline = contextpipe.Pipeline.open(
        project_dir=project,
        overrides={
            "embedding.model": EMBEDDER,
            "store.approximate_vectors_above": EXACT,
            "store.vector_dtype": dtype,
        },
    )
    try:
        timings = timed_searches(pipeline, latency_queries(count))[1]
    finally:
        pipeline.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Resident now: the peak also holds the one-off read of every vector to write the matrix.
    resident = int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()
    return {
        "p50": timings["p50"],
        "p95": timings["p95"],
        "rss_mb": round(resident / 2**20),
        "peak_rss_mb": round(peak),
    }


def measure_dtypes(project: str, count: int) -> dict[str, float]:
    """`measure_one` for each dtype, each in a fresh process, float32 first."""
    measured: dict[str, float] = {}
    for dtype in DTYPES:
        found = in_fresh_process(
            "benchmarks.bench_vector_dtype", "measure_one", project, dtype, count
        )
        measured.update({f"{dtype}_{key}": value for key, value in found.items()})
    return measured


class ExactSearchByDtype:
    """Exact top-20 at 100k fragments (wordllama, 256-d): p50 / p95 and RSS per dtype."""

    params = (list(DTYPES),)
    param_names = ("dtype",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200
    unit = "ms"

    def setup(self, projects: dict[int, str], dtype: str) -> None:
        size = LARGEST
        embedded_vectors(projects, size)
        self.stats = memoized(
            projects, f"vector-dtype-{size}", lambda: measure_dtypes(projects[size], 100)
        )

    def track_p50_ms(self, projects: dict[int, str], dtype: str) -> float:
        return self.stats[f"{dtype}_p50"]

    def track_p95_ms(self, projects: dict[int, str], dtype: str) -> float:
        return self.stats[f"{dtype}_p95"]

    def track_rss_mb(self, projects: dict[int, str], dtype: str) -> float:
        return self.stats[f"{dtype}_rss_mb"]

    track_rss_mb.unit = "MB"  # type: ignore[attr-defined]


if __name__ == "__main__":
    print(json.dumps(measure_dtypes(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)))
