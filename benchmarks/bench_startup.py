"""Start-up time of fresh processes over the same-run baseline `python -c "import sqlite3,
json"` (issue 8, point 10; see `_startup` for the probes and how they are run).

Targets on an idle 2-core machine: `import contextpipe` 150 ms, `contextpipe --help` 300 ms,
one `contextpipe query` against the 100k store 500 ms (for a keyword-only query, the
lead's reading: the issue predates the model), with the default settings: the 100k store
holds no vectors of the default mix's model (minilm would take half an hour to embed it),
so its semantic strategies are skipped and no model loads; `startup_report --store`
measures a store that has them. `query-keyword` is the same
query with `[embedding] enabled = false`. asv tracks the ratios to the baseline,
which move less with the machine's load than the milliseconds (tracked too). The query runs
in the 100k project of `build_corpora`, shared with `bench_assemble`. All probes are measured
once per asv run, `ROUNDS` runs each in rotation (a few seconds).
"""

from __future__ import annotations

from pathlib import Path

from ._corpus import LARGEST, QUICK, build_corpora, memoized
from ._startup import measure, probes, summary

#: Runs of each probe per asv run.
ROUNDS = 5 if QUICK else 15
PROBES = ("import", "help", "version", "query", "query-keyword", "query-cold")
#: The store the query probes run against.
STORE_SIZE = LARGEST


class Startup:
    """Median wall time of each probe over the baseline's, and in ms."""

    params = (list(PROBES),)
    param_names = ("probe",)
    setup_cache = staticmethod(build_corpora)
    timeout = 300

    def setup(self, projects: dict[int, str], probe: str) -> None:
        project = Path(projects[STORE_SIZE])
        self.figures = memoized(
            projects, "startup", lambda: summary(measure(probes(project), ROUNDS))
        )

    def track_ratio(self, projects: dict[int, str], probe: str) -> float:
        return self.figures[f"{probe}_ratio"]

    track_ratio.unit = "x baseline"  # type: ignore[attr-defined]

    def track_ms(self, projects: dict[int, str], probe: str) -> float:
        return self.figures[f"{probe}_ms"]

    track_ms.unit = "ms"  # type: ignore[attr-defined]
