"""Print how much of the budget assemblies fill, and where the rest went (issue 7, point 11).

Run from the repository root, in the environment contextpipe is installed in:

    python -m benchmarks.fill_report                                # every store, 1k/4k/16k
    python -m benchmarks.fill_report --workdir ~/.cache/cp-fill     # keep (and reuse) stores
    python -m benchmarks.fill_report --stores vendored --budgets 4000 --json fill.json

Stores (see `_fill` for what is measured and `_code_trees` for the trees):

- `corpus`: the synthetic benchmark store of `_corpus` (100k fragments unless
  `--fragments`), with `--queries` deterministic queries from its vocabulary;
- `vendored`: requests, rich, click, pydantic and urllib3 copied three times, with 32
  natural questions;
- `requests-rich`: requests and rich, traced for the one query of the issue at budget 8000:
  tokens used, fragments, dropped, and whether every proposed candidate is listed;
- `stdlib` (only when named): the standard library indexed in place, with 20 questions.

Stores are built into `--workdir` and reused from there on the next run (a temporary
folder, deleted afterwards, when it is not given); `--rebuild` builds them again, which is
needed after a change to the store's format.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import contextpipe
from contextpipe import OutputFormat

from ._code_trees import (
    REDIRECT_BUDGET,
    REDIRECT_QUERY,
    STDLIB_QUESTIONS,
    VENDORED_QUESTIONS,
    build_requests_rich,
    build_stdlib,
    build_vendored,
)
from ._corpus import build_store, latency_queries
from ._fill import BUDGETS, TARGET, ProposalLog, measure, measure_all, summarise
from ._stores import Stats, cached_project, work_folder

STORES = ("corpus", "vendored", "requests-rich", "stdlib")
#: What runs without `--stores`: the stores of the issue's target and its example.
DEFAULT_STORES = ("corpus", "vendored", "requests-rich")


def _build(args: argparse.Namespace, store: str) -> tuple[str, Callable[[Path], Stats]]:
    """The project's folder name and builder."""
    if store == "corpus":
        return f"n{args.fragments}", lambda root: build_store(root, args.fragments)
    if store == "vendored":
        return "vendored", build_vendored
    if store == "stdlib":
        return "stdlib", build_stdlib
    return "requests-rich", build_requests_rich


def _open(args: argparse.Namespace, workdir: Path, store: str) -> contextpipe.Pipeline:
    name, build = _build(args, store)
    root, stats, reused = cached_project(workdir, name, build, args.rebuild)
    print(f"{store}: {'reused ' if reused else ''}{root}: {json.dumps(stats)}", flush=True)
    return contextpipe.Pipeline.open(project_dir=root)


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def fill_table(summaries: dict[str, dict[int, dict[str, float]]]) -> str:
    """A markdown table: one row per store and budget; counts are means per query."""
    # Counts in the order `summarise` gives them, without those that are 0 in every row.
    rows = [row for summary in summaries.values() for row in summary.values()]
    fixed = {"queries", "usable", "median_fill", "p10_fill", "share_at_target", "median_tokens"}
    keys = dict.fromkeys(key for row in rows for key in row if key not in fixed)
    counts = [key for key in keys if any(row.get(key, 0.0) for row in rows)]
    header = ["store", "budget", "usable", "median fill", "p10 fill", f"≥{TARGET:.0%}", "tokens"]
    lines = [
        "| " + " | ".join(header + counts) + " |",
        "|" + "---|" * (len(header) + len(counts)),
    ]
    for store, summary in summaries.items():
        for budget, row in summary.items():
            cells = [
                store,
                str(budget),
                str(row["usable"]),
                _percent(row["median_fill"]),
                _percent(row["p10_fill"]),
                _percent(row["share_at_target"]),
                str(row["median_tokens"]),
                *(str(row.get(key, 0.0)) for key in counts),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def trace_report(
    pipeline: contextpipe.Pipeline, query: str, budget: int, output: OutputFormat
) -> Stats:
    """Print one assembly traced candidate by candidate; return its figures."""
    log = ProposalLog(pipeline)
    context, assembly = measure(pipeline, log, query, budget, output)
    print(
        f'\n"{query}" --budget {budget}: {context.tokens_used} of {assembly.usable} usable '
        f"tokens ({_percent(assembly.fill)}), {len(context.fragments)} fragments, "
        f"{len(context.dropped)} dropped"
    )
    for report in context.strategies:
        print(
            f"  {report.name}: {report.status}, allocated {report.allocated_tokens}, used "
            f"{report.used_tokens}, proposed {len(log.proposed.get(report.name, []))}, "
            f"packed {report.accepted}{'; ' + report.reason if report.reason else ''}"
        )
    print(f"  dropped by kind: {dict(sorted(assembly.drops.items()))}")
    print(f"  in neither fragments nor dropped: {len(assembly.unlisted)}")
    for unlisted in assembly.unlisted:
        fragment = unlisted.fragment
        print(
            f"    {unlisted.strategy}: {fragment.uko_uri} ({fragment.token_count} tokens, depth "
            f"{fragment.detail_depth}): {unlisted.why}"
        )
    room = assembly.usable - assembly.tokens_used
    sizes = sorted(f.token_count for f in assembly.fits_left_out)
    print(f"  left out though they fit in the {room} unused tokens: {len(sizes)} {sizes}")
    for fragment in assembly.fits_left_out:
        print(f"    {fragment.uko_uri} ({fragment.token_count})")
    return {
        "query": query,
        "budget": budget,
        "tokens_used": context.tokens_used,
        "fill": round(assembly.fill, 4),
        "fragments": len(context.fragments),
        "dropped": len(context.dropped),
        "proposed": assembly.proposed,
        "in_neither": [
            [u.fragment.uko_uri, u.fragment.token_count, u.why] for u in assembly.unlisted
        ],
        "left_out_though_it_fits": [[f.uko_uri, f.token_count] for f in assembly.fits_left_out],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", nargs="+", choices=STORES, default=list(DEFAULT_STORES))
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--fragments", type=int, default=100_000, help="size of `corpus`")
    parser.add_argument("--queries", type=int, default=50, help="queries on `corpus`")
    parser.add_argument("--output", choices=[f.value for f in OutputFormat], default="markdown")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--rebuild", action="store_true", help="build stores even if present")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    output = OutputFormat(args.output)
    print(
        f"contextpipe {contextpipe.__version__}, Python {platform.python_version()}, "
        f"{args.output} output; fill = tokens_used / (budget - frame)"
    )
    figures: Stats = {"fill": {}}
    with work_folder(args.workdir, "contextpipe-fill-") as workdir:
        query_sets = {
            "corpus": latency_queries(args.queries),
            "vendored": list(VENDORED_QUESTIONS),
            "stdlib": list(STDLIB_QUESTIONS),
        }
        for store in args.stores:
            pipeline = _open(args, workdir, store)
            try:
                if store == "requests-rich":
                    figures["requests-rich"] = trace_report(
                        pipeline, REDIRECT_QUERY, REDIRECT_BUDGET, output
                    )
                else:
                    rows = measure_all(pipeline, query_sets[store], args.budgets, output)
                    figures["fill"][store] = summarise(rows)
            finally:
                pipeline.close()
        if figures["fill"]:
            print("\nfill per store and budget (counts: means per query)\n")
            print(fill_table(figures["fill"]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
