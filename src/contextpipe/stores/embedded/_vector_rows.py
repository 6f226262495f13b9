"""The matrix exact vector search scores, held as float32 or float16 (speed machinery for
`_vector_matrix`; `[store] vector_dtype` picks one).

Rules:

1. float32: a numpy matrix (mapped from its file, or in memory), scored row by row by
   faiss's inner product (`_vector_faiss` rule 3). The scores of the last query are kept,
   since the strategies of one request ask with the same vector.
2. float16: half the memory and disk. numpy has no BLAS for float16, and converting the
   matrix to float32 per query costs 4-10 times the float32 product here, so the rows are
   a faiss flat index of float16 codes (`IndexScalarQuantizer`, `QT_fp16`), which scores
   them with SIMD without a float32 copy (measured: docs/embedding.md), on one thread
   (`_vector_faiss` rule 2). Similarities are those of the vectors rounded to float16,
   within 1e-3 of float32's.
3. Both are saved beside the database and mapped, not read, by the next process (faiss's
   codes with `IO_FLAG_MMAP_IFC`: its `IO_FLAG_MMAP` reads a flat index whole); a file
   holds one dtype, named by its suffix, and saving one removes the other, so a store
   never keeps (nor searches) both.
4. Both answer the same two questions: the `wanted` best rows, and, when equal
   similarities may run past a cut, every row scoring at least the cut; ids decide ties.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from . import _vector_faiss

FLOAT32 = "float32"
FLOAT16 = "float16"
_FILES = {FLOAT32: "vectors.matrix.npy", FLOAT16: "vectors.matrix.f16.faiss"}


class Rows(Protocol):
    """The searched vectors, one row per full-text fragment, in row-id order."""

    @property
    def count(self) -> int: ...

    def best(
        self, query: NDArray[np.float32], wanted: int, allowed: NDArray[np.bool_] | None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The positions and similarities of (up to) the `wanted` most similar allowed rows,
        in no order.
        """
        ...

    def write(self, path: Path) -> None:
        """Save the rows to `path` (rule 3)."""
        ...


class Float32Rows:
    """Rule 1."""

    def __init__(self, matrix: NDArray[np.float32]) -> None:
        self._matrix = matrix
        self._last: tuple[bytes, NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        return len(self._matrix)

    def _scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        key = query.tobytes()
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        scores = _vector_faiss.inner_products(self._matrix, query)
        with self._lock:
            self._last = (key, scores)
        return scores

    def best(
        self, query: NDArray[np.float32], wanted: int, allowed: NDArray[np.bool_] | None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        scores = self._scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, np.float32(-np.inf))
            wanted = min(wanted, int(allowed.sum()))
        wanted = min(wanted, len(scores))
        if wanted <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        positions = np.argpartition(-scores, wanted - 1)[:wanted].astype(np.int64)
        return positions, scores[positions]

    def write(self, path: Path) -> None:
        with path.open("wb") as out:
            np.save(out, self._matrix, allow_pickle=False)


class Float16Rows:
    """Rule 2."""

    def __init__(self, index: Any) -> None:
        self._index = index

    @classmethod
    def of(cls, matrix: NDArray[np.float32]) -> Float16Rows:
        """The rows of a float32 matrix, rounded to float16."""
        with _vector_faiss.one_thread() as faiss:
            index = faiss.IndexScalarQuantizer(
                matrix.shape[1], faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
            )
            index.train(matrix[:1])  # float16 needs no training; faiss asks for the call
            index.add(np.ascontiguousarray(matrix, dtype=np.float32))
        return cls(index)

    @property
    def count(self) -> int:
        return int(self._index.ntotal)

    def best(
        self, query: NDArray[np.float32], wanted: int, allowed: NDArray[np.bool_] | None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        faiss = _vector_faiss.faiss()
        params = None
        if allowed is not None:
            bitmap = np.packbits(allowed, bitorder="little")
            # faiss keeps a pointer, not a copy: `bitmap` outlives the search below.
            params = faiss.SearchParameters(
                sel=faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bitmap))
            )
        wanted = min(wanted, self.count)
        if wanted <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        with _vector_faiss.one_thread():
            scores, ids = self._index.search(query.reshape(1, -1), wanted, params=params)
        found = ids[0] >= 0
        return ids[0][found].astype(np.int64), scores[0][found].astype(np.float32)

    def write(self, path: Path) -> None:
        _vector_faiss.faiss().write_index(self._index, str(path))


def held_as(dtype: str, vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """`vectors` as rows of `dtype` hold them (rule 2), so that a similarity computed
    outside the rows is the one they give.
    """
    return vectors.astype(np.float16).astype(np.float32) if dtype == FLOAT16 else vectors


def similarities(
    dtype: str, vectors: NDArray[np.float32], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """Each of `vectors` (rows) times `query`, as rows of `dtype` score them: to the bit
    for float32 (rule 1), within 1e-6 for float16.
    """
    return _vector_faiss.inner_products(np.ascontiguousarray(held_as(dtype, vectors)), query)


def built(dtype: str, matrix: NDArray[np.float32]) -> Rows:
    """The rows of `matrix` held as `dtype`."""
    return Float16Rows.of(matrix) if dtype == FLOAT16 else Float32Rows(matrix)


def path(folder: Path, dtype: str) -> Path:
    """The file rows of `dtype` are saved to in `folder` (rule 3)."""
    return folder / _FILES[dtype]


def save(folder: Path, dtype: str, rows: Rows) -> None:
    """Write rows of `dtype` and remove the other dtype's file (rule 3); raises OSError when
    it cannot.
    """
    target = path(folder, dtype)
    temporary = folder / f".{target.name}.{threading.get_ident()}.tmp"
    rows.write(temporary)
    temporary.replace(target)
    for other, name in _FILES.items():
        if other != dtype:
            (folder / name).unlink(missing_ok=True)


def mapped(folder: Path, dtype: str, count: int, dimension: int) -> Rows | None:
    """The saved rows of `dtype`, mapped; None when missing, unreadable or of another shape."""
    saved = path(folder, dtype)
    try:
        if dtype == FLOAT16:
            faiss = _vector_faiss.faiss()
            index = faiss.read_index(str(saved), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
            if (int(index.ntotal), int(index.d)) != (count, dimension):
                return None
            return Float16Rows(index)
        matrix = np.load(saved, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, RuntimeError):
        return None
    if matrix.shape != (count, dimension) or matrix.dtype != np.float32:
        return None
    return Float32Rows(matrix)
