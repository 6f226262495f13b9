"""Embedding throughput and latency of the built-in embedders (issue 9).

Targets on an idle 2-core machine: `minilm` >= 60 sentences of about 40 words a second,
`wordllama` >= 3,000. Sentences are drawn from the benchmark vocabulary with the seeded
generator of `_corpus`, 40 words each, the same every run. Also tracked: one short query
embedded alone (what a request pays) and loading the model (what a process pays once).
Each figure is the best of `ROUNDS` runs, which the machine's load disturbs least.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from contextpipe import Embedder, EmbedderRegistry, Settings

from ._corpus import QUICK, SEED, VOCABULARY

EMBEDDERS = ("minilm", "wordllama")
#: Sentences per throughput run: a few seconds each.
SENTENCES = {"minilm": 64 if QUICK else 256, "wordllama": 5_000 if QUICK else 20_000}
WORDS = 40
ROUNDS = 2 if QUICK else 5
QUERY = "how is the token budget split between strategies under a deadline"


def _sentences(count: int) -> list[str]:
    rng = random.Random(SEED)
    return [" ".join(rng.choices(VOCABULARY, k=WORDS)) for _ in range(count)]


def _best(run: Callable[[], object], rounds: int = ROUNDS) -> float:
    """The shortest wall time of `rounds` calls of `run`, in seconds."""
    times: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


class EmbedThroughput:
    """Sentences of 40 words embedded per second, one batch of them."""

    params = (list(EMBEDDERS),)
    param_names = ("embedder",)
    timeout = 600

    def setup(self, name: str) -> None:
        self.embedder: Embedder = EmbedderRegistry().embedder(Settings(), name)
        self.embedder.load()
        self.sentences = _sentences(SENTENCES[name])

    def track_sentences_per_second(self, name: str) -> float:
        seconds = _best(lambda: self.embedder.embed(self.sentences))
        return len(self.sentences) / seconds

    track_sentences_per_second.unit = "sentences/s"  # type: ignore[attr-defined]

    def track_query_ms(self, name: str) -> float:
        return 1000 * _best(lambda: self.embedder.embed([QUERY]), rounds=20)

    track_query_ms.unit = "ms"  # type: ignore[attr-defined]


class EmbedLoad:
    """Seconds to read a model and make it ready (a new embedder each time)."""

    params = (list(EMBEDDERS),)
    param_names = ("embedder",)
    timeout = 300

    def track_load_seconds(self, name: str) -> float:
        registry = EmbedderRegistry()
        return _best(lambda: registry.embedder(Settings(), name).load())

    track_load_seconds.unit = "s"  # type: ignore[attr-defined]
