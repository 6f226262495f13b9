"""Start-up time as an agent calling contextpipe pays it (issue 8, point 10): the wall time
of fresh processes, from spawn to exit, each beside the same-run baseline
`python -c "import sqlite3, json"` (a bare interpreter start with two standard modules).

Probes, in rotation (one run of each per round, so that a busy machine slows all of them
alike; the baseline is measured in the same rounds):

| probe | command | target (idle 2-core machine) |
|---|---|---|
| `import` | `python -c "import contextpipe"` | 150 ms |
| `help` | `contextpipe --help` | 300 ms |
| `version` | `contextpipe --version` | fast |
| `query` | `contextpipe query "budget allocation strategy" --budget 1000` | - |
| `query-keyword` | the same with `[embedding] enabled = false` | 500 ms |
| `query-cold` | `query` with an empty cache folder | - |

`query` runs with the default settings: the default mix, whose semantic strategies load
the embedding model when the store holds vectors of its space. `query-keyword` leaves the
model out (the semantic strategies are skipped). `query-cold` is the first query after an
install: the tokenizer's ranks and the model's optimised form are rebuilt.

The query probes run in the folder of a project with a store (as `_corpus.build_store`
writes one: `DIR/.contextpipe`), and only when one is given. With a warm cache the model
loads only when the store holds vectors of its space (its space is told from the cached
digest of its weights), and the vector search runs only then (`strategies_run` says which
strategies ran).
Every command runs with `XDG_CACHE_HOME` set to a folder of the measurement's own, so the
user's cache is neither used nor written: for `query` and `query-keyword` it is warmed by
one query before the rounds, for `query-cold` it is a new empty folder each time.
`CONTEXTPIPE_*` variables of the calling environment are left out, and so is
`PYTHONDONTWRITEBYTECODE`: modules load from cached bytecode, as they do from an installed
package (the warm-up run before the rounds writes it for an editable install).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BASELINE = "baseline"
QUERY = "budget allocation strategy"
QUERY_BUDGET = 1000
#: The setting that leaves the embedding model out (`[embedding] enabled = false`).
KEYWORD_ONLY = (("CONTEXTPIPE_EMBEDDING__ENABLED", "false"),)


@dataclass(frozen=True)
class Probe:
    """One command to time, in a fresh process each run."""

    name: str
    argv: tuple[str, ...]
    target_ms: float | None = None
    cwd: Path | None = None
    cold_cache: bool = False  # an empty cache folder for every run
    env: tuple[tuple[str, str], ...] = ()  # set for this probe only


def probes(project: Path | None) -> list[Probe]:
    """The baseline and every probe; the query probes only with a `project` holding a store."""
    python = sys.executable
    command = str(Path(python).with_name("contextpipe"))
    found = [
        Probe(BASELINE, (python, "-c", "import sqlite3, json")),
        Probe("import", (python, "-c", "import contextpipe"), 150),
        Probe("help", (command, "--help"), 300),
        Probe("version", (command, "--version")),
    ]
    if project is not None:
        query = (command, "query", QUERY, "--budget", str(QUERY_BUDGET))
        # The 500 ms predates the embedding model: it is the keyword-only query's.
        found.append(Probe("query", query, None, project))
        found.append(Probe("query-keyword", query, 500, project, env=KEYWORD_ONLY))
        found.append(Probe("query-cold", query, None, project, cold_cache=True))
    return found


def _run(
    probe: Probe, env: dict[str, str], cache: Path, extra: Sequence[str] = ()
) -> tuple[float, bytes]:
    """Milliseconds from spawn to exit of one run of `probe` (with `extra` arguments), and
    what it printed.
    """
    run_env = {**env, **dict(probe.env), "XDG_CACHE_HOME": str(cache)}
    started = time.perf_counter()
    done = subprocess.run(
        [*probe.argv, *extra],
        cwd=probe.cwd,
        env=run_env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(probe.argv)} failed: {done.stderr.decode().strip()}")
    return elapsed, done.stdout


def _environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CONTEXTPIPE_") and key != "PYTHONDONTWRITEBYTECODE"
    }


def strategies_run(probe: Probe) -> str:
    """Which strategies a query probe's request ran, and why the others did not: one run
    with `--format json` (e.g. "relevance ok, semantic-embedding skipped (...)").
    """
    with tempfile.TemporaryDirectory(prefix="contextpipe-startup-") as folder:
        _, printed = _run(probe, _environment(), Path(folder), ("--format", "json"))
    reports = json.loads(printed)["strategies"]
    return ", ".join(
        f"{report['name']} {report['status']}"
        + (f" ({report['reason']})" if report["status"] != "ok" else "")
        for report in reports
    )


def measure(found: Sequence[Probe], rounds: int) -> dict[str, list[float]]:
    """`rounds` runs of every probe, in rotation; milliseconds per probe name."""
    env = _environment()
    samples: dict[str, list[float]] = {probe.name: [] for probe in found}
    with tempfile.TemporaryDirectory(prefix="contextpipe-startup-") as folder:
        warm = Path(folder) / "warm"
        for probe in found:  # every command once: the warm cache, the OS's file cache
            _run(probe, env, warm)
        for _ in range(rounds):
            for probe in found:
                cache = Path(tempfile.mkdtemp(dir=folder)) if probe.cold_cache else warm
                samples[probe.name].append(_run(probe, env, cache)[0])
                if probe.cold_cache:
                    shutil.rmtree(cache)
    return samples


def summary(samples: dict[str, list[float]]) -> dict[str, float]:
    """Per probe: the median (`NAME_ms`) and its ratio to the baseline's (`NAME_ratio`)."""
    baseline = statistics.median(samples[BASELINE])
    result: dict[str, float] = {}
    for name, values in samples.items():
        median = statistics.median(values)
        result[f"{name}_ms"] = round(median, 1)
        result[f"{name}_ratio"] = round(median / baseline, 2)
    return result
