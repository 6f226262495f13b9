"""Optimising a caller's chunks (`Pipeline.optimize`): the request's vectors, then the
rules of `assembly.optimizing`. numpy and scipy load with this module, which the pipeline
imports on the first optimize request only: a CLI question needs neither.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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
    given = [chunk.embedding for chunk in request.chunks]
    needed = [chunk.text for chunk in request.chunks if chunk.embedding is None]
    wanted = bool(needed) or request.representative is Representative.QUERY
    wanted = wanted or any(chunk.score is None for chunk in request.chunks)
    ask = request.query if request.query_embedding is None and wanted else None
    if ask is not None:
        needed.append(ask)
    made: NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
    if needed:
        missing = next((c.id for c in request.chunks if c.embedding is None), None)
        what = f"chunk {missing!r}" if missing is not None else "the query"
        if not enabled:
            raise EmbedderError(f"optimize request: {what} has no embedding and {DISABLED}")
        theirs = next((v for v in (*given, request.query_embedding) if v is not None), None)
        if theirs is not None and len(theirs) != embedder.dimension:
            raise EmbedderError(
                f"optimize request: {what} has no embedding, and the given ones ({len(theirs)}"
                f" values) are not of the embedder {embedder.name} ({embedder.dimension}):"
                " give every chunk and the query an embedding, or none"
            )
        made = embedder.embed(needed)
    rows = iter(made)
    chunks = np.stack([_unit(v) if v is not None else next(rows) for v in given])
    query = None
    if request.query_embedding is not None:
        query = _unit(request.query_embedding)
    elif ask is not None:
        query = next(rows)
    return Embedded(chunks, query, len(needed), (time.perf_counter() - started) * 1000)


def _unit(vector: Sequence[float]) -> NDArray[np.float32]:
    """`vector` scaled to length 1, in float64 first: a value near float32's limit (or
    float64's) would otherwise overflow the norm.
    """
    array = np.asarray(vector, dtype=np.float64)
    array /= np.abs(array).max()
    return (array / np.linalg.norm(array)).astype(np.float32)
