"""faiss as the vector modules use it (speed machinery for `_vector_rows` and `_vector_ann`).

Rules:

1. faiss is imported when first used, so that a store searched by text only, or exactly
   in float32, never loads it (50-90 ms); it ships no types, so every value it returns is
   checked or converted by the caller.
2. faiss searches and builds run on one thread. k-means then depends on the data alone,
   and a single query is not split across OpenMP threads, which on a busy 2-core host
   spin at their barrier while the other core runs something else: flat search of
   117k x 256 float32 took 36 ms on faiss's default 2 threads and 5 ms on one
   (docs/embedding.md). The setting is per calling thread (an OpenMP rule), so it is set
   around each call.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from importlib import import_module
from typing import Any


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
