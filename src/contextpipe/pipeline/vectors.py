"""Search by meaning: the configured embedder and the store's vectors of its space, offered
to strategies as the `vectors` capability (`VectorSearch`).

Rules:

1. The capability is offered only when the embedder's model loads and the store holds
   vectors of the embedder's space. Otherwise `Backends.reasons["vectors"]` says why, and
   what to run: install the model, or index to compute (or recompute) the vectors.
2. A query's vector is the embedder's; it is never compared with vectors of another space.
3. A query is embedded once per capability (one request), however many strategies ask
   for it, and a nearest-neighbour search asked for twice is made once (`_shared_search`).
4. The model is loaded by the first request that needs it, on the request's thread, never
   in the background: onnxruntime aborts a process that exits while a session is being
   built on another thread (`graph show` did, before the model was ready).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..contract.capabilities import VECTORS, Backends, VectorIndex
from ..contract.embedding import Embedder
from ..contract.records import VectorCoverage, VectorHit
from ..contract.store import Store
from ..core.errors import EmbedderError
from ..core.models import ContextFragment, RequestFilters, RequestScope
from ._shared_search import Shared

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class QueryVectors:
    """`VectorSearch` over one store index with one embedder (rules 2 and 3)."""

    def __init__(self, embedder: Embedder, index: VectorIndex) -> None:
        self._embedder = embedder
        self._index = index
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._lock = threading.Lock()
        self._nearest = Shared[VectorHit]()

    @property
    def embedder(self) -> str:
        """The name of the embedder that made the vectors."""
        return self._embedder.name

    def coverage(self) -> VectorCoverage:
        """How much of the store has vectors to search."""
        return self._index.coverage()

    def _vector(self, query: str) -> NDArray[np.float32]:
        with self._lock:
            vector = self._vectors.get(query)
            if vector is None:
                vector = self._vectors[query] = self._embedder.embed([query])[0]
            return vector

    def nearest(self, query: str, limit: int, filters: RequestFilters) -> Sequence[VectorHit]:
        """The fragments most similar to `query` first, ties by id; one search for the
        strategies of a request that ask the same (see `_shared_search`).
        """
        return self._nearest.search(
            query, limit, filters, lambda: self._index.nearest(self._vector(query), limit, filters)
        )

    def similarities(
        self, query: str, fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `query` (None: it has no vector)."""
        return self._index.similarities(self._vector(query), fragments)

    def vectors(self, fragments: Sequence[ContextFragment]) -> Sequence[NDArray[np.float32] | None]:
        """Each fragment's vector (None: it has none)."""
        return self._index.vectors(fragments)


#: Why there are no vectors when `[embedding] enabled` is false.
DISABLED = "embedding is disabled in config ([embedding] enabled = false)"


def without_vectors(backends: Backends, reason: str) -> Backends:
    """`backends` saying why the `vectors` capability is missing."""
    return replace(backends, reasons={**backends.reasons, VECTORS: reason})


def with_vectors(
    backends: Backends, store: Store, embedder: Embedder, scope: RequestScope | None = None
) -> Backends:
    """`backends` with the `vectors` capability, the store's index bound to the request's
    `scope` as the rest of `backends` is, or with the reason it is missing (rule 1).
    """
    if not backends.available():
        return backends  # nothing indexed yet: the planner says so
    try:
        index = store.vector_index(embedder.space, scope)
        if index is None:  # an embedder whose space is cheap to tell is not loaded for it
            return without_vectors(
                backends,
                f"the store has no vectors of embedder {embedder.name!r} yet; `contextpipe"
                " index PATH` (or `Pipeline.embed()`) computes them",
            )
        embedder.load()
    except EmbedderError as exc:
        return without_vectors(backends, str(exc))
    return replace(backends, vectors=QueryVectors(embedder, index))
