"""Computing the vectors of what was indexed: after the text and the graph, never before.

Rules:

1. Text and graph are committed first and usable at once; vectors follow, for the
   full-text fragments that have none in the embedder's space yet (a re-index embeds only
   new and changed texts).
2. A change of embedder (another space) drops the old vectors and embeds everything again:
   two spaces are never mixed.
3. Vectors are committed a batch at a time: a killed run loses at most the batch in flight,
   and the next run goes on from there.
4. Progress is told as texts, so that a bar can show the rate and the time left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from ..contract.embedding import Embedder
from ..contract.store import Store

#: Texts read from the store at once; embedded and committed `batch_size` at a time.
_READ_AHEAD = 4096


class EmbedProgress(Protocol):
    """Told how many texts lack a vector, then of each batch embedded."""

    def started(self, label: str, total: int, /) -> None: ...

    def embedded(self, count: int, /) -> None: ...


@dataclass(frozen=True)
class EmbedSummary:
    """What one embedding run did, and how much of the store has vectors after it."""

    embedder: str
    embedded: int
    with_vectors: int
    total: int
    seconds: float


def embed_pending(
    store: Store, embedder: Embedder, batch_size: int, progress: EmbedProgress | None = None
) -> EmbedSummary:
    """Embed every full-text fragment that has no vector of `embedder`'s space yet."""
    started = time.perf_counter()
    embedder.load()  # a missing or damaged model fails here, before anything changes
    done = 0
    with store.vector_writer(embedder.space, embedder.dimension) as writer:
        before = writer.coverage()
        if progress is not None:
            progress.started(f"embedding ({embedder.name})", before.total - before.embedded)
        while pending := writer.pending(_READ_AHEAD):
            for start in range(0, len(pending), batch_size):
                batch = pending[start : start + batch_size]
                vectors = embedder.embed([text for _, text in batch])
                writer.add([digest for digest, _ in batch], vectors)
                done += len(batch)
                if progress is not None:
                    progress.embedded(len(batch))
        after = writer.coverage()
    return EmbedSummary(
        embedder.name, done, after.embedded, after.total, time.perf_counter() - started
    )
