"""`Pipeline.optimize` in a warm process (issue 33): a retriever's over-fetch of 50 or 200
chunks, with the caller's vectors, packed into 2,000 tokens.

- `OptimizeLatency.track_p50_ms`: the optimisation's wall time, p50 over `REQUESTS` calls
  (targets: 5 ms at 50 chunks, 15 ms at 200);
- `OptimizeLatency.track_floor_p50_ms` / `track_ratio_p50`: the floor, timed in turn in
  the same run: plain top-k packing of the same chunks (each text counted, the best taken
  until the budget is spent), and the optimisation over it. On a shared machine the
  milliseconds move by a fifth between runs; both move alike, so compare the ratio;
- `OptimizeEmbedding.track_embedding_share`: 50 chunks without vectors, embedded by the
  configured embedder: the share of the call that embedding takes.

The chunks are deterministic: topics of five chunks each, their vectors the topic's plus
noise, a tenth of them copies of another chunk with other capitals, a tenth paraphrases
(the same words in another order, a near vector).

    python -m benchmarks.bench_optimize        # the figures, for the issue note
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from typing import Any

import numpy as np

import contextpipe

from ._corpus import QUICK, VOCABULARY

REQUESTS = 50 if QUICK else 200
BUDGET = 2000
DIMENSION = 384


def over_fetch(count: int, vectors: bool = True) -> dict[str, Any]:
    """An optimize request of `count` chunks (see the module docstring)."""
    rng = np.random.default_rng(count)
    topics = rng.normal(size=(count // 5 + 1, DIMENSION))
    chunks: list[dict[str, Any]] = []
    for i in range(count):
        topic = i // 5
        words = [VOCABULARY[int(w)] for w in rng.integers(0, len(VOCABULARY), size=60)]
        text = " ".join(words)
        vector = topics[topic] + 0.6 * rng.normal(size=DIMENSION)
        if i % 10 == 3:  # a copy of the chunk before, in capitals
            text, vector = chunks[-1]["text"].upper(), np.asarray(chunks[-1]["embedding"])
        elif i % 10 == 7:  # a paraphrase of it: its words reordered, its vector nudged
            text = " ".join(reversed(chunks[-1]["text"].split()))
            vector = np.asarray(chunks[-1]["embedding"]) + 0.05 * rng.normal(size=DIMENSION)
        chunk: dict[str, Any] = {"id": f"c{i}", "text": text, "score": round(1 - i / count, 4)}
        chunk["embedding"] = [round(float(v), 5) for v in vector]
        chunks.append(chunk)
    if not vectors:
        for chunk in chunks:
            del chunk["embedding"]
    return {"chunks": chunks, "query": " ".join(VOCABULARY[:6]), "token_budget": BUDGET}


def _top_k_packing(pipeline: contextpipe.Pipeline, request: contextpipe.OptimizeRequest) -> int:
    """The floor: the best chunks whose counted texts fit the budget, nothing more."""
    tokenizer = pipeline.tokenizer
    left, taken = request.token_budget, 0
    for chunk in sorted(request.chunks, key=lambda c: -(c.score or 0.0)):
        tokens = tokenizer.count(chunk.text)
        if tokens <= left:
            left, taken = left - tokens, taken + 1
    return taken


def _ms(call: Any) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def measure(count: int) -> dict[str, float]:
    """p50 of the optimisation and of its floor, timed in turn, and the ratio."""
    with tempfile.TemporaryDirectory() as project:
        pipeline = contextpipe.Pipeline.open(project_dir=project)
        contextpipe.warm_up_tokenizer(pipeline.tokenizer.name)  # as the service's warm-up does
        request = contextpipe.OptimizeRequest.model_validate(over_fetch(count))
        for _ in range(5):
            pipeline.optimize(request)
            _top_k_packing(pipeline, request)
        optimized, floor = [], []
        for _ in range(REQUESTS):
            optimized.append(_ms(lambda: pipeline.optimize(request)))
            floor.append(_ms(lambda: _top_k_packing(pipeline, request)))
        result = pipeline.optimize(request)
        pipeline.close()
    p50, floor_p50 = statistics.median(optimized), statistics.median(floor)
    return {
        "p50_ms": round(p50, 3),
        "floor_p50_ms": round(floor_p50, 3),
        "ratio_p50": round(p50 / floor_p50, 2),
        "kept": len(result.chunks),
        "removed": len(result.removed),
        "tokens_out": result.tokens_used,
    }


def measure_embedding(count: int = 50) -> dict[str, float]:
    """The share of a call without vectors that embedding takes (the model loaded)."""
    with tempfile.TemporaryDirectory() as project:
        pipeline = contextpipe.Pipeline.open(project_dir=project)
        request = contextpipe.OptimizeRequest.model_validate(over_fetch(count, vectors=False))
        pipeline.optimize(request)
        results = [pipeline.optimize(request) for _ in range(3 if QUICK else 10)]
        pipeline.close()
    embedding = statistics.median(r.stats.embedding_ms for r in results)
    latency = statistics.median(r.stats.latency_ms for r in results)
    return {
        "embedding_ms": round(embedding, 1),
        "latency_ms": round(latency, 1),
        "embedding_share": round(embedding / latency, 3),
    }


class OptimizeLatency:
    """`Pipeline.optimize` of 50 and 200 chunks with caller vectors, and its floor."""

    params: tuple[list[int], ...] = ([50, 200],)
    param_names = ("chunks",)
    unit = "ms"
    timeout = 600

    def setup(self, count: int) -> None:
        self.figures = measure(count)

    def track_p50_ms(self, count: int) -> float:
        return self.figures["p50_ms"]

    def track_floor_p50_ms(self, count: int) -> float:
        return self.figures["floor_p50_ms"]

    def track_ratio_p50(self, count: int) -> float:
        return self.figures["ratio_p50"]


class OptimizeEmbedding:
    """50 chunks without vectors: the share of the call that embedding them takes."""

    unit = "share"
    timeout = 600

    def setup(self) -> None:
        self.figures = measure_embedding()

    def track_embedding_share(self) -> float:
        return self.figures["embedding_share"]


if __name__ == "__main__":
    for size in (50, 200):
        print(size, json.dumps(measure(size)), flush=True)
    print("no vectors, 50", json.dumps(measure_embedding()), flush=True)
