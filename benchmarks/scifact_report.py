"""SciFact (BEIR, train split) nDCG@10 of the assembled context (issue 7, point 11).

Run from the repository root, in the environment contextpipe is installed in:

    python -m benchmarks.scifact_report                        # data from CONTEXTPIPE_EVAL_DATA
    python -m benchmarks.scifact_report --data ../shared/data --workdir ~/.cache/cp-scifact
    python -m benchmarks.scifact_report --limit 100            # the first 100 queries only

Method (the figure is only comparable when measured the same way):

1. Each abstract of `corpus.jsonl` becomes the markdown file `corpus/<_id>.md`: its title as
   a level-1 heading, a blank line, its text. The folder is indexed with
   `Pipeline.index` into a fresh store (default config: `simple-keyword` only).
2. Each query of `qrels/train.tsv` (its claim from `queries.jsonl`) is assembled once with
   `Pipeline.assemble(claim, budget=8000, output="json")`, as
   `contextpipe query CLAIM --budget 8000 --format json` does.
3. The ranking is the order of `fragments` in the result, each mapped back to its
   abstract's id by its source path; an abstract counts once, at its first position.
4. nDCG@10 uses the qrels scores as gains (`gain / log2(rank + 1)`, ideal from the qrels),
   averaged over every judged query (a query whose context holds no relevant abstract
   scores 0). Recall@100 is the share of a query's relevant abstracts among the first 100
   of the ranking; a context at budget 8000 holds far fewer than 100 abstracts, so it is
   the recall of the whole context.

The data is read where it lies (`--data`, else `$CONTEXTPIPE_EVAL_DATA`, else
`../shared/data` next to the repository); only the generated project goes to `--workdir`
(a temporary folder, deleted afterwards, when it is not given).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import contextpipe
from contextpipe import OutputFormat

from ._stores import Stats, cached_project, index_project, work_folder

BUDGET = 8000
OUTPUT = OutputFormat.JSON
_REPOSITORY = Path(__file__).resolve().parent.parent

#: Query id -> {abstract id -> gain}.
Qrels = dict[str, dict[str, int]]


def data_folder(given: Path | None) -> Path:
    """The SciFact folder: `given`, `$CONTEXTPIPE_EVAL_DATA` or `../shared/data`, each either
    the folder holding `scifact/` or `scifact/` itself.
    """
    environ = os.environ.get("CONTEXTPIPE_EVAL_DATA")
    base = given or (Path(environ) if environ else _REPOSITORY.parent / "shared" / "data")
    for folder in (base, base / "scifact"):
        if (folder / "corpus.jsonl").is_file():
            return folder
    raise SystemExit(f"scifact_report: no corpus.jsonl in {base} or {base / 'scifact'}")


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """The records of a JSON-lines file."""
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def read_qrels(path: Path) -> Qrels:
    """`query-id corpus-id score` rows (one header line) as gains per query."""
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as rows:
        reader = csv.reader(rows, delimiter="\t")
        next(reader)
        for query_id, corpus_id, score in reader:
            if int(score) > 0:
                qrels.setdefault(query_id, {})[corpus_id] = int(score)
    return qrels


def write_corpus(data: Path, root: Path) -> Stats:
    """Each abstract as `root/corpus/<id>.md` (title heading, then text); index the folder."""
    started = time.perf_counter()
    corpus = root / "corpus"
    corpus.mkdir()
    records = read_jsonl(data / "corpus.jsonl")
    for record in records:
        title = str(record["title"]).strip() or str(record["_id"])
        body = f"# {title}\n\n{str(record['text']).strip()}\n"
        (corpus / f"{record['_id']}.md").write_text(body, encoding="utf-8")
    written = time.perf_counter() - started
    stats = index_project(root, [corpus])
    return {"abstracts": len(records), "write_s": round(written, 2), **stats}


def ranking(context: contextpipe.AssembledContext) -> list[str]:
    """Abstract ids in the order of the result's fragments, each once."""
    ids = (Path(fragment.source.path).stem for fragment in context.fragments)
    return list(dict.fromkeys(ids))


def ndcg(ranked: Sequence[str], gains: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with the qrels' gains."""
    dcg = sum(gains.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    best = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / best if best else 0.0


def recall(ranked: Sequence[str], gains: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant abstracts among the first k."""
    return len(set(ranked[:k]) & set(gains)) / len(gains) if gains else 0.0


def evaluate(
    pipeline: contextpipe.Pipeline,
    claims: Mapping[str, str],
    qrels: Qrels,
    budget: int = BUDGET,
    output: OutputFormat = OUTPUT,
) -> Stats:
    """Mean nDCG@10 and Recall@100 over the judged queries, and what the contexts held."""
    scores: list[float] = []
    recalls: list[float] = []
    sizes: list[int] = []
    fills: list[float] = []
    started = time.perf_counter()
    for query_id, gains in qrels.items():
        context = pipeline.assemble(claims[query_id], budget=budget, output=output)
        ranked = ranking(context)
        scores.append(ndcg(ranked, gains))
        recalls.append(recall(ranked, gains))
        sizes.append(len(ranked))
        fills.append(context.tokens_used / budget)
    seconds = time.perf_counter() - started
    return {
        "queries": len(scores),
        "ndcg@10": round(statistics.fmean(scores), 4),
        "recall@100": round(statistics.fmean(recalls), 4),
        "median_abstracts_in_context": statistics.median(sizes),
        "median_tokens_used_over_budget": round(statistics.median(fills), 4),
        "seconds": round(seconds, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--output", choices=[f.value for f in OutputFormat], default=OUTPUT.value)
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--rebuild", action="store_true", help="index again even if present")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    data = data_folder(args.data)
    claims = {str(q["_id"]): str(q["text"]) for q in read_jsonl(data / "queries.jsonl")}
    qrels = read_qrels(data / "qrels" / "train.tsv")
    if args.limit is not None:
        qrels = dict(list(qrels.items())[: args.limit])
    print(
        f"contextpipe {contextpipe.__version__}, Python {platform.python_version()}; "
        f"SciFact train from {data}; budget {args.budget}, {args.output} output"
    )
    with work_folder(args.workdir, "contextpipe-scifact-") as workdir:
        root, built, reused = cached_project(
            workdir, "scifact", lambda r: write_corpus(data, r), args.rebuild
        )
        print(f"store: {'reused ' if reused else ''}{root}: {json.dumps(built)}", flush=True)
        pipeline = contextpipe.Pipeline.open(project_dir=root)
        try:
            figures = evaluate(pipeline, claims, qrels, args.budget, OutputFormat(args.output))
        finally:
            pipeline.close()
    print(json.dumps(figures))
    if args.json:
        args.json.write_text(json.dumps({"build": built, **figures}, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
