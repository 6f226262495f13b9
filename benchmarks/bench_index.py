"""Indexing the Python standard library shipped with the running interpreter (issue 3,
point 7): a full index without embeddings (target: under 60 s on the 2-core machine) and a
no-change re-index (target: under 3 s).

The library is indexed in place (`sysconfig.get_paths()["stdlib"]`, without its
`site-packages`/`dist-packages`) into a store in a temporary project folder: nothing is
copied, and the build fails if anything under the library changed. Compiled `__pycache__`
files are walked, read and skipped as binary, as they would be in a real checkout.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from contextpipe import Pipeline

from ._corpus import QUICK

#: Installed third-party packages live under the stdlib folder; they are not the stdlib.
EXCLUDE = ["/site-packages/", "/dist-packages/"]
#: Rounds of `StdlibGraphStats` (each one index change and two `graph stats` runs).
GRAPH_ROUNDS = 3 if QUICK else 7


def stdlib_path() -> Path:
    """The standard library folder of the running interpreter."""
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def open_pipeline(project: Path) -> Pipeline:
    """A pipeline whose store is in `project` and which does not walk installed packages."""
    return Pipeline.open(project_dir=project, overrides={"ingest.exclude": EXCLUDE})


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Size and mtime of everything under `root` except installed packages."""
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("site-packages", "dist-packages")]
        for name in [*filenames, *dirnames]:
            path = Path(dirpath, name)
            stat = path.lstat()
            found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def index_stdlib() -> dict[str, Any]:
    """asv `setup_cache`: index the stdlib into a new store once per run; return the project
    folder, the seconds `Pipeline.index` took and what it wrote. Under asv the working
    directory is the run's temporary cache folder, so the project goes there; called from
    anywhere else it goes to a new temporary folder, never into the repository.
    """
    stdlib = stdlib_path()
    cwd = Path.cwd().resolve()
    inside_temp = cwd.is_relative_to(Path(tempfile.gettempdir()).resolve())
    project = Path(tempfile.mkdtemp(prefix="contextpipe-stdlib-", dir=cwd if inside_temp else None))
    before = _snapshot(stdlib)
    pipeline = open_pipeline(project)
    try:
        if Path(pipeline.store.location).resolve().is_relative_to(stdlib):
            raise RuntimeError(f"the store {pipeline.store.location} is inside {stdlib}")
        started = time.perf_counter()
        (summary,) = pipeline.index([stdlib])
        seconds = time.perf_counter() - started
        fragments = pipeline.stats().fragments
    finally:
        pipeline.close()
    if _snapshot(stdlib) != before:
        raise RuntimeError(f"indexing changed files under {stdlib}")
    if summary.indexed < 1000 or fragments != summary.fragments_written:
        raise RuntimeError(f"unexpected index of {stdlib}: {summary}, {fragments} fragments")
    return {
        "project": str(project),
        "seconds": seconds,
        "files_seen": summary.files_seen,
        "files_indexed": summary.indexed,
        "skipped": sum(summary.skipped.values()),
        "nodes": summary.nodes_written,
        "edges": summary.edges_written,
        "fragments": summary.fragments_written,
    }


# About 95 s on an idle 2-core machine (7,733 files, 2,261 of them text); allow for a busy
# or slower one.
index_stdlib.timeout = 1200  # type: ignore[attr-defined]


class StdlibIndex:
    """Seconds `Pipeline.index` took to index the stdlib into an empty store (setup_cache:
    walking, reading, parsing, token counting, SQLite and FTS5 inserts committed file by file).
    """

    setup_cache = staticmethod(index_stdlib)
    unit = "s"

    def track_full_index_seconds(self, built: dict[str, Any]) -> float:
        return round(built["seconds"], 2)


class StdlibReindex:
    """Seconds a no-change re-index of the indexed stdlib takes: a new pipeline in this
    process (settings and plugins loaded, not timed), then `index` timed, which includes
    loading the tokenizer, walking and comparing sizes and mtimes, as a CLI run does.
    """

    setup_cache = staticmethod(index_stdlib)
    unit = "s"

    def setup(self, built: dict[str, Any]) -> None:
        self.pipeline = open_pipeline(Path(built["project"]))

    def teardown(self, built: dict[str, Any]) -> None:
        self.pipeline.close()

    def track_noop_reindex_seconds(self, built: dict[str, Any]) -> float:
        started = time.perf_counter()
        (summary,) = self.pipeline.index([stdlib_path()])
        seconds = time.perf_counter() - started
        if summary.indexed or summary.removed or summary.fragments_written:
            raise RuntimeError(f"a no-change re-index changed something: {summary}")
        return round(seconds, 2)


class StdlibIndexSize:
    """What the full index of the stdlib wrote (from setup_cache; no extra work)."""

    setup_cache = staticmethod(index_stdlib)
    unit = "count"

    def track_files_seen(self, built: dict[str, Any]) -> int:
        return int(built["files_seen"])

    def track_files_indexed(self, built: dict[str, Any]) -> int:
        return int(built["files_indexed"])

    def track_nodes(self, built: dict[str, Any]) -> int:
        return int(built["nodes"])

    def track_edges(self, built: dict[str, Any]) -> int:
        return int(built["edges"])

    def track_fragments(self, built: dict[str, Any]) -> int:
        return int(built["fragments"])


def _wall_seconds(argv: list[str], cwd: Path) -> float:
    """Seconds from spawn to exit of one command, which must succeed."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True, timeout=300)
    return time.perf_counter() - started


class StdlibGraphStats:
    """Seconds `contextpipe graph stats` takes on the indexed stdlib (about 250k fragments,
    347k declared edges; issue 7 point 12, target about 1 s): the first count after the
    index changed (a note is indexed as another root before it, untimed) and the count the
    store then remembers, each beside `python -c "import sqlite3, json"` in the same rounds.
    Medians of `GRAPH_ROUNDS` rounds, whole processes as a user runs them.
    """

    setup_cache = staticmethod(index_stdlib)
    unit = "s"
    timeout = 600

    def setup(self, built: dict[str, Any]) -> None:
        project = Path(built["project"])
        command = str(Path(sys.executable).with_name("contextpipe"))
        notes = project / "notes"
        notes.mkdir(exist_ok=True)
        samples: dict[str, list[float]] = {"first": [], "remembered": [], "baseline": []}
        for round_ in range(GRAPH_ROUNDS):
            (notes / "note.md").write_text(f"# Note {round_}\n\nA change to the index.\n")
            pipeline = open_pipeline(project)
            try:
                pipeline.index([notes])
            finally:
                pipeline.close()
            samples["first"].append(_wall_seconds([command, "graph", "stats"], project))
            samples["remembered"].append(_wall_seconds([command, "graph", "stats"], project))
            baseline = [sys.executable, "-c", "import sqlite3, json"]
            samples["baseline"].append(_wall_seconds(baseline, project))
        self.medians = {name: statistics.median(values) for name, values in samples.items()}

    def track_first_seconds(self, built: dict[str, Any]) -> float:
        return round(self.medians["first"], 3)

    def track_remembered_seconds(self, built: dict[str, Any]) -> float:
        return round(self.medians["remembered"], 3)

    def track_baseline_seconds(self, built: dict[str, Any]) -> float:
        return round(self.medians["baseline"], 3)

    def track_first_ratio(self, built: dict[str, Any]) -> float:
        return round(self.medians["first"] / self.medians["baseline"], 1)

    track_first_ratio.unit = "x baseline"  # type: ignore[attr-defined]
