"""Print end-to-end `assemble` p50/p95 (and the framework-overhead breakdown) for the
issue note. Run from the repository root, in the environment contextpipe is installed in:

    python -m benchmarks.latency_report                      # 100k fragments, 50 queries
    python -m benchmarks.latency_report --fragments 1000 10000 100000 --queries 200
    python -m benchmarks.latency_report --workdir /tmp/cp    # keep (and reuse) the stores
    python -m benchmarks.latency_report --mix --workdir /tmp/cp  # and the default mix
    python -m benchmarks.latency_report --mix --model wordllama  # ... with another embedder

Corpora are generated and indexed into a temporary folder (deleted afterwards unless
`--workdir` is given; a store already in the workdir is reused, not re-indexed).
`--mix` also measures the default mix against its floor (`bench_assemble.measure_mix`) on
a copy of each store given vectors (`nN-mix-MODEL` in the workdir, reused likewise):
minilm embeds ~60-100 texts a second on 2 idle cores, so 100k takes about half an hour.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
from pathlib import Path

import contextpipe

from ._corpus import BUDGET, build_store
from ._instant import LAYOUTS
from .bench_assemble import embedded_copy, measure_latency, measure_mix
from .bench_overhead import STORE_SIZE, open_overhead_env, stage_medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fragments", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--overhead-runs", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--mix", action="store_true", help="also the default mix and its floor")
    parser.add_argument("--model", default=None, help="embedder of --mix (default: configured)")
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="contextpipe-latency-"))
    print(
        f"contextpipe {contextpipe.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, budget {BUDGET}, markdown output, o200k_base"
    )
    try:
        projects: dict[int, str] = {}
        for size in sorted({*args.fragments, STORE_SIZE}):
            root = workdir / f"n{size}"
            if (root / ".contextpipe").is_dir():
                print(f"n={size}: reusing {root}")
            else:
                print(f"n={size}: {build_store(root, size)}", flush=True)
            projects[size] = str(root)

        print(f"\nsimple-keyword over FTS5 against bm25s alone, {args.queries} queries:")
        for size in args.fragments:
            print(f"  n={size:>7}: {measure_latency(projects[size], args.queries)}", flush=True)

        if args.mix:
            label = args.model or "default embedder"
            print(f"\ndefault mix ({label}) against its floor, {args.queries} queries:")
            for size in args.fragments:
                mixed = workdir / f"n{size}-mix-{args.model or 'default'}"
                if (mixed / ".contextpipe").is_dir():
                    print(f"  n={size:>7}: reusing {mixed}")
                else:
                    embedded = embedded_copy(Path(projects[size]), mixed, args.model)
                    print(f"  n={size:>7}: vectors {embedded}", flush=True)
                stats = measure_mix(str(mixed), args.queries, args.model)
                print(f"  n={size:>7}: {stats}", flush=True)

        print(
            f"\nframework overhead, instant strategies, 500 candidates, "
            f"median of {args.overhead_runs} (ms):"
        )
        for layout in LAYOUTS:
            env = open_overhead_env(projects, layout)
            try:
                print(f"  {layout}: {stage_medians(env, args.overhead_runs)}", flush=True)
            finally:
                env["pipeline"].close()
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
