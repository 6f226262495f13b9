"""Exact search over the embedded store's vectors (speed machinery for `_vectors`).

Rules:

1. Search is exact: the float32 matrix of every full-text fragment that has a vector
   (rows L2-normalised by the embedder) times the query vector.
2. The matrix and its row ids are built once per state of the index and of the vectors,
   kept in memory, and saved beside the database, so that the next process maps them
   instead of reading every vector again. A saved matrix is used only when its state
   file names that very state.
3. The similarities of the last query vector are kept: the strategies of one request
   ask with the same vector.
4. Filters are applied before ranking, so a filter never hides a match; equal
   similarities are ordered by fragment id.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..models import ContextFragment, RequestFilters
from ..storage import VectorCoverage, VectorHit
from ._vectors import FULL_TEXT, Host, coverage

_MATRIX_NAME = "vectors.matrix.npy"
_ROWS_NAME = "vectors.rows.npy"
_MATRIX_STATE = "vectors.matrix.json"
#: Ranked past the limit, to see whether equal similarities run past the cut.
_TIE_MARGIN = 8


class EmbeddedVectors:
    """Exact search over the store's vectors of one space."""

    def __init__(self, host: Host, space: str, dimension: int) -> None:
        self._host = host
        self._space = space
        self._dimension = dimension
        self._matrix: tuple[tuple[int, int], NDArray[np.float32], NDArray[np.int64]] | None = None
        self._last: tuple[tuple[tuple[int, int], bytes], NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space."""
        return coverage(self._host)

    def _state(self) -> tuple[int, int]:
        rows = self._host.rows("SELECT value FROM v.meta WHERE key = 'generation'")
        return self._host.generation(), int(rows[0][0]) if rows else 0

    def _loaded(self) -> tuple[tuple[int, int], NDArray[np.float32], NDArray[np.int64]]:
        state = self._state()
        with self._lock:
            if self._matrix is None or self._matrix[0] != state:
                matrix, rowids = self._mapped(state) or self._build(state)
                self._matrix = (state, matrix, rowids)
            return self._matrix

    def _saved_as(self, state: tuple[int, int]) -> str:
        key = json.dumps([self._space, self._dimension, *state])
        return hashlib.sha256(key.encode()).hexdigest()

    def _mapped(
        self, state: tuple[int, int]
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]] | None:
        folder = self._host.directory
        try:
            if json.loads((folder / _MATRIX_STATE).read_text()) != self._saved_as(state):
                return None
            matrix = np.load(folder / _MATRIX_NAME, mmap_mode="r", allow_pickle=False)
            rowids = np.load(folder / _ROWS_NAME, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if matrix.shape != (len(rowids), self._dimension) or matrix.dtype != np.float32:
            return None
        return matrix, rowids.astype(np.int64)

    def _build(self, state: tuple[int, int]) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        rows = self._host.rows(
            "SELECT fragments.rowid, v.vectors.vector FROM fragments"
            " JOIN v.vectors ON v.vectors.hash = fragments.content_hash"
            f" WHERE {FULL_TEXT} ORDER BY fragments.rowid"
        )
        rowids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(
            len(rows), self._dimension
        )
        self._save(state, matrix, rowids)
        return matrix, rowids

    def _save(
        self, state: tuple[int, int], matrix: NDArray[np.float32], rowids: NDArray[np.int64]
    ) -> None:
        """Keep the matrix for the next process; only a shortcut, so failing is fine."""
        folder = self._host.directory
        try:
            (folder / _MATRIX_STATE).unlink(missing_ok=True)  # stale until rewritten
            for name, array in ((_MATRIX_NAME, matrix), (_ROWS_NAME, rowids)):
                temporary = folder / f".{name}.{threading.get_ident()}.tmp"
                with temporary.open("wb") as out:
                    np.save(out, array, allow_pickle=False)
                temporary.replace(folder / name)
            temporary = folder / f".{_MATRIX_STATE}.{threading.get_ident()}.tmp"
            temporary.write_text(json.dumps(self._saved_as(state)))
            temporary.replace(folder / _MATRIX_STATE)
        except OSError:
            pass

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> list[VectorHit]:
        """The most similar full-text fragments first, equal ones by id."""
        state, matrix, rowids = self._loaded()
        if limit <= 0 or not len(rowids):
            return []
        scores = self._scores(state, matrix, np.asarray(vector, dtype=np.float32))
        if filters.paths or filters.kinds:
            allowed = np.isin(rowids, np.asarray(self._host.filtered_rowids(filters)))
            scores = np.where(allowed, scores, -np.inf)
            usable = int(allowed.sum())
        else:
            usable = len(rowids)
        wanted = min(usable, limit + _TIE_MARGIN)
        if wanted == 0:
            return []
        best = np.argpartition(-scores, wanted - 1)[:wanted]
        cut = scores[best].min()
        if len(best) > limit and cut == np.sort(scores[best])[::-1][limit - 1]:
            best = np.flatnonzero(scores >= cut)  # ties at the cut: ids decide, not order
        fragments = self._host.fragments_by_rowid([int(rowids[i]) for i in best])
        hits = [
            VectorHit(fragments[int(rowids[i])], float(scores[i]))
            for i in best
            if int(rowids[i]) in fragments
        ]
        hits.sort(key=lambda hit: (-hit.similarity, hit.fragment.id))
        return hits[:limit]

    def _scores(
        self, state: tuple[int, int], matrix: NDArray[np.float32], query: NDArray[np.float32]
    ) -> NDArray[np.float32]:
        """Every row's similarity to `query`; the last query's are kept, since the
        strategies of one request (semantic-embedding, relevance) ask with the same vector.
        """
        key = (state, query.tobytes())
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        scores = matrix @ query
        with self._lock:
            self._last = (key, scores)
        return scores

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> list[float | None]:
        """Each fragment's similarity to `vector`; None for one without a vector."""
        wanted = sorted({fragment.content_hash for fragment in fragments})
        found: dict[str, float] = {}
        query = np.asarray(vector, dtype=np.float32)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self._host.rows(
                "SELECT hash, vector FROM v.vectors WHERE hash IN"
                f" ({', '.join('?' for _ in chunk)})",
                chunk,
            )
            for digest, blob in rows:
                found[str(digest)] = float(np.frombuffer(blob, dtype=np.float32) @ query)
        return [found.get(fragment.content_hash) for fragment in fragments]
