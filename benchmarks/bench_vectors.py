"""Vector top-k over the embedded store at 10k and 100k full-text fragments (issue 9; the
quick run of CI, 10k only).

The corpora of `_corpus.build_corpora` get their vectors from the static embedder
`wordllama` (256-d; minilm would take half an hour at 100k), once per asv run. Measured
over the same queries, in the same process:

- `nearest`: the `vectors` capability as a strategy calls it (query embedding, search over
  the store's vectors as configured, the 20 fragments read back), and the same with the
  store forced to search exactly and approximately;
- recall@20 of the approximate index: the share of exact search's top 20 that it finds;
- the floor: numpy alone on the same matrix (one matrix-vector product and a partial sort),
  with the query vectors embedded beforehand.

The ratio of the configured search to the floor says what the store adds to the bare
arithmetic.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import contextpipe
from contextpipe.faces.evaluation.beir import read_beir
from contextpipe.faces.evaluation.project import indexed_project
from contextpipe.pipeline.vectors import with_vectors

from ._corpus import LATENCY_SIZES, build_corpora, latency_queries, memoized, percentiles
from .scifact_report import data_folder

EMBEDDER = "wordllama"
TOP_K = 20
QUERIES = 100
#: Lowered so that the 10k store gets an approximate index too, to measure it against exact.
APPROXIMATE_ABOVE = 5_000
#: Above any store measured: exact search.
EXACT = 10_000_000


def _opened(project: str, approximate_above: int | None = None) -> contextpipe.Pipeline:
    overrides: dict[str, object] = {"embedding.model": EMBEDDER}
    if approximate_above is not None:
        overrides["store.approximate_vectors_above"] = approximate_above
    return contextpipe.Pipeline.open(project_dir=project, overrides=overrides)


def embedded_vectors(projects: dict[int, str], fragments: int) -> dict[str, float]:
    def embed() -> dict[str, float]:
        pipeline = _opened(projects[fragments])
        try:
            summary = pipeline.embed()
        finally:
            pipeline.close()
        return {"texts": summary.embedded, "seconds": round(summary.seconds, 2)}

    return memoized(projects, f"vectors-{fragments}", embed)


def _approximate_built(projects: dict[int, str], fragments: int) -> dict[str, float]:
    """Seconds to build the approximate index from scratch over every vector (a vector run
    that embeds nothing new); at 10k the threshold is lowered so that there is one.
    """

    def build() -> dict[str, float]:
        embedded_vectors(projects, fragments)
        pipeline = _opened(projects[fragments], APPROXIMATE_ABOVE)
        try:
            (Path(pipeline.stats().location) / "vectors.ivf.json").unlink(missing_ok=True)
            started = time.perf_counter()
            pipeline.embed()
            return {"seconds": round(time.perf_counter() - started, 2)}
        finally:
            pipeline.close()

    return memoized(projects, f"vectors-ivf-{fragments}", build)


def timed_searches(
    pipeline: contextpipe.Pipeline, queries: list[str]
) -> tuple[list[list[str]], dict[str, float]]:
    """Each query's top-20 fragment ids, and the percentiles of the searches."""
    backends = with_vectors(pipeline.store.backends(), pipeline.store, pipeline.embedder)
    vectors = backends.vectors
    assert vectors is not None, backends.reasons
    filters = contextpipe.RequestFilters()
    vectors.nearest(queries[0], TOP_K, filters)  # the index is read once per process
    found: list[list[str]] = []
    searched: list[float] = []
    for query in queries:
        started = time.perf_counter()
        hits = vectors.nearest(query, TOP_K, filters)
        searched.append((time.perf_counter() - started) * 1000)
        found.append([hit.fragment.id for hit in hits])
    return found, percentiles(searched)


def _measure(projects: dict[int, str], fragments: int) -> dict[str, float]:
    _approximate_built(projects, fragments)
    queries = latency_queries(QUERIES)
    results: dict[str, tuple[list[list[str]], dict[str, float]]] = {}
    for way, threshold in (
        ("configured", None),
        ("approximate", APPROXIMATE_ABOVE),
        ("exact", EXACT),
    ):
        pipeline = _opened(projects[fragments], threshold)
        try:
            results[way] = timed_searches(pipeline, queries)
            if way == "exact":
                floor = _floor(pipeline, queries)
        finally:
            pipeline.close()
    approximate, exact = results["approximate"][0], results["exact"][0]
    recall = sum(len(set(a) & set(e)) for a, e in zip(approximate, exact, strict=True)) / sum(
        len(e) for e in exact
    )
    ours = results["configured"][1]
    return {
        "p50": ours["p50"],
        "p95": ours["p95"],
        "approximate_p50": results["approximate"][1]["p50"],
        "exact_p50": results["exact"][1]["p50"],
        "recall": round(recall, 3),
        "floor_p50": floor["p50"],
        "floor_p95": floor["p95"],
        "ratio_p50": round(ours["p50"] / max(floor["p50"], 1e-6), 2),
    }


def _floor(pipeline: contextpipe.Pipeline, queries: list[str]) -> dict[str, float]:
    """numpy alone over the matrix the store saved for exact search, read into memory."""
    matrix = np.load(Path(pipeline.stats().location) / "vectors.matrix.npy")
    embedded = pipeline.embedder.embed(queries)
    floor: list[float] = []
    for vector in embedded:
        started = time.perf_counter()
        scores = matrix @ vector
        best = np.argpartition(-scores, TOP_K)[:TOP_K]
        best[np.argsort(-scores[best])]
        floor.append((time.perf_counter() - started) * 1000)
    return percentiles(floor)


class VectorTopK:
    """p50/p95 ms of a top-20 vector search as configured (exact below
    `[store] approximate_vectors_above`, 50k, approximate above), the same-run numpy floor,
    both ways of searching alone, and recall@20 of the approximate index against exact
    search.
    """

    params = (list(LATENCY_SIZES),)
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

    def track_exact_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["exact_p50"]

    def track_approximate_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["approximate_p50"]

    def track_approximate_recall_at_20(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["recall"]

    track_approximate_recall_at_20.unit = "recall"  # type: ignore[attr-defined]


class ApproximateBuild:
    """Seconds to build the approximate index over every vector of the store."""

    params = (list(LATENCY_SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200
    unit = "s"

    def track_build_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return _approximate_built(projects, fragments)["seconds"]


class EmbedStore:
    """Seconds to compute the vectors of a whole store with wordllama."""

    params = (list(LATENCY_SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200
    unit = "s"

    def track_embed_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return embedded_vectors(projects, fragments)["seconds"]


def _scifact_recall() -> dict[str, float | str]:
    """asv `setup_cache`: recall@20 of the approximate index against exact search on real
    text and real questions: SciFact's corpus (5,183 abstracts) and its 809 train queries,
    embedded with wordllama; the threshold is lowered so that the corpus gets an index.
    """
    try:
        folder = data_folder(None)
    except SystemExit as missing:
        return {"missing": str(missing)}  # `setup` skips: asv fails a failed setup_cache
    data = read_beir(folder, "train")
    with tempfile.TemporaryDirectory(prefix="contextpipe-bench-recall-") as work:
        config = Path(work) / "config.toml"
        config.write_text(
            f'[embedding]\nmodel = "{EMBEDDER}"\n\n[store]\napproximate_vectors_above = 1000\n'
        )
        with indexed_project(data, config) as project:
            found: dict[str, list[list[str]]] = {}
            for way, threshold in (("approximate", 1000), ("exact", EXACT)):
                pipeline = project.open({"store.approximate_vectors_above": threshold})
                try:
                    found[way] = timed_searches(pipeline, list(data.queries.values()))[0]
                finally:
                    pipeline.close()
    hits = zip(found["approximate"], found["exact"], strict=True)
    return {
        "recall": round(
            sum(len(set(a) & set(e)) for a, e in hits) / sum(len(e) for e in found["exact"]), 3
        )
    }


_scifact_recall.timeout = 1200  # type: ignore[attr-defined]


class SciFactMeasured:
    """What the benchmarks measured once over SciFact share: skipped (not failed) when the
    data is missing.
    """

    unit = "recall"

    def setup(self, measured: dict[str, float | str]) -> None:
        if "missing" in measured:
            raise NotImplementedError(measured["missing"])  # asv: skipped, not failed


class ApproximateRecallSciFact(SciFactMeasured):
    """recall@20 of the approximate index against exact search over SciFact (real text and
    questions; the synthetic corpus of `VectorTopK` is close to uniform in vector space,
    an inverted file's worst case).
    """

    setup_cache = staticmethod(_scifact_recall)
    timeout = 1200

    def track_recall_at_20(self, measured: dict[str, float | str]) -> float:
        return float(measured["recall"])
