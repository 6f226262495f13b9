"""How much of the usable budget `assemble` fills (issue 7, point 11; see `_fill`).

Target: median fill at least 90 % of the usable budget at budgets 1,000, 4,000 and 16,000,
on the 100k-fragment benchmark store and on a tree vendoring the same packages three times.

- `VendoredFill`: requests, rich, click, pydantic and urllib3 copied three times from the
  installed packages and indexed once per asv run (its own `setup_cache`, ~15 s), with the
  32 questions of `_code_trees`.
- `CorpusFill`: the 100k store of `_corpus`, shared with `bench_assemble` (the same
  `setup_cache`, so asv builds it once for both), with 20 (quick) or 50 deterministic
  queries from its vocabulary.

Each measures every query at every budget once per run (kept as JSON next to the store), so
the several `track_*` report the same assemblies. `python -m benchmarks.fill_report` prints
the same figures with the reasons behind them.
"""

from __future__ import annotations

from pathlib import Path

import contextpipe

from ._code_trees import VENDORED_QUESTIONS, build_vendored
from ._corpus import LARGEST, QUICK, build_corpora, latency_queries, memoized
from ._fill import BUDGETS, UNLISTED_KINDS, measure_all, summarise
from ._stores import json_memo, scratch_folder

CORPUS_SIZE = LARGEST
CORPUS_QUERIES = 20 if QUICK else 50

Summary = dict[str, float]


def build_vendored_cache() -> str:
    """asv `setup_cache`: the vendored tree, indexed; returns its project folder."""
    root = scratch_folder("contextpipe-fill-") / "vendored"
    root.mkdir()
    build_vendored(root)
    return str(root)


build_vendored_cache.timeout = 900  # type: ignore[attr-defined]


def fill_by_budget(project_dir: str, queries: list[str]) -> dict[str, Summary]:
    """`_fill.summarise` of every query at every budget, keyed by the budget as text (JSON)."""
    pipeline = contextpipe.Pipeline.open(project_dir=project_dir)
    try:
        summary = summarise(measure_all(pipeline, queries))
    finally:
        pipeline.close()
    return {str(budget): row for budget, row in summary.items()}


class _FillTracks:
    """The tracked figures of one budget's summary (`self.summary`, set by `setup`)."""

    params = (list(BUDGETS),)
    param_names = ("budget",)
    timeout = 900
    summary: Summary

    def track_median_fill(self, *_: object) -> float:
        return round(100 * self.summary["median_fill"], 1)

    track_median_fill.unit = "% of usable budget"  # type: ignore[attr-defined]

    def track_p10_fill(self, *_: object) -> float:
        return round(100 * self.summary["p10_fill"], 1)

    track_p10_fill.unit = "% of usable budget"  # type: ignore[attr-defined]

    def track_in_neither(self, *_: object) -> float:
        """Proposed candidates in neither `fragments` nor `dropped`, per query (mean)."""
        return sum(self.summary[f"in neither: {why}"] for why in UNLISTED_KINDS)

    track_in_neither.unit = "candidates per query"  # type: ignore[attr-defined]


class VendoredFill(_FillTracks):
    """Fill on the tree that vendors the same packages three times."""

    setup_cache = staticmethod(build_vendored_cache)

    def setup(self, project_dir: str, budget: int) -> None:
        memo = Path(project_dir).parent / "fill.json"
        summaries = json_memo(memo, lambda: fill_by_budget(project_dir, list(VENDORED_QUESTIONS)))
        self.summary = summaries[str(budget)]


class CorpusFill(_FillTracks):
    """Fill on the 100k-fragment benchmark store."""

    setup_cache = staticmethod(build_corpora)

    def setup(self, projects: dict[int, str], budget: int) -> None:
        def measure() -> dict[str, Summary]:
            return fill_by_budget(projects[CORPUS_SIZE], latency_queries(CORPUS_QUERIES))

        summaries = memoized(projects, f"fill-{CORPUS_SIZE}-q{CORPUS_QUERIES}", measure)
        self.summary = summaries[str(budget)]  # type: ignore[assignment]
