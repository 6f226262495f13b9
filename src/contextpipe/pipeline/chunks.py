"""Optimising a caller's chunks (`Pipeline.optimize`): the request's vectors, then the
rules of `assembly.optimizing`. numpy and scipy load with this module, which the pipeline
imports on the first optimize request only: a CLI question needs neither.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..assembly.optimizing import Embedded, optimize
from ..contract.embedding import Embedder
from ..core.chunks import OptimizedContext, OptimizeRequest, Representative
from ..core.errors import EmbedderError
from ..text.tokens import Tokenizer
from .vectors import DISABLED

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..assembly.packing import PackingCache


def optimized(
    request: OptimizeRequest,
    embedder: Embedder,
    enabled: bool,
    tokenizer: Tokenizer,
    cache: PackingCache,
) -> OptimizedContext:
    """`request`, whose `problem()` is empty, optimised."""
    started = time.perf_counter()
    return optimize(request, chunk_vectors(request, embedder, enabled), tokenizer, cache, started)


def chunk_vectors(request: OptimizeRequest, embedder: Embedder, enabled: bool) -> Embedded:
    """The vectors of an optimize request: the caller's as given, the rest made by
    `embedder`, every row L2-normalised. A query without a vector is embedded when chunks
    are, or when its vector is needed (a chunk without a score, or the representative
    nearest the query). Vectors of two spaces are never mixed: when the caller's are not of
    the embedder's dimension, every chunk must bring one (and the query, when needed).
    """
    started = time.perf_counter()
    chunks = request.chunks
    missing = [i for i, chunk in enumerate(chunks) if chunk.embedding is None]
    wanted = bool(missing) or request.representative is Representative.QUERY
    wanted = wanted or any(chunk.score is None for chunk in chunks)
    ask = request.query if request.query_embedding is None and wanted else None
    needed = [chunks[i].text for i in missing] + ([ask] if ask is not None else [])
    given = [chunk.embedding for chunk in chunks if chunk.embedding is not None]
    if request.query_embedding is not None:
        given.append(request.query_embedding)
    dimension = len(given[0]) if given else embedder.dimension
    if needed:
        what = f"chunk {chunks[missing[0]].id!r}" if missing else "the query"
        if not enabled:
            raise EmbedderError(f"optimize request: {what} has no embedding and {DISABLED}")
        if dimension != embedder.dimension:
            raise EmbedderError(
                f"optimize request: {what} has no embedding, and the given ones ({dimension}"
                f" values) are not of the embedder {embedder.name} ({embedder.dimension}):"
                " give every chunk and the query an embedding, or none"
            )
    # Rows: the chunks in order, then the query (when it has a vector).
    rows = np.empty((len(chunks) + 1, dimension), dtype=np.float32)
    has = [i for i, chunk in enumerate(chunks) if chunk.embedding is not None]
    if request.query_embedding is not None:
        has.append(len(chunks))
    if given:
        rows[has] = _units(np.asarray(given, dtype=np.float64))
    if needed:
        rows[missing + ([len(chunks)] if ask is not None else [])] = embedder.embed(needed)
    query = rows[-1] if request.query_embedding is not None or ask is not None else None
    return Embedded(rows[:-1], query, len(needed), (time.perf_counter() - started) * 1000)


def _units(vectors: NDArray[np.float64]) -> NDArray[np.float32]:
    """Each row scaled to length 1, in float64 first: a value near float32's limit (or
    float64's) would otherwise overflow the norm.
    """
    vectors = vectors / np.abs(vectors).max(axis=1, keepdims=True)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
