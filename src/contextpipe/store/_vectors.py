"""The embedded store's vectors: where they are kept and how they are searched.

Rules, in the order the code follows them:

1. Vectors live in a database of their own, `<store>/vectors.sqlite3`, keyed by the
   content hash of the full-text fragment they embed. A fragment whose text a re-index
   left unchanged keeps its vector, a text stored twice is embedded once, and adding
   vectors never waits for the index writer nor makes it wait.
2. The database holds one vector space at a time (`meta`: `space`, `dimension`). A writer
   for another space empties it first: two spaces are never mixed.
3. Each `add` commits one batch, so a killed embedding run loses at most the batch in
   flight; `pending` lists what is still missing, so the next run goes on from there.
4. A writer first drops the vectors whose text is no longer in the index.
5. Search is exact: the float32 matrix of every full-text fragment that has a vector
   (rows L2-normalised by the embedder) times the query vector. The matrix and its row
   ids are built once per state of the index and of the vectors, kept in memory, and
   saved beside the database so that the next process maps them instead of reading
   every vector again.
6. Filters are applied before ranking, so a filter never hides a match; equal
   similarities are ordered by fragment id.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ..errors import StoreError
from ..logs import logger
from ..models import ContextFragment, RequestFilters
from ..storage import VectorCoverage, VectorHit
from ._health import is_damage

DATABASE_NAME = "vectors.sqlite3"
_MATRIX_NAME = "vectors.matrix.npy"
_ROWS_NAME = "vectors.rows.npy"
_MATRIX_STATE = "vectors.matrix.json"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB NOT NULL)",
)
#: The full-text fragments: the ones that get a vector.
FULL_TEXT = "depth = 9"
#: Ranked past the limit, to see whether equal similarities run past the cut.
_TIE_MARGIN = 8


class Host(Protocol):
    """What the vectors need of the store they belong to."""

    @property
    def directory(self) -> Path: ...

    @property
    def database(self) -> Path: ...

    def generation(self) -> int: ...

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]: ...

    def fragments_by_rowid(self, rowids: Sequence[int]) -> Mapping[int, ContextFragment]: ...

    def filtered_rowids(self, filters: RequestFilters) -> Sequence[int]: ...


def _move_aside(path: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    path.replace(target)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    return str(target)


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    for statement in _SCHEMA:
        connection.execute(statement)
    return connection


def _meta(connection: sqlite3.Connection) -> dict[str, str]:
    return {str(k): str(v) for k, v in connection.execute("SELECT key, value FROM meta")}


class VectorWriterSession:
    """Adds vectors of one space (rules 2-4); made by `vector_writer`."""

    def __init__(self, host: Host, connection: sqlite3.Connection, dimension: int) -> None:
        self._host = host
        self._connection = connection
        self._dimension = dimension

    def pending(self, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` full-text texts without a vector, as (content hash, text), in the
        order they were indexed; a text stored twice comes once.
        """
        if limit <= 0:
            return []
        rows = self._host.rows(
            f"SELECT content_hash, text FROM fragments WHERE {FULL_TEXT}"
            " AND content_hash NOT IN (SELECT hash FROM v.vectors)"
            " GROUP BY content_hash ORDER BY min(rowid) LIMIT ?",
            (limit,),
        )
        return [(str(digest), str(text)) for digest, text in rows]

    def add(self, content_hashes: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Keep one vector per hash and commit them together (rule 3)."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape != (len(content_hashes), self._dimension):
            raise StoreError(
                f"vectors of shape {matrix.shape} for {len(content_hashes)} texts; the space"
                f" has dimension {self._dimension}"
            )
        with self._transaction():
            self._connection.executemany(
                "INSERT OR REPLACE INTO vectors(hash, vector) VALUES (?, ?)",
                [
                    (digest, row.tobytes())
                    for digest, row in zip(content_hashes, matrix, strict=True)
                ],
            )
            _bump(self._connection)

    def coverage(self) -> VectorCoverage:
        """How many full-text texts have a vector now."""
        return _coverage(self._host)

    def prune(self) -> int:
        """Drop the vectors whose text is no longer indexed (rule 4); how many went."""
        with self._transaction():
            gone = self._connection.execute(
                "DELETE FROM vectors WHERE hash NOT IN"
                f" (SELECT content_hash FROM main_index.fragments WHERE {FULL_TEXT})"
            ).rowcount
            if gone:
                _bump(self._connection)
        return gone

    @contextmanager
    def _transaction(self) -> Generator[None]:
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        self._connection.execute("COMMIT")


def _bump(connection: sqlite3.Connection) -> None:
    connection.execute(
        "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def _coverage(host: Host) -> VectorCoverage:
    embedded, total = host.rows(
        f"SELECT count(DISTINCT content_hash) FILTER (WHERE content_hash IN"
        f" (SELECT hash FROM v.vectors)), count(DISTINCT content_hash)"
        f" FROM fragments WHERE {FULL_TEXT}"
    )[0]
    return VectorCoverage(int(embedded), int(total))


@contextmanager
def vector_writer(host: Host, space: str, dimension: int) -> Generator[VectorWriterSession]:
    """A session adding vectors of `space`; the vectors of any other space go first."""
    connection = _connect(host.directory / DATABASE_NAME)
    try:
        connection.execute("ATTACH DATABASE ? AS main_index", (str(host.database),))
        connection.execute("BEGIN IMMEDIATE")
        meta = _meta(connection)
        if (meta.get("space"), meta.get("dimension")) != (space, str(dimension)):
            connection.execute("DELETE FROM vectors")
            connection.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [("space", space), ("dimension", str(dimension))],
            )
            _bump(connection)
        connection.execute("COMMIT")
        session = VectorWriterSession(host, connection, dimension)
        session.prune()
        yield session
    finally:
        connection.close()


class EmbeddedVectors:
    """Exact search over the store's vectors of one space (rules 5 and 6)."""

    def __init__(self, host: Host, space: str, dimension: int) -> None:
        self._host = host
        self._space = space
        self._dimension = dimension
        self._matrix: tuple[tuple[int, int], NDArray[np.float32], NDArray[np.int64]] | None = None
        self._last: tuple[tuple[tuple[int, int], bytes], NDArray[np.float32]] | None = None
        self._lock = threading.Lock()

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space."""
        return _coverage(self._host)

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


def stored_space(host: Host) -> tuple[str, int] | None:
    """The space and dimension the store's vectors are of; None when it has none."""
    path = host.directory / DATABASE_NAME
    if not path.is_file():
        return None
    rows = host.rows("SELECT key, value FROM v.meta WHERE key IN ('space', 'dimension')")
    meta = {str(k): str(v) for k, v in rows}
    if "space" not in meta or "dimension" not in meta:
        return None
    return meta["space"], int(meta["dimension"])


def attach(connection: sqlite3.Connection, directory: Path) -> None:
    """Make the store's vectors readable on an index connection, as schema `v`. A damaged
    vectors database is moved aside (its vectors can be computed again) and started anew,
    so that it never stops text search.
    """
    path = directory / DATABASE_NAME
    for attempt in (1, 2):
        try:
            connection.execute("ATTACH DATABASE ? AS v", (str(path),))
            for statement in _SCHEMA:
                connection.execute(statement.replace("EXISTS ", "EXISTS v.", 1))
            connection.execute("SELECT count(*) FROM v.meta").fetchone()
            return
        except sqlite3.DatabaseError as exc:
            if any(row[1] == "v" for row in connection.execute("PRAGMA database_list")):
                connection.execute("DETACH DATABASE v")
            if attempt == 2 or not is_damage(exc):
                raise
            kept = _move_aside(path)
            logger.warning("damaged vectors moved aside", path=str(path), kept=kept, error=str(exc))
