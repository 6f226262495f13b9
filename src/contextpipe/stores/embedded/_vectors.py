"""The embedded store's vectors: where they are kept and how they are added (searching
them is `_vector_matrix`'s job).

Rules, in the order the code follows them:

1. Vectors live in a database of their own, `<store>/vectors.sqlite3`, keyed by the
   content hash of the full-text fragment they embed. A fragment whose text a re-index
   left unchanged keeps its vector, a text stored twice is embedded once, and adding
   vectors never waits for the index writer nor makes it wait.
2. The database holds one vector space at a time (`meta`: `space`, `dimension`). A writer
   for another space empties it first: two spaces are never mixed.
3. Each `add` commits one batch, so a killed embedding run loses at most the batch in
   flight; `pending` lists what is still missing, so the next run goes on from there. A
   batch holding a vector that is not of unit length (the embedder contract) is refused:
   stored vectors are all of unit length, which the full check relies on.
4. A writer first drops the vectors whose text is no longer in the index, and those not
   of unit length (damaged inside their record, where SQLite sees nothing wrong), so that
   their texts are embedded again; search leaves such vectors out until then.
5. A damaged vectors database is moved aside and started anew, with what was derived from
   it: vectors can be computed again, and they never stop text search.
6. How many texts have a vector takes a read of every full text to count: a writer keeps
   its count, and a reader uses it while the index and the vectors are as counted.

numpy is imported only to add vectors: opening a store for text search does not load it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...contract.records import VectorCoverage
from ...core.errors import StoreError
from ...core.logs import logger
from ...core.models import ContextFragment, RequestFilters
from ._health import is_damage, rollback

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DATABASE_NAME = "vectors.sqlite3"
#: The state file of the saved exact matrix, and the approximate index: computed from the
#: vectors database, they go with it (rule 5).
MATRIX_STATE_NAME = "vectors.matrix.json"
APPROXIMATE_NAME = "vectors.ivf.json"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB NOT NULL)",
)
#: The full-text fragments: the ones that get a vector.
FULL_TEXT = "depth = 9"
#: How far from 1 a vector's length may be (float32 rounding of a normalised vector).
UNIT_TOLERANCE = 1e-3


class Host(Protocol):
    """What the vectors need of the store they belong to."""

    @property
    def directory(self) -> Path: ...

    @property
    def database(self) -> Path: ...

    @property
    def approximate_vectors_above(self) -> int: ...

    @property
    def vector_dtype(self) -> str: ...

    def generation(self) -> int: ...

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]: ...

    def fragments_by_rowid(self, rowids: Sequence[int]) -> Mapping[int, ContextFragment]: ...

    def filtered_rowids(self, filters: RequestFilters) -> Sequence[int]: ...


def _move_aside(path: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    path.replace(target)
    for name in (path.name + "-wal", path.name + "-shm", MATRIX_STATE_NAME, APPROXIMATE_NAME):
        path.with_name(name).unlink(missing_ok=True)
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
        import numpy as np

        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.shape != (len(content_hashes), self._dimension):
            raise StoreError(
                f"vectors of shape {matrix.shape} for {len(content_hashes)} texts; the space"
                f" has dimension {self._dimension}"
            )
        norms = np.linalg.norm(matrix, axis=1)
        wrong = np.flatnonzero(~(np.abs(norms - 1) <= UNIT_TOLERANCE))
        if len(wrong):
            raise StoreError(
                f"a vector of length {norms[wrong[0]]:.3f} for text {content_hashes[wrong[0]]};"
                " an embedder gives vectors of length 1"
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
        """How many full-text texts have a vector now; kept for readers, tagged with the
        state of the index and of the vectors it was counted at (rule 6).
        """
        generations = f"{self._host.generation()}:{_meta(self._connection).get('generation', '0')}"
        found = coverage(self._host)
        self._connection.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('coverage', ?)",
            (f"{generations}:{found.embedded}:{found.total}",),
        )
        return found

    def prune(self) -> int:
        """Drop the vectors whose text is no longer indexed, and those damaged inside their
        record (rule 4); how many went.
        """
        with self._transaction():
            gone = self._connection.execute(
                "DELETE FROM vectors WHERE hash NOT IN"
                f" (SELECT content_hash FROM main_index.fragments WHERE {FULL_TEXT})"
            ).rowcount
            rows = self._connection.execute("SELECT hash, vector FROM vectors").fetchall()
            _, whole = unit_vectors([bytes(blob) for _, blob in rows], self._dimension)
            damaged = [str(rows[at][0]) for at in (~whole).nonzero()[0]]
            self._connection.executemany(
                "DELETE FROM vectors WHERE hash = ?", [(digest,) for digest in damaged]
            )
            if damaged:
                logger.warning("damaged vectors dropped", count=len(damaged), first=damaged[0])
            gone += len(damaged)
            if gone:
                _bump(self._connection)
        return gone

    @contextmanager
    def _transaction(self) -> Generator[None]:
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            rollback(self._connection)
            raise
        self._connection.execute("COMMIT")


def _bump(connection: sqlite3.Connection) -> None:
    connection.execute(
        "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def unit_vectors(
    blobs: Sequence[bytes], dimension: int
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """Stored vectors as a matrix, and which of them are whole: of `dimension` float32 and
    of unit length, as rule 3 stores every one (a row of another width is zeros). Others
    were damaged inside their record, where SQLite sees nothing wrong.
    """
    import numpy as np

    width = 4 * dimension
    fitting = np.fromiter((len(blob) == width for blob in blobs), bool, len(blobs))
    zeros = bytes(width)
    joined = b"".join(blob if fits else zeros for blob, fits in zip(blobs, fitting, strict=True))
    matrix = np.frombuffer(joined, np.float32).reshape(len(blobs), dimension)
    whole = fitting & (np.abs(np.linalg.norm(matrix, axis=1) - 1) <= UNIT_TOLERANCE)
    return matrix, whole


def stored_vectors(host: Host, hashes: Sequence[str]) -> dict[str, bytes]:
    """The stored vector (float32 bytes) of each of `hashes` that has one."""
    found: dict[str, bytes] = {}
    for start in range(0, len(hashes), 500):  # well under SQLite's limit of parameters
        chunk = hashes[start : start + 500]
        rows = host.rows(
            f"SELECT hash, vector FROM v.vectors WHERE hash IN ({', '.join('?' * len(chunk))})",
            chunk,
        )
        found.update((str(digest), bytes(blob)) for digest, blob in rows)
    return found


def counted_coverage(host: Host, state: tuple[int, int]) -> VectorCoverage | None:
    """The coverage a writer counted at `state` (index and vectors generations), if any."""
    rows = host.rows("SELECT value FROM v.meta WHERE key = 'coverage'")
    if not rows:
        return None
    try:
        index, vectors, embedded, total = (int(part) for part in str(rows[0][0]).split(":"))
    except ValueError:
        return None
    return VectorCoverage(embedded, total) if (index, vectors) == state else None


def hidden_coverage(host: Host, unseen: Iterable[int]) -> VectorCoverage:
    """The distinct full texts that only the rows `unseen` hold (what one request may not
    see), and how many of them have a vector: each is counted by its rows, by the index.
    """
    embedded, total = host.rows(
        "WITH hidden(hash, held) AS (SELECT content_hash, count(*) FROM fragments"
        f" WHERE rowid IN (SELECT value FROM json_each(?)) AND {FULL_TEXT} GROUP BY content_hash)"
        " SELECT count(*) FILTER (WHERE hash IN (SELECT hash FROM v.vectors)), count(*)"
        " FROM hidden WHERE held = (SELECT count(*) FROM fragments AS f"
        f" WHERE f.content_hash = hidden.hash AND f.{FULL_TEXT})",
        (json.dumps([int(rowid) for rowid in unseen]),),
    )[0]
    return VectorCoverage(int(embedded), int(total))


def coverage(host: Host) -> VectorCoverage:
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


def attach(connection: sqlite3.Connection, directory: Path, read_only: bool = False) -> None:
    """Make the store's vectors readable on an index connection, as schema `v`. A damaged
    vectors database is moved aside (its vectors can be computed again) and started anew,
    so that it never stops text search. A store read as immutable (`read_only`: on a disk
    that cannot be written) reads its vectors so too, or none when it has none.
    """
    path = directory / DATABASE_NAME
    if read_only:
        name = f"{path.as_uri()}?immutable=1" if path.is_file() else ":memory:"
        connection.execute("ATTACH DATABASE ? AS v", (name,))
        for statement in _SCHEMA:
            connection.execute(statement.replace("EXISTS ", "EXISTS v.", 1))
        return
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
