"""faiss as the vector modules use it (speed machinery for `_vector_rows` and `_vector_ann`).

Rules:

1. faiss is imported when first used (50-90 ms on the loaded host), so that a store
   searched by text only never loads it; it ships no types, so every value it returns is
   checked or converted by the caller.
2. faiss searches and builds run on one thread. k-means then depends on the data alone,
   and a single query is not split across OpenMP threads, which on a busy 2-core host
   spin at their barrier while the other core runs something else: flat search of
   117k x 256 float32 took 36 ms on faiss's default 2 threads and 5 ms on one
   (docs/embedding.md). The setting is per calling thread (an OpenMP rule), so it is set
   around each call.
3. Every float32 similarity is faiss's inner product of a row with the query, the one its
   inverted file computes: one arithmetic for exact search, approximate search and
   fragments scored on their own, which therefore agree to the bit (1,400 of 1,400 scores
   of the 100k inverted file; numpy's `sdot` matched 943, `einsum` 640). It also scores
   a 117k x 256 matrix in 4.6 ms, where OpenBLAS's matrix-vector product took 16-18 ms
   on this host (`einsum` 6.4 ms).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from importlib import import_module
from typing import Any

import numpy as np
from numpy.typing import NDArray


def faiss() -> Any:
    """The faiss module (rule 1)."""
    return import_module("faiss")


@contextmanager
def one_thread() -> Generator[Any]:
    """The faiss module, with faiss on one thread on this thread until the block ends
    (rule 2).
    """
    module = faiss()
    before = int(module.omp_get_max_threads())
    module.omp_set_num_threads(1)
    try:
        yield module
    finally:
        module.omp_set_num_threads(before)


def inner_products(matrix: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row of `matrix` (C-ordered float32, mapped or not) times `query` (rule 3)."""
    rows, dimension = matrix.shape
    vector = np.ascontiguousarray(query, dtype=np.float32)
    if vector.shape != (dimension,):
        raise ValueError(f"a query of shape {vector.shape} for rows of dimension {dimension}")
    # Named, so that each array outlives the call: faiss gets bare pointers to them.
    table = np.ascontiguousarray(matrix, dtype=np.float32)
    scores = np.empty(rows, dtype=np.float32)
    if rows:
        module = faiss()
        module.fvec_inner_products_ny(
            module.swig_ptr(scores),
            module.swig_ptr(vector),
            module.swig_ptr(table),
            dimension,
            rows,
        )
    return scores
