"""End-to-end `Pipeline.assemble` latency over the embedded store, budget 4000:

- `Assemble`, `AssembleLatency`: the stores of `_corpus.build_corpora` as indexed, without
  vectors, so only `simple-keyword` runs (the semantic strategies are skipped), at 1k, 10k
  and 100k full-text fragments; `AssembleLatency` against a keyword floor, bm25s alone,
  measured in the same process over the same fragments and queries (`_Floor`);
- `AssembleDefaultMix` (issue 9, "speed of the whole"): the default configuration, i.e.
  `simple-keyword`, `semantic-embedding` and `relevance` with the default embedder, query
  embedding included, on a copy of a store given its vectors, against a floor measured
  in the same process over the same fragments and queries (`_Floor`).

The corpora are generated and indexed once per asv run by `_corpus.build_corpora`
(setup_cache); see that module for what "N fragments" means.
"""

from __future__ import annotations

import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import bm25s  # pyright: ignore[reportMissingTypeStubs]
import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController  # pyright: ignore[reportMissingTypeStubs]

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

QUERY_KINDS: dict[str, str] = dict(
    zip(("question", "keywords", "identifier", "phrase"), QUERIES, strict=True)
)

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
    """p50 and p95 wall time of `assemble` over 50 (quick) or 200 deterministic queries and
    of the keyword floor (bm25s alone, `_Floor`) over the same queries, timed in turn, and
    their ratios (measured once per run, see `_corpus.memoized`).
    """

    params = (list(SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 900
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        self.stats = memoized(
            projects,
            f"latency-{fragments}",
            lambda: measure_latency(projects[fragments], LATENCY_QUERIES),
        )

    def track_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p95"]

    def track_floor_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["floor_p50"]

    def track_ratio_p50(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["ratio_p50"]

    track_ratio_p50.unit = "x"  # type: ignore[attr-defined]


#: The strategy of the keyword-only stores: it must run (status ok) in every measured
#: assembly, as must each of `MIX` on the stores given vectors.
KEYWORD = ("simple-keyword",)


def measure_latency(project: str, count: int) -> dict[str, float]:
    """`_against_floor` for the keyword-only store of `project`: `assemble` (after one
    warm-up call per fixed query) and bm25s alone, on `count` queries.
    """
    pipeline = contextpipe.Pipeline.open(project_dir=project)
    try:
        for query in QUERIES:
            pipeline.assemble(query, budget=BUDGET)
        return _against_floor(pipeline, _Floor(project), KEYWORD, count)
    finally:
        pipeline.close()


#: Sizes of the default-mix benchmark. Its stores need vectors of the default embedder,
#: minilm: the 11,762 full-text fragments of the 10k store took 389 s of CPU (651 s wall on
#: a busy 2-core machine), too long for CI, whose quick run measures 1k only. 100k, about
#: ten times that, belongs to the full run.
MIX_SIZES = (1_000,) if QUICK else (10_000, 100_000)
#: The floor's lists: bm25s top-20 and numpy exact top-20, fused by RRF with this k.
FLOOR_TOP_K = 20
FLOOR_RRF_K = 60

# Run in a child process, so that the peak RSS of the measuring process is that of
# serving queries, not of embedding the whole store.
_EMBED = """
import json, sys
from contextpipe import Pipeline
model = {"embedding.model": sys.argv[2]} if len(sys.argv) > 2 else None
pipeline = Pipeline.open(project_dir=sys.argv[1], overrides=model)
try:
    summary = pipeline.embed()
finally:
    pipeline.close()
print(json.dumps({"texts": summary.embedded, "seconds": round(summary.seconds, 2)}))
"""


def embedded_copy(source: Path, target: Path, model: str | None = None) -> dict[str, float]:
    """Copy the store of project `source` into project `target` (anew) and compute its
    vectors with `model` (None: the configured embedder) in a child process; the texts
    embedded and the seconds it took.
    """
    shutil.rmtree(target, ignore_errors=True)  # a copy cut short by an earlier crash
    shutil.copytree(source / ".contextpipe", target / ".contextpipe")
    command = [sys.executable, "-c", _EMBED, str(target), *([model] if model else [])]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"embedding {target} failed: {done.stderr.strip()}")
    return json.loads(done.stdout.splitlines()[-1])


def mix_project(projects: dict[int, str], fragments: int) -> tuple[str, dict[str, float]]:
    """The `fragments` store of `build_corpora`, copied and given vectors of the default
    embedder once per asv run: the copy's project folder and the embedding figures. A
    copy, because a store holds one vector space at a time and the keyword-only
    benchmarks above (and `bench_vectors`, with another embedder) use the originals.
    """
    source = Path(projects[fragments])
    target = source.with_name(f"{source.name}-mix")
    embedded = memoized(projects, f"mix-vectors-{fragments}", lambda: embedded_copy(source, target))
    return str(target), embedded


class _Floor:
    """The floor a configuration is measured against: bm25s top-20 over the store's
    full-text fragments (the keyword floor, issue 31) and, given an embedder, numpy exact
    top-20 by the query's vector, fused by reciprocal rank (the default mix's, issue 9).
    `lists` includes the query embedding, by the same embedder object the pipeline uses.

    numpy's product runs on one BLAS thread. On OpenBLAS's default threads (one per core)
    the product was no faster here (16 ms p50 against 12.7 ms), and its worker thread
    spins for a while after each call: an `assemble` timed right after the floor took
    46-51 ms of CPU p50 against 26-29 ms right after another `assemble` (same process,
    alternate queries), and its wall time grew alike, as the spinning thread held one of
    the two cores.
    """

    def __init__(self, project: str, embedder: contextpipe.Embedder | None = None) -> None:
        store = Path(project) / ".contextpipe"
        self.embedder = embedder
        self.blas: Any = ThreadpoolController()  # threadpoolctl is partly typed
        self.rowids, texts, hashes = _full_text(store)
        self.matrix = _vectors(store, hashes) if embedder else None
        # bm25s has no type information.
        self.tokenizer: Any = bm25s.tokenization.Tokenizer(stopwords="en")
        self.bm25: Any = bm25s.BM25()
        self.bm25.index(
            self.tokenizer.tokenize(texts, return_as="ids", show_progress=False),
            show_progress=False,
        )

    def lists(self, query: str) -> list[int]:
        """The row ids of the (fused) top `FLOOR_TOP_K` for `query`, best first."""
        tokens = self.tokenizer.tokenize([query], update_vocab=False, show_progress=False)
        keyword, _ = self.bm25.retrieve(tokens, k=FLOOR_TOP_K, show_progress=False)
        if self.embedder is None or self.matrix is None:
            return [self.rowids[row] for row in keyword[0].tolist()]
        vector = self.embedder.embed([query])[0]
        with self.blas.limit(limits=1, user_api="blas"):
            scores = self.matrix @ vector
        best = np.argpartition(-scores, FLOOR_TOP_K)[:FLOOR_TOP_K]
        nearest = best[np.argsort(-scores[best], kind="stable")]
        fused: dict[int, float] = {}
        for ranked in (keyword[0], nearest):
            for rank, row in enumerate(ranked.tolist()):
                fused[row] = fused.get(row, 0.0) + 1.0 / (FLOOR_RRF_K + rank + 1)
        best_first = sorted(fused, key=lambda row: (-fused[row], row))[:FLOOR_TOP_K]
        return [self.rowids[row] for row in best_first]


def _read(store: Path, name: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of `sql` over the store's SQLite file `name`, opened read-only."""
    with closing(sqlite3.connect(f"{(store / name).as_uri()}?mode=ro", uri=True)) as db:
        return db.execute(sql).fetchall()


def _full_text(store: Path) -> tuple[list[int], list[str], list[str]]:
    """Row ids, texts and content hashes of the store's full-text (depth-9) fragments,
    read from its SQLite files directly: the floor sees exactly the fragments the
    strategies search.
    """
    rows = _read(
        store,
        "index.sqlite3",
        "SELECT rowid, text, content_hash FROM fragments WHERE depth = 9 ORDER BY rowid",
    )
    return [int(row[0]) for row in rows], [str(row[1]) for row in rows], [row[2] for row in rows]


def _vectors(store: Path, hashes: list[str]) -> NDArray[np.float32]:
    """The vectors of the texts of `hashes`, one row each, in that order."""
    vectors = dict(_read(store, "vectors.sqlite3", "SELECT hash, vector FROM vectors"))
    missing = sum(1 for digest in hashes if digest not in vectors)
    if missing:
        raise RuntimeError(f"{store}: {missing} of {len(hashes)} full-text fragments lack a vector")
    matrix = np.frombuffer(b"".join(vectors[digest] for digest in hashes), dtype=np.float32)
    return matrix.reshape(len(hashes), -1)


#: The strategies of the default mix: each must run (status ok), or the benchmark would
#: silently measure fewer.
MIX = ("simple-keyword", "semantic-embedding", "relevance")


#: How long the warm-up may take: the first requests after embedding build or map the
#: vector matrix (and index), which at 100k on a busy machine may take longer than a
#: strategy's deadline. A mix that never runs whole fails the benchmark.
WARM_UP_SECONDS = 600


def _incomplete(
    context: contextpipe.AssembledContext, must_run: tuple[str, ...] = MIX
) -> dict[str, str] | None:
    """The strategies' statuses when one of `must_run` did not run whole, else None."""
    status = {report.name: report.status for report in context.strategies}
    return status if any(status.get(name) != "ok" for name in must_run) else None


def _warm_up(pipeline: contextpipe.Pipeline) -> None:
    """`Pipeline.warm_up`, then assemble the fixed queries until every strategy of the mix
    runs whole on all four (model, vector matrix, keyword index and tokenizer loaded), or
    fail.
    """
    pipeline.warm_up()
    give_up = time.monotonic() + WARM_UP_SECONDS
    while True:
        found = [_incomplete(pipeline.assemble(query, budget=BUDGET)) for query in QUERIES]
        missing = next((status for status in found if status), None)
        if missing is None:
            return
        if time.monotonic() > give_up:
            raise RuntimeError(f"the default mix does not run whole: {missing}")
        time.sleep(1)


#: Assemblies of other queries before `AssembleDefaultMixSteady` measures: enough to fill
#: the memos a long-running service fills (token counts, hashes, word sets, rendered
#: blocks, node variants), which a measurement right after the warm-up never reaches.
SETTLE_QUERIES = 2_000
#: The seed of the settling queries, another than the measured ones'.
_SETTLE_SEED = 7


def measure_mix(
    project: str, count: int, model: str | None = None, settle: int = 0
) -> dict[str, float]:
    """`_against_floor` for the default configuration (`model`: another embedder) and the
    default mix's floor, on `count` queries, after the pipeline's warm-up (and `settle`
    assemblies of other queries); and the peak RSS (MB) of this process before the floor
    was built and after.
    """
    overrides = {"embedding.model": model} if model else None
    pipeline = contextpipe.Pipeline.open(project_dir=project, overrides=overrides)
    try:
        _warm_up(pipeline)
        for query in latency_queries(len(QUERIES) + settle, seed=_SETTLE_SEED)[len(QUERIES) :]:
            pipeline.assemble(query, budget=BUDGET)
        rss_mb = _peak_rss_mb()
        stats = _against_floor(pipeline, _Floor(project, pipeline.embedder), MIX, count)
    finally:
        pipeline.close()
    return {**stats, "rss_mb": rss_mb, "rss_with_floor_mb": _peak_rss_mb()}


def _against_floor(
    pipeline: contextpipe.Pipeline, floor: _Floor, must_run: tuple[str, ...], count: int
) -> dict[str, float]:
    """p50/p95 of `assemble` and of `floor`, timed in turn on each of `count` queries, so
    that both see the same machine load, in wall time and in this process's CPU time (every
    thread's: on a shared host, other work lengthens the one far more than the other);
    their ratios; and how many assemblies had a strategy of `must_run` not run whole (a
    timeout).
    """
    for query in QUERIES:
        floor.lists(query)
    ours: list[float] = []
    bare: list[float] = []
    ours_cpu: list[float] = []
    bare_cpu: list[float] = []
    incomplete = 0
    for query in latency_queries(count):
        started, cpu = time.perf_counter(), time.process_time()
        context = pipeline.assemble(query, budget=BUDGET)
        ours.append((time.perf_counter() - started) * 1000)
        ours_cpu.append((time.process_time() - cpu) * 1000)
        incomplete += _incomplete(context, must_run) is not None
        started, cpu = time.perf_counter(), time.process_time()
        floor.lists(query)
        bare.append((time.perf_counter() - started) * 1000)
        bare_cpu.append((time.process_time() - cpu) * 1000)
    assembled, floored = percentiles(ours), percentiles(bare)
    assembled_cpu, floored_cpu = percentiles(ours_cpu), percentiles(bare_cpu)
    return {
        "p50": assembled["p50"],
        "p95": assembled["p95"],
        "floor_p50": floored["p50"],
        "floor_p95": floored["p95"],
        "ratio_p50": round(assembled["p50"] / max(floored["p50"], 1e-6), 2),
        "ratio_p95": round(assembled["p95"] / max(floored["p95"], 1e-6), 2),
        "cpu_p50": assembled_cpu["p50"],
        "cpu_p95": assembled_cpu["p95"],
        "floor_cpu_p50": floored_cpu["p50"],
        "floor_cpu_p95": floored_cpu["p95"],
        "incomplete": incomplete,
    }


def _peak_rss_mb() -> float:
    """This process's peak resident set size (Linux reports kilobytes)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class AssembleDefaultMix:
    """The default mix at 1k (quick), 10k and 100k fragments: p50/p95 ms of `assemble` and
    of the floor over the same 50 (quick) or 200 queries (wall time; CPU time too), their
    ratios, the assemblies in which a strategy of the mix timed out, the process's peak
    RSS, and the seconds the store's vectors took (default embedder, a child process).
    """

    params = (list(MIX_SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    # Embedding the 100k store with minilm takes most of an hour even on an idle machine.
    timeout = 4 * 3600
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        project, self.embedded = mix_project(projects, fragments)
        self.stats = memoized(
            projects, f"mix-latency-{fragments}", lambda: measure_mix(project, LATENCY_QUERIES)
        )

    def track_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["p95"]

    def track_floor_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["floor_p50"]

    def track_floor_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["floor_p95"]

    def track_cpu_p50_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["cpu_p50"]

    def track_cpu_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["cpu_p95"]

    def track_floor_cpu_p95_ms(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["floor_cpu_p95"]

    def track_ratio_p95(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["ratio_p95"]

    track_ratio_p95.unit = "x"  # type: ignore[attr-defined]

    def track_ratio_p50(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["ratio_p50"]

    track_ratio_p50.unit = "x"  # type: ignore[attr-defined]

    def track_incomplete(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["incomplete"]

    track_incomplete.unit = "assemblies"  # type: ignore[attr-defined]

    def track_rss_mb(self, projects: dict[int, str], fragments: int) -> float:
        return self.stats["rss_mb"]

    track_rss_mb.unit = "MB"  # type: ignore[attr-defined]

    def track_embed_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return self.embedded["seconds"]

    track_embed_seconds.unit = "s"  # type: ignore[attr-defined]


class AssembleDefaultMixSteady(AssembleDefaultMix):
    """`AssembleDefaultMix` at 100k in the state a long-running service reaches: measured
    after `SETTLE_QUERIES` assemblies of other queries, once its memos are full and
    forget as they go. Full run only: settling takes a minute or more.
    """

    params = ([100_000],)

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        if QUICK:
            raise NotImplementedError("full run only")  # asv: skipped, not failed
        project, self.embedded = mix_project(projects, fragments)
        self.stats = memoized(
            projects,
            f"mix-steady-{fragments}",
            lambda: measure_mix(project, LATENCY_QUERIES, settle=SETTLE_QUERIES),
        )
