"""What `optimize` buys (issue 33), on SciFact train and the LoCoMo dev set: over-fetch 50
by BM25 (bm25s) and by the dense model (the configured embedder, MiniLM by default), then
fit them into 2,000 tokens two ways through the same packer:

- `top-k`: the over-fetch in the retriever's order, packed until the budget is spent (the
  optimiser with every rule switched off: no paraphrase is near enough, no cluster holds
  two, no MMR);
- `optimize`: the default request (duplicates, paraphrases, topic clusters, MMR).

For each: recall of the relevant items inside the budget (SciFact: the judged documents;
LoCoMo: the evidence turns), nDCG@10 of what was kept in the order kept, and the mean
tokens used. The vectors are computed once and kept in `--cache` (default
`~/.cache/cp-optimize`), never in the repository; the data is read where it lies.

    python -m benchmarks.optimize_report                     # both sets, every query
    python -m benchmarks.optimize_report --limit 200 --sets scifact
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import ir_measures
import numpy as np
from numpy.typing import NDArray

import contextpipe
from contextpipe.faces.evaluation.beir import read_beir
from contextpipe.faces.evaluation.locomo import read_locomo

from .scifact_report import data_folder

BUDGET = 2000
OVER_FETCH = 50
_NDCG = ir_measures.parse_measure("nDCG@10")
#: The optimiser with every rule off: what plain top-k packing of the same chunks keeps.
_TOP_K = {"semantic_dedup_threshold": 1.0, "cluster_threshold": 1.0, "mmr": False}


class Corpus:
    """Texts to over-fetch from, their vectors, and a BM25 index over them."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], vectors: NDArray[np.float32]):
        self.ids, self.texts, self.vectors = list(ids), list(texts), vectors
        self._bm25 = bm25s.BM25()
        self._bm25.index(
            bm25s.tokenize(self.texts, stopwords="en", show_progress=False), show_progress=False
        )

    def by_bm25(self, query: str) -> list[tuple[int, float]]:
        k = min(OVER_FETCH, len(self.ids))
        found, scores = self._bm25.retrieve(
            bm25s.tokenize([query], stopwords="en", show_progress=False), k=k, show_progress=False
        )
        return [(int(d), float(s)) for d, s in zip(found[0], scores[0], strict=True) if s > 0]

    def by_vector(self, vector: NDArray[np.float32]) -> list[tuple[int, float]]:
        scores = self.vectors @ vector
        best = np.argsort(-scores, kind="stable")[:OVER_FETCH]
        return [(int(i), float(scores[i])) for i in best]


def _vectors(
    pipeline: contextpipe.Pipeline, texts: Sequence[str], cache: Path
) -> NDArray[np.float32]:
    """The embedder's vectors of `texts`, from `cache` when it holds them."""
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    path = cache / f"{pipeline.embedder.name}-{digest}.npy"
    if path.is_file():
        return np.load(path)
    vectors = np.concatenate(
        [pipeline.embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)]
    )
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def _packed(
    pipeline: contextpipe.Pipeline,
    corpus: Corpus,
    found: list[tuple[int, float]],
    query_vector: NDArray[np.float32],
    options: dict[str, Any],
) -> tuple[list[str], int]:
    chunks = [
        {
            "id": corpus.ids[i],
            "text": corpus.texts[i],
            "score": score,
            "embedding": corpus.vectors[i].tolist(),
        }
        for i, score in found
    ]
    if not chunks:
        return [], 0
    result = pipeline.optimize(
        {
            "chunks": chunks,
            "query_embedding": query_vector.tolist(),
            "token_budget": BUDGET,
            **options,
        }
    )
    return [chunk.id for chunk in result.chunks], result.tokens_used


def _figures(
    runs: dict[str, tuple[list[str], int]], relevant: dict[str, dict[str, int]]
) -> dict[str, float]:
    recall = [
        len(set(kept) & {d for d, r in relevant[q].items() if r > 0})
        / max(1, sum(1 for r in relevant[q].values() if r > 0))
        for q, (kept, _) in runs.items()
    ]
    ranking = {
        q: {d: float(len(kept) - rank) for rank, d in enumerate(kept)}
        for q, (kept, _) in runs.items()
        if kept
    }
    ndcg = ir_measures.calc_aggregate([_NDCG], relevant, ranking)[_NDCG]  # pyright: ignore[reportUnknownMemberType]
    return {
        "recall_in_budget": round(statistics.fmean(recall), 4),
        "ndcg@10": round(float(ndcg) * len(ranking) / len(runs), 4),  # empty runs score 0
        "tokens": round(statistics.fmean(tokens for _, tokens in runs.values()), 1),
    }


def _compare(
    pipeline: contextpipe.Pipeline,
    questions: list[tuple[str, Corpus, str, NDArray[np.float32]]],
    relevant: dict[str, dict[str, int]],
) -> dict[str, dict[str, float]]:
    """Each retriever's over-fetch, fitted both ways, over every question."""
    figures: dict[str, dict[str, float]] = {}
    retrievers: dict[str, Callable[[Corpus, str, NDArray[np.float32]], list[tuple[int, float]]]] = {
        "bm25": lambda corpus, text, _: corpus.by_bm25(text),
        "dense": lambda corpus, _, vector: corpus.by_vector(vector),
    }
    for name, retrieve in retrievers.items():
        for way, options in (("top-k", _TOP_K), ("optimize", {})):
            runs = {
                question_id: _packed(
                    pipeline, corpus, retrieve(corpus, text, vector), vector, options
                )
                for question_id, corpus, text, vector in questions
            }
            figures[f"{name} {way}"] = _figures(runs, relevant)
            print(f"  {name} {way}: {figures[f'{name} {way}']}", flush=True)
    return figures


def scifact(pipeline: contextpipe.Pipeline, data: Path, cache: Path, limit: int | None) -> Any:
    beir = read_beir(data, "train")
    if limit is not None:
        beir = beir.first(limit)
    records = [
        json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines() if line
    ]
    ids = [str(r["_id"]) for r in records]
    texts = [f"{r.get('title', '')}\n{r['text']}".strip() for r in records]
    corpus = Corpus(ids, texts, _vectors(pipeline, texts, cache))
    asked = list(beir.queries.items())
    vectors = _vectors(pipeline, [text for _, text in asked], cache)
    questions = [(q, corpus, text, vectors[n]) for n, (q, text) in enumerate(asked)]
    print(f"scifact train: {len(questions)} queries, {len(ids)} documents", flush=True)
    return _compare(pipeline, questions, beir.qrels)


def locomo(pipeline: contextpipe.Pipeline, data: Path, cache: Path, limit: int | None) -> Any:
    questions: list[tuple[str, Corpus, str, NDArray[np.float32]]] = []
    relevant: dict[str, dict[str, int]] = {}
    for conversation in read_locomo(data / "locomo" / "locomo_dev.json"):
        texts = [f"{turn.speaker}: {turn.text}" for turn in conversation.turns]
        corpus = Corpus([t.id for t in conversation.turns], texts, _vectors(pipeline, texts, cache))
        asked = [q for q in conversation.questions if q.evidence]
        vectors = _vectors(pipeline, [q.text for q in asked], cache)
        for n, question in enumerate(asked):
            question_id = f"{conversation.sample_id}/{n}"
            questions.append((question_id, corpus, question.text, vectors[n]))
            relevant[question_id] = dict.fromkeys(question.evidence, 1)
    questions = questions[:limit] if limit is not None else questions
    relevant = {q: relevant[q] for q, *_ in questions}
    print(f"locomo dev: {len(questions)} questions", flush=True)
    return _compare(pipeline, questions, relevant)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "cp-optimize")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--sets", nargs="+", default=["scifact", "locomo"])
    args = parser.parse_args(argv)
    folder = data_folder(args.data)
    with tempfile.TemporaryDirectory() as project:
        pipeline = contextpipe.Pipeline.open(project_dir=project)
        contextpipe.warm_up_tokenizer(pipeline.tokenizer.name)
        report = {}
        if "scifact" in args.sets:
            report["scifact"] = scifact(pipeline, folder, args.cache, args.limit)
        if "locomo" in args.sets:
            report["locomo"] = locomo(pipeline, folder.parent, args.cache, args.limit)
        pipeline.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
