"""Search over the embedded store's vectors (speed machinery for `_vectors`).

Rules:

1. Search is exact: the matrix of every full-text fragment that has a vector (rows
   L2-normalised by the embedder, held as `[store] vector_dtype` says: `_vector_rows`)
   times the query vector; except that a store with
   at least `[store] approximate_vectors_above` vectors, whose approximate index describes
   its vectors as they are, is searched through that index (`_vector_ann`) when the query
   has no filter.
2. The matrix and its row ids are built once per state of the index and of the vectors,
   kept in memory, and saved beside the database, so that the next process maps them
   instead of reading every vector again. A saved matrix is used only when its state
   file names that very state, and its dtype, and both files pass their checksums
   (`_sealed`); else it is built again from the vectors' database.
3. How many texts have a vector is counted once per state, or
   taken from the writer that counted it (`_vectors` rule 6); what a request may not see
   is taken out of both counts for it.
4. When a vector writer finishes, search is prepared for the next query, so that no query
   waits for it: the approximate index is brought up to date, or the exact matrix read and
   saved. A writer that fails or is killed leaves the approximate index describing older
   vectors, and so unused.
5. Filters, and the fragments a caller names as unseen, are left out before ranking, so
   neither hides a match; equal similarities are ordered by fragment id. A vector stored
   once stands for every full-text fragment of that text.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ...contract.records import VectorCoverage, VectorHit
from ...core.logs import logger
from ...core.models import ContextFragment, RequestFilters
from . import _sealed, _vector_ann, _vector_rows
from ._rows import narrows
from ._vectors import (
    FULL_TEXT,
    MATRIX_STATE_NAME,
    Host,
    counted_coverage,
    coverage,
    hidden_coverage,
    stored_vectors,
    unit_vectors,
)

_ROWS_NAME = "vectors.rows.npy"
#: Ranked past the limit, to see whether equal similarities run past the cut.
_TIE_MARGIN = 8


class EmbeddedVectors:
    """Exact search over the store's vectors of one space."""

    def __init__(self, host: Host, space: str, dimension: int) -> None:
        self._host = host
        self._space = space
        self._dimension = dimension
        self._matrix: tuple[tuple[int, int], _vector_rows.Rows, NDArray[np.int64]] | None = None
        # The approximate index of one vectors generation (None: search exactly then).
        self._approximate: (
            tuple[tuple[int, tuple[int, ...]], _vector_ann.ApproximateIndex | None] | None
        ) = None
        self._last_found: tuple[tuple[int, bytes], list[tuple[str, float]]] | None = None
        self._counted: tuple[tuple[int, int], VectorCoverage] | None = None
        self._lock = threading.Lock()

    def coverage(self, unseen: Sequence[int] | NDArray[np.int64] = ()) -> VectorCoverage:
        """How much of the store, but for the texts only the `unseen` row ids hold, has a
        vector of this space, and how it is searched; the whole store counted once per
        state of the index and of the vectors (a count reads every full text).
        """
        state = self._state()
        with self._lock:
            counted = self._counted if self._counted and self._counted[0] == state else None
        if counted is None:
            counted = (state, counted_coverage(self._host, state) or coverage(self._host))
            with self._lock:
                self._counted = counted
        found = counted[1]
        if len(unseen):
            hidden = hidden_coverage(self._host, unseen)
            found = VectorCoverage(found.embedded - hidden.embedded, found.total - hidden.total)
        if self._approximate_index(state[1]) is None:
            return found
        return VectorCoverage(found.embedded, found.total, approximate=True)

    def _state(self) -> tuple[int, int]:
        rows = self._host.rows("SELECT value FROM v.meta WHERE key = 'generation'")
        return self._host.generation(), int(rows[0][0]) if rows else 0

    def _loaded(self) -> tuple[tuple[int, int], _vector_rows.Rows, NDArray[np.int64]]:
        state = self._state()
        with self._lock:
            if self._matrix is None or self._matrix[0] != state:
                matrix, rowids = self._mapped(state) or self._build(state)
                self._matrix = (state, matrix, rowids)
            return self._matrix

    def _saved_as(self, state: tuple[int, int]) -> str:
        key = json.dumps([self._space, self._dimension, *state, self._host.vector_dtype])
        return hashlib.sha256(key.encode()).hexdigest()

    def _mapped(self, state: tuple[int, int]) -> tuple[_vector_rows.Rows, NDArray[np.int64]] | None:
        folder = self._host.directory
        dtype = self._host.vector_dtype
        try:
            saved = _sealed.as_mapping(json.loads((folder / MATRIX_STATE_NAME).read_text()))
            if saved.get("state") != self._saved_as(state):
                return None
            seals = _sealed.seals_of(saved)
            for path in (folder / _ROWS_NAME, _vector_rows.path(folder, dtype)):
                if not _sealed.intact(path, seals.get(path.name)):
                    return None
            rowids = np.load(folder / _ROWS_NAME, allow_pickle=False)
        except (OSError, ValueError):
            return None
        found = _vector_rows.mapped(folder, dtype, len(rowids), self._dimension)
        return None if found is None else (found, rowids.astype(np.int64))

    def _build(self, state: tuple[int, int]) -> tuple[_vector_rows.Rows, NDArray[np.int64]]:
        rows = self._host.rows(
            "SELECT fragments.rowid, v.vectors.vector FROM fragments"
            " JOIN v.vectors ON v.vectors.hash = fragments.content_hash"
            f" WHERE {FULL_TEXT} ORDER BY fragments.rowid"
        )
        rowids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        matrix, whole = unit_vectors([bytes(row[1]) for row in rows], self._dimension)
        if not whole.all():
            # Never served: the next vector writer drops them, and their texts are embedded
            # again (`_vectors` rule 4).
            logger.warning(
                "damaged vectors left out of search",
                count=int((~whole).sum()),
                fix="contextpipe index PATH embeds their texts again",
            )
            rowids, matrix = rowids[whole], matrix[whole]
        built = _vector_rows.built(self._host.vector_dtype, matrix)
        self._save(state, built, rowids)
        return built, rowids

    def _save(
        self, state: tuple[int, int], rows: _vector_rows.Rows, rowids: NDArray[np.int64]
    ) -> None:
        """Keep the matrix for the next process; only a shortcut, so failing is fine."""
        folder = self._host.directory
        dtype = self._host.vector_dtype
        try:
            (folder / MATRIX_STATE_NAME).unlink(missing_ok=True)  # stale until rewritten
            _vector_rows.save(folder, dtype, rows)
            temporary = folder / f".{_ROWS_NAME}.{threading.get_ident()}.tmp"
            with temporary.open("wb") as out:
                np.save(out, rowids, allow_pickle=False)
            temporary.replace(folder / _ROWS_NAME)
            seals = {
                path.name: _sealed.seal(path)
                for path in (folder / _ROWS_NAME, _vector_rows.path(folder, dtype))
            }
            temporary = folder / f".{MATRIX_STATE_NAME}.{threading.get_ident()}.tmp"
            temporary.write_text(json.dumps({"state": self._saved_as(state), "seals": seals}))
            temporary.replace(folder / MATRIX_STATE_NAME)
        except OSError:
            pass

    def nearest(
        self,
        vector: NDArray[np.float32],
        limit: int,
        filters: RequestFilters,
        unseen: Sequence[int] | NDArray[np.int64] = (),
    ) -> list[VectorHit]:
        """The most similar full-text fragments first, equal ones by id; none of the
        `unseen` row ids (searched exactly then).
        """
        query = np.asarray(vector, dtype=np.float32)
        if not (narrows(filters) or len(unseen)) and limit > 0:
            approximate = self._approximate_index(self._state()[1])
            if approximate is not None:
                return self._nearest_approximately(approximate, query, limit)
        _, rows, rowids = self._loaded()
        if limit <= 0 or not len(rowids):
            return []
        allowed = None
        if narrows(filters):
            allowed = np.isin(rowids, np.asarray(self._host.filtered_rowids(filters)))
        if len(unseen):
            seen = ~np.isin(rowids, np.asarray(unseen, np.int64))
            allowed = seen if allowed is None else allowed & seen
        wanted = limit + _TIE_MARGIN
        while True:
            best, scores = rows.best(query, wanted, allowed)
            if len(best) < wanted or scores.min() < np.sort(scores)[::-1][limit - 1]:
                break
            wanted *= 2  # equal similarities run past the cut: ids decide, not order
        fragments = self._host.fragments_by_rowid([int(rowids[i]) for i in best])
        hits = [
            VectorHit(fragments[int(rowids[i])], float(score))
            for i, score in zip(best, scores, strict=True)
            if int(rowids[i]) in fragments
        ]
        hits.sort(key=lambda hit: (-hit.similarity, hit.fragment.id))
        return hits[:limit]

    def prepare(self) -> None:
        """Rule 4. Only a shortcut: failing costs the next query time, not results."""
        try:
            _vector_ann.refresh(self._host, self._space)
            if self._approximate_index(self._state()[1]) is None:
                self._loaded()
        except (OSError, RuntimeError, sqlite3.Error) as exc:
            logger.warning("vector search not prepared", error=str(exc))

    def _approximate_index(self, generation: int) -> _vector_ann.ApproximateIndex | None:
        """The approximate index, when it describes this generation of the vectors."""
        key = (generation, _vector_ann.saved_stamp(self._host.directory))
        with self._lock:
            if self._approximate is None or self._approximate[0] != key:
                found = _vector_ann.load(self._host.directory, self._space)
                usable = (
                    found is not None
                    and found.generation == generation
                    and found.dtype == self._host.vector_dtype
                    and found.count >= self._host.approximate_vectors_above
                )
                self._approximate = (key, found if usable else None)
            return self._approximate[1]

    def _nearest_approximately(
        self, index: _vector_ann.ApproximateIndex, query: NDArray[np.float32], limit: int
    ) -> list[VectorHit]:
        wanted = limit + _TIE_MARGIN
        key = (index.generation, query.tobytes())
        with self._lock:
            last = self._last_found
        if last is not None and last[0] == key and len(last[1]) >= wanted:
            found = last[1][:wanted]
        else:
            found = index.nearest(query, wanted)
            with self._lock:
                self._last_found = (key, found)
        similarity = dict(found)
        if not similarity:
            return []
        rows = self._host.rows(
            f"SELECT rowid FROM fragments WHERE {FULL_TEXT} AND content_hash IN"
            f" ({', '.join('?' * len(similarity))})",
            sorted(similarity),
        )
        rowids = [int(row[0]) for row in rows]
        hits = [
            VectorHit(fragment, similarity[fragment.content_hash])
            for fragment in self._host.fragments_by_rowid(rowids).values()
        ]
        hits.sort(key=lambda hit: (-hit.similarity, hit.fragment.id))
        return hits[:limit]

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> list[float | None]:
        """Each fragment's similarity to `vector`; None for one without a vector."""
        digests, matrix = self._stored(fragments)
        scores = _vector_rows.similarities(self._host.vector_dtype, matrix, vector)
        found = {digest: float(score) for digest, score in zip(digests, scores, strict=True)}
        return [found.get(fragment.content_hash) for fragment in fragments]

    def vectors(self, fragments: Sequence[ContextFragment]) -> list[NDArray[np.float32] | None]:
        """Each fragment's vector, as the rows hold it; None for one without a vector."""
        digests, matrix = self._stored(fragments)
        held = _vector_rows.held_as(self._host.vector_dtype, matrix)
        found = dict(zip(digests, held, strict=True))
        return [found.get(fragment.content_hash) for fragment in fragments]

    def _stored(
        self, fragments: Sequence[ContextFragment]
    ) -> tuple[list[str], NDArray[np.float32]]:
        """The fragments' distinct content hashes that have a whole vector, and those."""
        wanted = sorted({fragment.content_hash for fragment in fragments})
        stored = stored_vectors(self._host, wanted)
        matrix, whole = unit_vectors(list(stored.values()), self._dimension)
        # A damaged vector is no vector (`_build`).
        return [digest for digest, fits in zip(stored, whole, strict=True) if fits], matrix[whole]
