"""Print how long contextpipe takes to start, beside a bare interpreter start measured in the
same run (issue 8, point 10). Run from the repository root, in the environment contextpipe is
installed in:

    python -m benchmarks.startup_report                         # import, --help, --version
    python -m benchmarks.startup_report --store ~/.cache/cp/n100000   # and a query at 100k
    python -m benchmarks.startup_report --store DIR --rounds 20 --json startup.json

The query probes run with the default settings (`query`: the default mix, the embedding
model loaded when the store holds vectors of it) and with `[embedding] enabled = false`
(`query-keyword`); after the table, the strategies each of them ran, so that a store
without vectors of the default model (the semantic strategies skipped, no model loaded) is
seen for what it is.

`--store DIR` is a project folder holding a store in `DIR/.contextpipe`, as the workdirs of
`latency_report` and `fill_report` keep them (`WORKDIR/n100000`); when it holds none, a
corpus of `--fragments` fragments (100k: about a minute) is generated and indexed there
first. What is measured, and how, is in `_startup`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import contextpipe

from ._corpus import build_store
from ._startup import BASELINE, measure, probes, strategies_run, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="project folder holding (or to hold) a store")
    parser.add_argument("--fragments", type=int, default=100_000, help="size of a new store")
    parser.add_argument("--rounds", type=int, default=10, help="runs of each probe")
    parser.add_argument("--json", type=Path, help="also write the medians and ratios here")
    args = parser.parse_args(argv)

    if args.store is not None and not (args.store / ".contextpipe").is_dir():
        print(f"{args.store}: no store; building one of {args.fragments} fragments", flush=True)
        print(f"{args.store}: {build_store(args.store, args.fragments)}", flush=True)
    found = probes(args.store)
    load_before = os.getloadavg()[0]
    samples = measure(found, args.rounds)
    load_after = os.getloadavg()[0]
    print(
        f"contextpipe {contextpipe.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, {args.rounds} rounds, "
        f"load average {load_before:.2f} before, {load_after:.2f} after"
    )
    if args.store is not None:
        print(f"store: {args.store.resolve()}")
    baseline = statistics.median(samples[BASELINE])
    print(f"\n{'probe':<13} {'median ms':>10} {'min ms':>8} {'x baseline':>11} {'target ms':>10}")
    for probe in found:
        values = samples[probe.name]
        median = statistics.median(values)
        target = "" if probe.target_ms is None else f"{probe.target_ms:.0f}"
        verdict = ""
        if probe.target_ms is not None:
            verdict = "  ok" if median <= probe.target_ms else "  over"
        print(
            f"{probe.name:<13} {median:>10.1f} {min(values):>8.1f} {median / baseline:>11.2f} "
            f"{target:>10}{verdict}"
        )
    for probe in found:
        if probe.cwd is not None and not probe.cold_cache:
            print(f"\n{probe.name}: {strategies_run(probe)}")
    if args.json is not None:
        args.json.write_text(json.dumps(summary(samples), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
