"""The embedded store: one directory holding a SQLite database (WAL) with fragments, the
files they came from, and an FTS5 index of the full-text fragments.

A writer commits whole files: everything read from one file (its row, nodes, fragments,
full-text rows and edges) commits together or not at all, so an interrupted `index` leaves
every file at its old or its new state and the next run redoes only what was not
committed. Commits are frequent enough that the write-ahead log stays small. Readers get
one connection per thread, since strategies run in worker threads.

Opening checks, cheaply, that the database is one this version wrote and is whole: the
file's header and size, the tables and their first and last rows. Damage is a `StoreError`
that says what is wrong and what to run (`index --rebuild` moves the damaged store aside);
damage further inside is said by the first read that meets it, or by the full check
(`verify`, `_full_check`), and noted so that every later command says it (`_health`). A
full or failing disk is one line too, and a store on a disk that cannot be written is read
as it is there (SQLite cannot make its shared-memory file).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Collection, Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import Settings
from ...config.schema import APPROXIMATE_VECTORS_ABOVE, MemorySettings
from ...contract.capabilities import Backends
from ...contract.hookspecs import hookimpl
from ...contract.records import (
    MEMORY_URI_PREFIX,
    CarriedMemory,
    DeclaredEdges,
    EdgeRecord,
    GraphStats,
    MemoryItem,
    MemoryScope,
    NewFragment,
    NodeRecord,
    SkipReason,
    StoredFile,
    StoreStats,
    TargetForm,
    TextHit,
)
from ...contract.store import StoreBackend
from ...core.errors import StoreError
from ...core.logs import logger
from ...core.models import ContextFragment, RequestFilters, RequestScope
from ...text.words import matched_terms, query_terms
from ..graph import ResolvedEdges, ResolvedGraph, defined_name, resolve
from . import _vectors
from ._health import (
    clear_damage,
    damage_text,
    fault_text,
    inspect,
    is_damage,
    note_damage,
    noted_damage,
    rollback,
)
from ._read_ahead import read_ahead
from ._resolution import (
    DECLARED_COLUMNS,
    LAYOUT_10,
    NAMES_SEPARATOR,
    NODE_COLUMNS,
    SOURCES_SEPARATOR,
    declared_edges,
    note_definitions,
    resolve_changes,
    stored_resolution,
)
from ._rows import (
    FRAGMENT_COLUMNS,
    HIDDEN_MEMORY,
    as_fragment,
    filter_sql,
    narrows,
    scope_sql,
    utc,
)
from ._scope import HiddenMemory, RequestReads, ScopedVectors, TextTimes, unseen_rowids
from ._search_memo import Ranked, SearchMemo
from ._sessions import EmbeddedSessions
from ._text_layout import (
    TEXT_META,
    TEXT_SCHEMA,
    TEXT_TABLES,
    TOKENIZE,
    search_columns,
    with_joined,
)

if TYPE_CHECKING:
    from ._text_index import Scored, TextView
    from ._vector_matrix import EmbeddedVectors

DATABASE_NAME = "index.sqlite3"
SCHEMA_VERSION = "13"
#: The write-ahead log is cut back to this size after a checkpoint.
_WAL_LIMIT_BYTES = 64 * 1024 * 1024

#: Memory items (each a row of `files` too, which `files()` leaves out), pins, the access
#: log of sessions, and the full texts by time for the timeline (layout 9).
_LAYOUT_9 = """
CREATE INDEX IF NOT EXISTS fragments_by_time ON fragments(modified_at, id) WHERE depth = 9;
CREATE TABLE IF NOT EXISTS memory (
    path TEXT PRIMARY KEY REFERENCES files(path) ON DELETE CASCADE,
    id TEXT NOT NULL,
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    at TEXT NOT NULL,
    speaker TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_by_owner ON memory(scope, owner);
CREATE TABLE IF NOT EXISTS pins (target TEXT PRIMARY KEY, pinned_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS access_log (
    session TEXT NOT NULL,
    assembly INTEGER NOT NULL,
    uri TEXT NOT NULL,
    PRIMARY KEY (session, assembly, uri)
);
"""

_SCHEMA = (
    f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    tokenizer TEXT NOT NULL,
    skipped TEXT
);
CREATE TABLE IF NOT EXISTS fragments (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    uri TEXT NOT NULL,
    depth INTEGER NOT NULL,
    path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    language TEXT NOT NULL,
    text TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    modified_at TEXT NOT NULL,
    read_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fragments_by_uri ON fragments(uri, depth);
CREATE TABLE IF NOT EXISTS nodes (
    uri TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    parent TEXT,
    defines TEXT
);
CREATE INDEX IF NOT EXISTS nodes_by_path ON nodes(path);
CREATE TABLE IF NOT EXISTS edges (
    sources TEXT NOT NULL,
    type TEXT NOT NULL,
    form TEXT NOT NULL,
    target TEXT NOT NULL,
    near TEXT NOT NULL,
    path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    resolved TEXT
);
CREATE INDEX IF NOT EXISTS edges_by_path ON edges(path);
CREATE INDEX IF NOT EXISTS fragments_by_path ON fragments(path);
CREATE INDEX IF NOT EXISTS fragments_by_hash ON fragments(content_hash) WHERE depth = 9;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, text, words, tokenize = '{TOKENIZE}'
);
"""
    + TEXT_SCHEMA
    + _LAYOUT_9
    + LAYOUT_10
)


def _note_defined_names(connection: sqlite3.Connection) -> None:
    rows = connection.execute(f"SELECT {NODE_COLUMNS} FROM nodes").fetchall()
    connection.executemany(
        "UPDATE nodes SET defines = ? WHERE uri = ?",
        [
            (name, node.uri)
            for node in map(NodeRecord._make, rows)
            if (name := defined_name(node)) is not None
        ],
    )


def _index_existing(connection: sqlite3.Connection) -> None:
    from ._text_index import TextIndexWriter

    TextIndexWriter(connection).index_existing()


def _join_identifiers(connection: sqlite3.Connection) -> None:
    """Give the searchable fragments' title and words columns the snake_case identifiers
    joined, as `search_columns` gives a new write (the title column holds the title itself),
    and index them all again.
    """
    last = -1
    # A batch at a time: the texts of a large store need not all be in memory at once.
    while rows := connection.execute(
        "SELECT rowid, title, text, words FROM fts WHERE rowid > ? ORDER BY rowid LIMIT 2000",
        (last,),
    ).fetchall():
        connection.executemany(
            "UPDATE fts SET title = ?, words = ? WHERE rowid = ?",
            [
                (with_joined(title, title), with_joined(words, text), id_)
                for id_, title, text, words in rows
            ],
        )
        last = int(rows[-1][0])
    for table in TEXT_TABLES:
        connection.execute(f"DELETE FROM {table}")
    # Readers keep a view of the keyword index per snapshot: this is a new one.
    connection.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'text_snapshot'"
    )
    _index_existing(connection)


def _memory_under_uris(connection: sqlite3.Connection) -> None:
    """Move each memory item to its node URI (its stored path from layout 12 on), in every
    table that names it, and count a change, so that what was derived from the old names
    (the graph's counts) is made again.
    """
    connection.execute("PRAGMA defer_foreign_keys = ON")  # parent and children move together
    moved = connection.execute(
        "SELECT fragments.uri, memory.path FROM memory"
        " JOIN fragments ON fragments.path = memory.path AND fragments.depth = 9"
    ).fetchall()
    for table in ("files", "fragments", "nodes", "memory"):
        connection.executemany(f"UPDATE {table} SET path = ? WHERE path = ?", moved)
    connection.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
    )


# Each older layout's step to the next one (SQL, or a function of the connection), run in
# the writer's first transaction; an older layout still is rebuilt from its sources.
_UPGRADES: dict[str, tuple[str | Callable[[sqlite3.Connection], None], ...]] = {
    # Layout 3 kept one tokenizer for the whole store in meta: give it to every file, so
    # that an upgrade keeps every root and counts nothing again.
    "3": (
        "ALTER TABLE files ADD COLUMN tokenizer TEXT NOT NULL DEFAULT ''",
        "UPDATE files SET tokenizer ="
        " coalesce((SELECT value FROM meta WHERE key = 'tokenizer'), '')",
        "DELETE FROM meta WHERE key = 'tokenizer'",
        "INSERT INTO meta(key, value) VALUES ('generation', '0')",
    ),
    # Layout 4 wrote skip reasons into `sha256` and edge targets as `form:name|name`.
    "4": (
        "ALTER TABLE files ADD COLUMN skipped TEXT",
        "UPDATE files SET skipped = 'too-large', sha256 = '' WHERE sha256 = 'skipped:too-large'",
        "UPDATE files SET skipped = 'binary', sha256 = substr(sha256, 16)"
        " WHERE sha256 LIKE 'skipped:binary:%'",
        "CREATE TABLE edges_5 (source TEXT NOT NULL, type TEXT NOT NULL, form TEXT NOT NULL,"
        " target TEXT NOT NULL, near TEXT NOT NULL,"
        " path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE)",
        "INSERT INTO edges_5(source, type, form, target, near, path)"
        " SELECT source, type, CASE substr(target, 1, instr(target, ':') - 1)"
        "   WHEN 'uri' THEN 'node' WHEN 'sym' THEN 'symbol' WHEN 'path' THEN 'file'"
        "   WHEN 'py' THEN 'python' ELSE substr(target, 1, instr(target, ':') - 1) END,"
        " CASE WHEN target LIKE 'include:%' THEN substr(target, instr(target, '|') + 1)"
        "   WHEN target LIKE 'uri:%' OR target LIKE 'sym:%'"
        "   THEN substr(target, instr(target, ':') + 1)"
        "   ELSE replace(substr(target, instr(target, ':') + 1), '|', char(10)) END,"
        " CASE WHEN target LIKE 'include:%' THEN substr(target, 9, instr(target, '|') - 9)"
        "   ELSE '' END,"
        " path FROM edges",
        "DROP TABLE edges",
        "ALTER TABLE edges_5 RENAME TO edges",
        "CREATE INDEX edges_by_path ON edges(path)",
    ),
    # Layout 5 had only the FTS5 table: index its rows into the keyword index.
    "5": (
        *(statement for statement in TEXT_SCHEMA.split(";") if statement.strip()),
        *TEXT_META,
        _index_existing,
    ),
    # Layout 6 could not find a full-text fragment by its content hash (what a vector
    # found by the approximate index names) without reading them all.
    "6": ("CREATE INDEX fragments_by_hash ON fragments(content_hash) WHERE depth = 9",),
    # Layout 7 kept one row per declared edge, so the graph resolved a name once per call,
    # and declared each node's `contains` edge from its parent, which the node records.
    "7": (
        "CREATE TABLE edges_8 (sources TEXT NOT NULL, type TEXT NOT NULL, form TEXT NOT NULL,"
        " target TEXT NOT NULL, near TEXT NOT NULL,"
        " path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE)",
        "INSERT INTO edges_8(sources, type, form, target, near, path)"
        " SELECT group_concat(source, char(31)), type, form, target, near, path"
        " FROM (SELECT DISTINCT path, type, form, target, near, source FROM edges"
        "   WHERE NOT (form = 'node' AND type = 'contains')"
        "   ORDER BY path, type, form, target, near, source)"
        " GROUP BY path, type, form, target, near",
        "DROP TABLE edges",
        "ALTER TABLE edges_8 RENAME TO edges",
        "CREATE INDEX edges_by_path ON edges(path)",
    ),
    # Layout 8 had no memory items, pins or access log, and sorted the timeline in full.
    "8": tuple(statement for statement in _LAYOUT_9.split(";") if statement.strip()),
    # Layout 9 resolved the whole graph in every process that read it: keep it resolved
    # (every group is resolved in the upgrading session, before it commits).
    "9": (
        "ALTER TABLE nodes ADD COLUMN defines TEXT",
        _note_defined_names,
        "ALTER TABLE edges ADD COLUMN resolved TEXT",
        *(statement for statement in LAYOUT_10.split(";") if statement.strip()),
    ),
    # Layout 10 searched a snake_case identifier as a phrase of its parts.
    "10": (_join_identifiers,),
    # Layout 11 kept memory under `memory:<scope>/<owner>/<id>`, unescaped, where a file
    # or another owner's item could take its place.
    "11": (_memory_under_uris,),
    # Layout 12 bound a name called through another library (`math.floor`) or a builtin's
    # (`d.values()`) to any project definition of that name: Python files are parsed again
    # by the next index of their root (they look changed), and read by name until then.
    "12": (
        "DROP INDEX IF EXISTS edges_by_symbol",
        *(statement for statement in LAYOUT_10.split(";") if statement.strip()),
        "UPDATE files SET sha256 = '', mtime_ns = -1"
        " WHERE (path GLOB '*.py' OR path GLOB '*.pyi') AND skipped IS NULL"
        " AND path NOT IN (SELECT path FROM memory)",
    ),
}

#: The rows of `files` that are files, not memory items.
_FILES_ONLY = "files WHERE path NOT IN (SELECT path FROM memory)"


class _Reader:
    """A thread's read connection, of one epoch of the database. Closed when the thread
    ends and its locals go: dropped open, a connection and its statement cache are a
    reference cycle that only a full collection frees, a pause for every thread.
    """

    __slots__ = ("connection", "epoch")

    def __init__(self, connection: sqlite3.Connection, epoch: int) -> None:
        self.connection = connection
        self.epoch = epoch

    def __del__(self) -> None:
        # ProgrammingError: dropped on another thread (the store went first), which may
        # not close it; the collector will.
        with suppress(sqlite3.ProgrammingError):
            self.connection.close()


class EmbeddedStore:
    """Fragments, files, full-text search, the graph and the timeline in
    `<directory>/index.sqlite3`.
    """

    def __init__(
        self,
        directory: Path,
        approximate_vectors_above: int = APPROXIMATE_VECTORS_ABOVE,
        memory: MemorySettings | None = None,
        vector_dtype: str = "float32",
    ) -> None:
        self.directory = directory
        self.approximate_vectors_above = approximate_vectors_above
        self.vector_dtype = vector_dtype
        memory = memory or MemorySettings()
        self._sessions = EmbeddedSessions(
            self._query,
            self._reader,
            memory.pinned,
            memory.access_log_assemblies,
            lambda: (self._epoch, self.generation()),
        )
        self.database = directory / DATABASE_NAME
        self._local = threading.local()
        # The resolved graph of one generation of the index, shared by every thread.
        self._graph: tuple[int, ResolvedGraph] | None = None
        self._graph_lock = threading.Lock()
        # The keyword index of one state of the store, shared by every thread.
        self._text: tuple[tuple[object, ...], TextView] | None = None
        self._text_lock = threading.Lock()
        self._vectors: dict[tuple[str, int], EmbeddedVectors] = {}
        # The database file the caches above and the threads' connections describe, and
        # how many times it was replaced under this store (see `_follow_replacement`).
        self._identity: tuple[int, int] | None = None
        self._epoch = 0
        self._hidden = HiddenMemory(self._query, lambda: self._epoch)
        self._times = TextTimes(self._query, lambda: self._epoch)

    @property
    def location(self) -> str:
        """The store's folder."""
        return str(self.directory)

    @property
    def local_folders(self) -> Sequence[Path]:
        """The store's folder: never indexed."""
        return (self.directory,)

    @property
    def folder_marker(self) -> str:
        """Its database: any folder holding one is an embedded store."""
        return DATABASE_NAME

    # -- connections -------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether an index has been written here."""
        return self.database.is_file()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.database, isolation_level=None, timeout=30.0)
        try:
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            # A checkpointed log is cut back to this size, so it never stays large.
            connection.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT_BYTES}")
        except BaseException:
            connection.close()
            raise
        return connection

    def _connect_to_read(self) -> tuple[sqlite3.Connection, bool]:
        """A connection for reading, and whether the store is read as it is on a disk or
        in a folder that cannot be written (True). SQLite cannot open a database in
        write-ahead-log mode there without its shared-memory file: a store with no log
        (nothing waits in one) is then read as immutable.
        """
        try:
            return self._connect(), False
        except sqlite3.OperationalError as exc:
            log = self.database.with_name(self.database.name + "-wal")
            name = str(getattr(exc, "sqlite_errorname", ""))
            if (
                not name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))
                or os.access(self.directory, os.W_OK)
                or (log.exists() and log.stat().st_size > 0)
            ):
                raise
        connection = sqlite3.connect(
            f"{self.database.as_uri()}?immutable=1", uri=True, isolation_level=None
        )
        connection.execute("PRAGMA foreign_keys = ON")
        return connection, True

    def _reader(self) -> sqlite3.Connection:
        reader: _Reader | None = getattr(self._local, "reader", None)
        if reader is not None and reader.epoch != self._epoch:
            self.close()  # a connection to a database since replaced
            reader = None
        if reader is None:
            if not self.exists():
                raise StoreError(
                    f"{self.directory}: no index here; run `contextpipe index PATH` first"
                )
            self._identity = self._identity or self._file_identity()
            reader = _Reader(self._open_checked(), self._epoch)
            self._local.reader = reader
        return reader.connection

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            found = self.database.stat()
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _follow_replacement(self) -> None:
        """Read a database that replaced the one this store opened (another process moved
        the store aside and indexed anew: `index --rebuild`) from now on, as a process
        started now would: open connections are to the old file, which they would go on
        reading while writes, made by path, went to the new one; and the caches describe
        the old file, whose generations the new one's may repeat.
        """
        identity = self._file_identity()
        if identity is None or identity == self._identity:
            return
        with self._graph_lock, self._text_lock:
            if self._identity is not None:
                self._epoch += 1  # every thread reopens at its next read
                self._graph, self._text, self._vectors = None, None, {}
            self._identity = identity

    def _open_checked(self) -> sqlite3.Connection:
        """A connection to a database that passed the cheap checks (see `_health`), with
        the vectors attached.
        """
        with self._damage_reported():
            connection, read_only = self._connect_to_read()
            try:
                found = inspect(connection, self.database, _SCHEMA, SCHEMA_VERSION)
                if found.damage is None and not found.empty and found.version == SCHEMA_VERSION:
                    _vectors.attach(connection, self.directory, read_only)
                    return connection
            except BaseException:
                connection.close()
                raise
        connection.close()
        if found.damage is not None:
            raise self._damage_found(self.database, found.damage)
        if found.empty:
            raise StoreError(
                f"{self.directory}: the first index was interrupted before it saved anything;"
                " run `contextpipe index PATH` again"
            )
        raise StoreError(
            f"{self.directory}: index has layout {found.version}, this contextpipe reads "
            f"{SCHEMA_VERSION}; run `contextpipe index PATH` to upgrade or rebuild it"
        )

    def check(self) -> None:
        """Raise `StoreError` unless the index exists, has this version's layout, passes
        the cheap damage checks and has no damage noted (see `_health`).
        """
        self._reader()
        noted = noted_damage(self.directory)
        if noted is not None:
            raise StoreError(noted)

    def _damage(self) -> str | None:
        """What is wrong with the store, in a few words (None: nothing found, or no store)."""
        if not self.exists():
            return None
        try:
            connection = self._open_checked()
        except StoreError as exc:
            return str(exc)
        connection.close()
        return noted_damage(self.directory)

    def verify(self) -> str:
        """Check the whole store (see `_full_check`): what was checked, in one line, or a
        `StoreError` naming the damage found, which is noted as a reader's find is. A
        store found whole has no damage noted any more.
        """
        from ._full_check import full_check

        if not self.exists():
            raise StoreError(f"{self.directory}: no index here; run `contextpipe index PATH` first")
        connection = self._open_checked()
        try:
            with self._damage_reported():
                checked = full_check(connection, self.directory)
        finally:
            connection.close()
        if checked.damage is not None:
            raise self._damage_found(checked.damaged_file, checked.damage)
        clear_damage(self.directory)
        return checked.summary

    def move_aside(self) -> str | None:
        """Rename the store folder to a timestamped sibling, `<name>.damaged-<UTC time>`
        (`.previous-` when nothing is wrong with it), so that a new index starts empty and
        nothing is lost. Returns the new folder, or None when there was no store folder.
        """
        if not self.directory.exists():
            return None
        label = "damaged" if self._damaged_anywhere() else "previous"
        self.close()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = self.directory.with_name(f"{self.directory.name}.{label}-{stamp}")
        attempt = 1
        while target.exists():
            attempt += 1
            target = self.directory.with_name(f"{self.directory.name}.{label}-{stamp}-{attempt}")
        try:
            self.directory.rename(target)
        except OSError as exc:
            raise StoreError(
                f"{self.directory}: cannot be moved aside to {target.name} ({exc.strerror});"
                " it is left as it was"
            ) from None
        return str(target)

    def carry_memory(self, previous: str) -> CarriedMemory:
        """Copy the memory items, pins and access log of the store moved aside to
        `previous` into this one, in one write; what cannot be read there is named and left
        there (see `_carry`). Memory items get vectors with the next embedding.
        """
        from ._carry import read_previous

        found = read_previous(Path(previous) / DATABASE_NAME)
        if found.items or found.pins or found.uses:
            with self.writer() as writer:
                for item, fragment, node in found.items:
                    writer.add_memory(item, fragment, node)
                writer.keep_pins(found.pins)
                writer.keep_uses(found.uses)
        left = "; ".join(found.unread) if found.unread else None
        return CarriedMemory(len(found.items), len(found.pins), len(found.uses), left)

    def _damaged_anywhere(self) -> bool:
        """Whether the cheap checks, a note or the full check find damage (moving the
        store aside is followed by indexing everything anew: the full check costs little
        beside that).
        """
        if self._damage() is not None:
            return True
        try:
            self.verify()
        except StoreError:
            return True
        return False

    def _damage_found(self, database: Path, what: str) -> StoreError:
        """The error for damage found in `database` (the index's or the vectors'), noted in
        the store's folder so that every later command says it too (see `_health`).
        """
        message = _damaged(database, what)
        note_damage(self.directory, message)
        return StoreError(message)

    @contextmanager
    def _damage_reported(self) -> Generator[None]:
        """SQLite's errors for a damaged file become one `StoreError` line saying what to
        do, noted; so do those of a full, read-only or failing disk (`_health.fault_text`).
        """
        try:
            yield
        except sqlite3.Error as exc:
            if is_damage(exc):
                what = damage_text(exc, self.database)
                raise self._damage_found(self.database, what) from None
            fault = fault_text(exc, self.directory)
            if fault is None:
                raise
            raise StoreError(fault) from None

    def close(self) -> None:
        """Close this thread's reader connection."""
        reader: _Reader | None = getattr(self._local, "reader", None)
        if reader is not None:
            self._local.reader = None
            reader.connection.close()

    @contextmanager
    def writer(self) -> Generator[StoreWriter]:
        """A write session: what the session did commits when `StoreWriter.commit` is called
        and when the session ends; an exception rolls back only what was not committed yet.
        An index of an older layout is rebuilt (in the first transaction); a damaged one is a
        `StoreError`.
        """
        noted = noted_damage(self.directory)
        if noted is not None:
            raise StoreError(noted)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.directory}: cannot be made ({exc.strerror})") from None
        with self._damage_reported():
            connection = self._connect()
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    self._prepare_schema(connection)
                    writer = StoreWriter(connection)
                    yield writer
                    writer.flush()
                    resolve_changes(connection)
                except BaseException:
                    rollback(connection)
                    raise
                connection.execute("COMMIT")
                self._fold_text_index(connection)
                # Leave a small log behind: what it held is in the database file now. A
                # reader in the middle of a query delays that; do not wait long for it.
                connection.execute("PRAGMA busy_timeout = 1000")
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                connection.close()
        self.close()  # this thread's reader must not keep an old schema check

    def _fold_text_index(self, connection: sqlite3.Connection) -> None:
        """Fold the keyword index's pending changes into a new snapshot once they have
        grown enough to slow queries; alone in its transaction, so that an interrupted fold
        loses nothing.
        """
        from ._text_index import TextIndexWriter

        text = TextIndexWriter(connection)
        connection.execute("BEGIN IMMEDIATE")
        try:
            if text.fold_due():
                with self._text_damage_reported():
                    text.fold()
        except BaseException:
            rollback(connection)
            raise
        connection.execute("COMMIT")

    @contextmanager
    def _text_damage_reported(self) -> Generator[None]:
        """A keyword index that does not add up is a damaged store, said in one line."""
        from ._text_index import TextIndexError

        try:
            yield
        except TextIndexError as exc:
            raise self._damage_found(self.database, str(exc)) from None

    def _prepare_schema(self, connection: sqlite3.Connection) -> None:
        found = inspect(connection, self.database, _SCHEMA, SCHEMA_VERSION)
        if found.damage is not None:
            raise self._damage_found(self.database, found.damage)
        if found.version in _UPGRADES:
            for version in range(int(found.version), int(SCHEMA_VERSION)):
                for step in _UPGRADES[str(version)]:
                    if isinstance(step, str):
                        connection.execute(step)
                    else:
                        step(connection)
            connection.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,)
            )
            return
        if not found.empty and found.version != SCHEMA_VERSION:
            # An index of an older layout is rebuilt, inside this same transaction.
            for table in (
                "fts",
                *TEXT_TABLES,
                "graph_changes",
                "access_log",
                "pins",
                "memory",
                "edges",
                "nodes",
                "fragments",
                "files",
                "meta",
            ):
                connection.execute(f"DROP TABLE IF EXISTS {table}")
        if found.empty or found.version != SCHEMA_VERSION:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
            connection.execute("INSERT INTO meta(key, value) VALUES ('generation', '0')")
            for statement in TEXT_META:
                connection.execute(statement)

    # -- reading -----------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query on this thread's reader; a damaged file is a `StoreError`."""
        with self._damage_reported():
            return self._reader().execute(sql, params).fetchall()

    def count(self, filters: RequestFilters | None = None) -> int:
        """How many fragments (all depths) the store holds; with `filters`, leaving out
        memory their request may not see.
        """
        if filters is None:
            return int(self._query("SELECT count(*) FROM fragments")[0][0])
        rows = self._query(
            "SELECT (SELECT count(*) FROM fragments) - (SELECT count(*) FROM memory"
            f" JOIN fragments ON fragments.path = memory.path WHERE {HIDDEN_MEMORY})",
            (filters.session, filters.user),
        )
        return int(rows[0][0])

    def token_counts(
        self,
        fragments: Collection[ContextFragment],
        tokenizer: str,
        filters: RequestFilters | None = None,
    ) -> dict[str, int]:
        """The stored token counts of these fragments' texts, by content hash: for each
        fragment stored under its id with its content hash, in a file `tokenizer` counted,
        and not memory the request of `filters` may not see.
        """
        hashes = {fragment.id: fragment.content_hash for fragment in fragments}
        if not hashes:
            return {}
        seen, params = scope_sql(filters)
        rows = self._query(
            "SELECT fragments.id, fragments.content_hash, fragments.token_count"
            " FROM fragments JOIN files ON files.path = fragments.path"
            " WHERE fragments.id IN (SELECT value FROM json_each(?)) AND files.tokenizer = ?"
            f" AND {seen}",
            (json.dumps(sorted(hashes)), tokenizer, *params),
        )
        return {
            str(content_hash): int(tokens)
            for id_, content_hash, tokens in rows
            if hashes.get(str(id_)) == content_hash
        }

    def variants(
        self, uko_uri: str, filters: RequestFilters | None = None
    ) -> list[ContextFragment]:
        """Every stored depth of one node, deepest first; none when the node is memory the
        request of `filters` may not see, or was modified after their `as_of` (None: a
        request naming no session and no user).
        """
        return self.variants_many((uko_uri,), filters).get(uko_uri, [])

    def variants_many(
        self, uko_uris: Collection[str], filters: RequestFilters | None = None
    ) -> Mapping[str, list[ContextFragment]]:
        """`variants` of several nodes in one read, by URI; a node with none is left out."""
        seen, params = scope_sql(filters)
        rows = self._query(
            f"SELECT {FRAGMENT_COLUMNS} FROM fragments"
            " WHERE uri IN (SELECT value FROM json_each(?))"
            f" AND {seen} ORDER BY uri, depth DESC",
            (json.dumps(list(uko_uris)), *params),
        )
        found: dict[str, list[ContextFragment]] = {}
        for row in rows:
            found.setdefault(str(row[1]), []).append(as_fragment(row))  # by `uri`, 2nd column
        return found

    def search(
        self, query: str, limit: int, filters: RequestFilters, memo: SearchMemo | None = None
    ) -> list[TextHit]:
        """BM25-ranked full-text fragments matching any query term, best first, ties by id.

        The keyword index (`_text_index`) scores every fragment as FTS5's `bm25()` scores
        the OR of the query's terms, then only the best are read. Only fragments that fit
        the filters are ranked, so a filter never hides a match; when score ties run past
        the cut, every tied fragment is weighed, so that ids, not positions, decide. `memo`
        keeps a request's rankings, rows and hits for a later search of the same query for
        more hits (`_search_memo`; `backends()` gives each request one).
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        from ._text_index import query_plan, select_best

        plan = list(query_plan(terms))
        where, params = filter_sql(filters)
        narrowed = narrows(filters)
        with self.snapshot():
            view = self._text_view()

            def rank(depth: int) -> Ranked:
                # Memory the request may not see is skipped by the ranking, and counts in
                # none of its statistics (`_scope` rules 2 and 3).
                unseen = unseen_rowids(self._hidden.of(filters), self._times, filters)
                with self._damage_reported(), self._text_damage_reported():
                    rowids, scores = view.best(self._reader(), plan, depth, narrowed, unseen)
                return Ranked(rowids, scores, depth)

            # The view is one state of the store: a search after a change ranks anew. A weak
            # reference, so that a caller keeping one `backends()` keeps no old view alive.
            key = (weakref.ref(view), query, filters)
            ranked = (memo or SearchMemo()).ranked(key, limit, rank)

            def fetch(rowids: list[int], scores: list[float]) -> Scored:
                return ranked.scored(rowids, scores, read)

            def read(rowids: list[int]) -> list[tuple[Any, ...]]:
                return self._rows_by_rowid(rowids, where, params)

            def fitting() -> Iterable[int]:
                rows = self._query(f"SELECT rowid FROM fragments WHERE 1 {where}", params)
                return [int(row[0]) for row in rows]

            rows = select_best(
                ranked.rowids, ranked.scores, limit, fetch, fitting if narrowed else None
            )

        def hit(score: float, row: tuple[Any, ...]) -> TextHit:
            fragment = as_fragment(row[:-1])  # the row id last
            return TextHit(fragment, score, matched_terms(terms, fragment.text))

        return [ranked.hit(score, row, hit) for score, row in rows]

    def scores(
        self,
        query: str,
        fragments: Sequence[ContextFragment],
        filters: RequestFilters | None = None,
    ) -> list[float]:
        """The score `search` gives each fragment for `query`, whatever its rank: the same
        keyword index, read only at these fragments (0 for one matching no query term, not
        searchable, memory the request of `filters` may not see or what came after their
        `as_of`).
        """
        terms = query_terms(query)
        if not terms or not fragments:
            return [0.0] * len(fragments)
        from ._text_index import query_plan

        filters = filters or RequestFilters()
        seen, params = scope_sql(filters)
        with self.snapshot():
            rows = self._query(
                "SELECT id, rowid FROM fragments WHERE id IN (SELECT value FROM json_each(?))"
                f" AND {seen}",
                (json.dumps(sorted({f.id for f in fragments})), *params),
            )
            rowid_of = {str(id_): int(rowid) for id_, rowid in rows}
            view = self._text_view()
            with self._damage_reported(), self._text_damage_reported():
                found = view.scores_of(
                    self._reader(),
                    list(query_plan(terms)),
                    [rowid_of.get(f.id, 0) for f in fragments],
                    unseen_rowids(self._hidden.of(filters), self._times, filters),
                )
        return [float(score) for score in found]

    def _text_view(self) -> TextView:
        """The keyword index as this thread's open read transaction sees it, loaded once per
        change of the store and shared by every thread.
        """
        key = tuple(
            self._query(
                "SELECT (SELECT value FROM meta WHERE key = 'generation'),"
                " (SELECT value FROM meta WHERE key = 'text_snapshot')"
            )[0]
        )
        with self._text_lock:
            if self._text is not None and self._text[0] == key:
                return self._text[1]
        from ._text_index import TextView

        with self._damage_reported(), self._text_damage_reported():
            view = TextView(self._reader())
        with self._text_lock:
            self._text = (key, view)
        return view

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query on this thread's reader (the vectors attached as `v`)."""
        return self._query(sql, params)

    def _rows_by_rowid(
        self, rowids: Sequence[int], where: str = "", params: Sequence[str | None] = ()
    ) -> list[tuple[Any, ...]]:
        """The fragment rows (then their row id) with these row ids that fit `where`."""
        return self._query(
            f"SELECT {FRAGMENT_COLUMNS}, rowid FROM fragments"
            f" WHERE rowid IN (SELECT value FROM json_each(?)) {where}",
            (json.dumps(list(rowids)), *params),
        )

    def fragments_by_rowid(self, rowids: Sequence[int]) -> dict[int, ContextFragment]:
        """The fragments with these row ids, by row id."""
        return {int(row[-1]): as_fragment(row[:-1]) for row in self._rows_by_rowid(rowids)}

    def filtered_rowids(self, filters: RequestFilters) -> list[int]:
        """Row ids of the full-text fragments that fit the filters."""
        where, params = filter_sql(filters)
        rows = self._query(
            f"SELECT rowid FROM fragments WHERE {_vectors.FULL_TEXT} {where}", params
        )
        return [int(row[0]) for row in rows]

    @contextmanager
    def vector_writer(self, space: str, dimension: int) -> Generator[_vectors.VectorWriterSession]:
        """A session adding vectors of `space` (see `_vectors`)."""
        self.check()
        with self._damage_reported(), _vectors.vector_writer(self, space, dimension) as writer:
            yield writer
        index = self._vector_index(space)
        if index is not None:
            index.prepare()

    def vector_index(self, space: str, scope: RequestScope | None = None) -> ScopedVectors | None:
        """The store's vectors of `space` (see `_vector_matrix`) for a request of `scope`,
        never giving it memory it may not see (`_scope`); None when it has none.
        """
        index = self._vector_index(space)
        if index is None:
            return None
        return ScopedVectors(
            index, self._hidden, self._times, scope or RequestScope(), self._seen_texts
        )

    def _seen_texts(self, content_hashes: Collection[str], filters: RequestFilters) -> set[str]:
        """Which of these content hashes are full texts the request of `filters` may see."""
        seen, params = scope_sql(filters)
        rows = self._query(
            "SELECT DISTINCT content_hash FROM fragments"
            " WHERE depth = 9 AND content_hash IN (SELECT value FROM json_each(?))"
            f" AND {seen}",
            (json.dumps(sorted(content_hashes)), *params),
        )
        return {str(row[0]) for row in rows}

    def _vector_index(self, space: str) -> EmbeddedVectors | None:
        from ._vector_matrix import EmbeddedVectors

        if not self.exists():
            return None
        stored = _vectors.stored_space(self)
        if stored is None or stored[0] != space:
            return None
        with self._graph_lock:  # one index, and so one matrix in memory, per space
            index = self._vectors.get(stored)
            if index is None:
                index = self._vectors[stored] = EmbeddedVectors(self, *stored)
            return index

    def recent(
        self,
        limit: int,
        filters: RequestFilters,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        """Full-text fragments modified within [since, until), newest first, ties by id."""
        return self._timeline(limit, filters, (">=", since), (until, "DESC"))

    def after(
        self,
        moment: datetime,
        limit: int,
        filters: RequestFilters,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        """Full-text fragments modified after `moment` (not at it) and before `until`,
        oldest first, ties by id.
        """
        return self._timeline(limit, filters, (">", moment), (until, "ASC"))

    def _timeline(
        self,
        limit: int,
        filters: RequestFilters,
        start: tuple[str, datetime | None],
        end: tuple[datetime | None, str],
    ) -> list[ContextFragment]:
        """Full texts from `start` (a comparison and a time) to before `end`'s time, in
        `end`'s order of time (ASC or DESC), ties by id, along `fragments_by_time`.
        """
        if limit <= 0:
            return []
        where, params = filter_sql(filters)
        (compared, since), (until, order) = start, end
        bounds: list[str] = []
        for clause, moment in ((f"modified_at {compared} ?", since), ("modified_at < ?", until)):
            if moment is not None:
                where += f" AND {clause}"
                bounds.append(utc(moment))
        rows = self._query(
            f"SELECT {FRAGMENT_COLUMNS} FROM fragments WHERE depth = 9 {where}"
            f" ORDER BY modified_at {order}, id LIMIT ?",
            (*params, *bounds, limit),
        )
        return [as_fragment(row) for row in rows]

    def nodes(self) -> list[NodeRecord]:
        """Every node of an indexed file, in path and line order: memory is no part of the
        graph, which every request shares (`_scope` rule 2).
        """
        rows = self._query(
            f"SELECT {NODE_COLUMNS} FROM nodes WHERE path NOT IN (SELECT path FROM memory)"
            " ORDER BY path, start_line, uri"
        )
        return [NodeRecord._make(row) for row in rows]

    def edges(self) -> list[DeclaredEdges]:
        """Every declared edge, grouped by file, type and target, in no particular order."""
        return declared_edges(self._query(f"SELECT {DECLARED_COLUMNS} FROM edges"))

    def _resolved_edges(self, nodes: list[NodeRecord]) -> list[ResolvedEdges]:
        """The declared groups that resolve, with their targets: as the last write session
        stored them when they describe the store as it is, else resolved here.
        """
        with self._damage_reported():
            stored = stored_resolution(self._reader())
        return resolve(nodes, self.edges()) if stored is None else stored

    def stats(self) -> StoreStats:
        """How many files and fragments the store holds (none when nothing is indexed)."""
        if not self.exists():
            return StoreStats(self.location, 0, 0, 0)
        with self.snapshot():
            files, fragments, searchable = (
                int(self._query(f"SELECT count(*) FROM {table}")[0][0])
                for table in (_FILES_ONLY, "fragments", "fts")
            )
        return StoreStats(self.location, files, fragments, searchable)

    def backends(self, scope: RequestScope | None = None) -> Backends:
        """Fragment lookup, text search, the graph, the timeline and session tiers for a
        request of `scope` (see `_scope`); none before the first index. Raises
        `StoreError` when the index is damaged.
        """
        if not self.exists():
            return Backends()
        self._follow_replacement()
        self.check()
        reads = RequestReads(self, self._sessions, scope or RequestScope())
        return Backends(
            fragments=reads, text=reads, graph=self.graph(), timeline=reads, sessions=reads
        )

    def prefetch(self, limit: int) -> int:
        """Read the files of the live store, the index's database first, then the rest
        (write-ahead logs, vectors and their matrices) by name, at most `limit` bytes in
        all (see `_read_ahead`); 0 before the first index. Left alone: files being written
        (their names start with a dot), SQLite's shared memory (mapped, never read) and
        damaged vector databases kept aside.
        """
        if not self.exists():
            return 0
        files = [
            path
            for path in self.directory.iterdir()
            if not path.name.startswith(".")
            and not path.name.endswith("-shm")
            and ".damaged-" not in path.name
        ]
        files.sort(key=lambda path: (path != self.database, path.name))
        return read_ahead(files, limit)

    def graph(self) -> ResolvedGraph:
        """The resolved graph of the index as it is now, made once per change of the index
        and shared by every thread; its counts are kept in the store until it changes.
        """
        generation = self.generation()
        with self._graph_lock:
            if self._graph is not None and self._graph[0] == generation:
                return self._graph[1]
            kept = self.remembered("graph_stats", generation)
            known = GraphStats(**json.loads(kept)) if kept is not None else None
            read_at = [generation]

            def read() -> tuple[list[NodeRecord], list[ResolvedEdges]]:
                with self.snapshot():
                    read_at[0] = self.generation()  # what the counts will describe
                    nodes = self.nodes()
                    return nodes, self._resolved_edges(nodes)

            def keep(stats: GraphStats) -> None:
                self.remember("graph_stats", json.dumps(asdict(stats)), read_at[0])

            graph = ResolvedGraph(read, known, keep, read_nodes=self.nodes)
            self._graph = (generation, graph)
            return graph

    @contextmanager
    def snapshot(self) -> Generator[None]:
        """Reads inside see one state of the store, whatever writers commit meanwhile."""
        connection = self._reader()
        with self._damage_reported():
            connection.execute("BEGIN")
        try:
            yield
        except BaseException:
            rollback(connection)  # what went wrong is the error to say, not the end of a read
            raise
        with self._damage_reported():
            connection.execute("COMMIT")

    def generation(self) -> int:
        """A number that grows with every commit that changed an indexed file."""
        rows = self._query("SELECT value FROM meta WHERE key = 'generation'")
        return int(rows[0][0]) if rows else 0

    def remembered(self, key: str, generation: int) -> str | None:
        """What `remember` kept under `key` at this `generation` (None: nothing, or older)."""
        rows = self._query("SELECT value FROM meta WHERE key = ?", (f"remembered:{key}",))
        if not rows:
            return None
        kept_at, _, value = str(rows[0][0]).partition(":")
        return value if kept_at == str(generation) else None

    def remember(self, key: str, value: str, generation: int) -> None:
        """Keep a value derived from the store at `generation` (see `remembered`), unless a
        writer has changed the store since or holds it now: it is only a shortcut.
        """
        try:
            connection = self._connect()
        except sqlite3.OperationalError as exc:  # a read-only store
            logger.debug("not remembered", key=key, reason=str(exc))
            return
        try:
            connection.execute("PRAGMA busy_timeout = 0")
            connection.execute("BEGIN IMMEDIATE")
            row = connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            if (int(row[0]) if row else 0) == generation:
                connection.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (f"remembered:{key}", f"{generation}:{value}"),
                )
            connection.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # busy, a read-only store or a full disk
            logger.debug("not remembered", key=key, reason=str(exc))
        finally:
            connection.close()


class StoreWriter:
    """Changes to the store inside a write session (see `EmbeddedStore.writer`)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        from ._text_index import TextIndexWriter

        self._text = TextIndexWriter(connection)
        self._next_rowid: int | None = None
        self._changed = False

    def commit(self) -> None:
        """Commit what was done so far and go on in a new transaction. Between the two,
        another writer may take its turn.
        """
        self.flush()
        self._connection.execute("COMMIT")
        self._next_rowid = None  # another writer may have added fragments meanwhile
        self._changed = False
        self._connection.execute("BEGIN IMMEDIATE")

    def flush(self) -> None:
        """Write what waits to be written (the keyword index batches its writes)."""
        self._text.flush()

    def _changing(self) -> None:
        """Count this transaction in the store's generation, once."""
        if not self._changed:
            self._connection.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
            self._changed = True

    def files(self) -> dict[str, StoredFile]:
        """Every indexed file, by stored name (memory items are not files)."""
        rows = self._connection.execute(
            f"SELECT path, size, mtime_ns, sha256, tokenizer, skipped FROM {_FILES_ONLY}"
        )
        return {
            str(path): StoredFile(
                int(size), int(mtime), str(sha), str(tokenizer), skipped and SkipReason(skipped)
            )
            for path, size, mtime, sha, tokenizer, skipped in rows
        }

    def touch_file(self, path: str, stored: StoredFile) -> None:
        """Record a new size and mtime for a file whose content did not change."""
        self._connection.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
            (stored.size, stored.mtime_ns, path),
        )

    def remove_file(self, path: str) -> int:
        """Forget a file and everything read from it; returns how many fragments went."""
        if path.startswith(MEMORY_URI_PREFIX):
            raise ValueError(f"{path}: a memory item's name, not a file's")
        return self._remove(path)

    def _remove(self, path: str) -> int:
        """Forget what is stored under `path`, a file's or a memory item's."""
        self._changing()
        rowids = self._connection.execute(
            "SELECT rowid FROM fragments WHERE path = ?", (path,)
        ).fetchall()
        self._connection.executemany("DELETE FROM fts WHERE rowid = ?", rowids)
        self._text.remove([int(rowid) for (rowid,) in rowids])
        note_definitions(self._connection, path)
        for table in ("fragments", "nodes", "edges", "memory", "files"):
            self._connection.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        return len(rowids)

    def add_memory(self, item: MemoryItem, fragment: NewFragment, node: NodeRecord) -> None:
        """Keep a memory item as a row of `files` under its node URI (which `files` leaves
        out) with its own fragment and node, and its scope in `memory`.
        """
        path = fragment.fragment.source.path
        if path != node.uri or not path.startswith(MEMORY_URI_PREFIX):
            raise ValueError(f"memory item {item.id!r}: its stored path must be its node URI")
        text = fragment.fragment.text
        # Its time is in `memory.at` (any year): nanoseconds since 1970 overflow SQLite's
        # integers outside 1677-2262.
        stored = StoredFile(
            len(text.encode()),
            0,
            fragment.fragment.content_hash,
            fragment.fragment.metadata.get("tokenizer", ""),
        )
        self._write_file(path, stored, [fragment], [node], [])
        self._connection.execute(
            "INSERT INTO memory(path, id, scope, owner, at, speaker) VALUES (?, ?, ?, ?, ?, ?)",
            (path, item.id, item.scope.value, item.owner, utc(item.at), item.speaker),
        )

    def remove_memory(
        self, scope: MemoryScope | None, owner: str | None, ids: Collection[str] = ()
    ) -> int:
        """Forget memory items (of `scope` and `owner` when given; only `ids` when given);
        returns how many went.
        """
        clauses, params = ["1"], list[str]()
        for column, value in (("scope", scope and scope.value), ("owner", owner)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if ids:
            clauses.append("id IN (" + ", ".join("?" * len(ids)) + ")")
            params.extend(sorted(ids))
        paths = self._connection.execute(
            f"SELECT path FROM memory WHERE {' AND '.join(clauses)} ORDER BY path", params
        ).fetchall()
        for (path,) in paths:
            self._remove(str(path))
        return len(paths)

    def pin(self, target: str) -> None:
        """Pin a node URI, a path, a folder (ending in '/') or a glob of paths."""
        self._connection.execute(
            "INSERT OR IGNORE INTO pins(target, pinned_at) VALUES (?, ?)",
            (target, utc(datetime.now(UTC))),
        )

    def unpin(self, target: str) -> bool:
        """Unpin a target; whether it was pinned."""
        return self._connection.execute("DELETE FROM pins WHERE target = ?", (target,)).rowcount > 0

    def keep_pins(self, pins: Iterable[tuple[str, str]]) -> None:
        """Pin targets as they were pinned before, (target, when pinned) each."""
        self._connection.executemany(
            "INSERT OR IGNORE INTO pins(target, pinned_at) VALUES (?, ?)", list(pins)
        )

    def keep_uses(self, uses: Iterable[tuple[str, int, str]]) -> None:
        """Log uses as they were logged before, (session, assembly, node URI) each."""
        self._connection.executemany(
            "INSERT OR IGNORE INTO access_log(session, assembly, uri) VALUES (?, ?, ?)",
            list(uses),
        )

    def replace_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
    ) -> None:
        """Write a file's fragments, nodes and edges, replacing what was indexed from it."""
        if path.startswith(MEMORY_URI_PREFIX):
            raise ValueError(f"{path}: a memory item's name, not a file's")
        self._write_file(path, stored, fragments, nodes, edges)

    def _write_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
    ) -> None:
        self._remove(path)
        execute, many = self._connection.execute, self._connection.executemany
        execute(
            "INSERT INTO files(path, size, mtime_ns, sha256, tokenizer, skipped)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (path, stored.size, stored.mtime_ns, stored.sha256, stored.tokenizer, stored.skipped),
        )
        many(
            f"INSERT INTO nodes({NODE_COLUMNS}, defines) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*node, defined_name(node)) for node in nodes],
        )
        note_definitions(self._connection, path)
        declared: dict[tuple[str, TargetForm, tuple[str, ...], str], set[str]] = {}
        for source, kind, (form, names, near), _ in edges:
            declared.setdefault((kind, form, names, near), set()).add(source)
        many(
            f"INSERT INTO edges({DECLARED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    SOURCES_SEPARATOR.join(sorted(sources)),
                    kind,
                    form.value,
                    NAMES_SEPARATOR.join(names),
                    near,
                    path,
                )
                for (kind, form, names, near), sources in declared.items()
            ],
        )
        # Row ids are assigned here so that fragments and their full-text rows can be
        # inserted in two batches; never one the keyword index's snapshot may hold.
        if self._next_rowid is None:
            last = int(execute("SELECT coalesce(max(rowid), 0) FROM fragments").fetchone()[0])
            self._next_rowid = max(last, self._text.floor()) + 1
        rows: list[tuple[object, ...]] = []
        searchable: list[tuple[int, str, str, str]] = []
        for item in fragments:
            fragment, source = item.fragment, item.fragment.source
            modified = utc(source.modified_at or datetime.fromtimestamp(0, UTC))
            rowid = self._next_rowid
            self._next_rowid += 1
            rows.append(
                (
                    rowid,
                    fragment.id,
                    fragment.uko_uri,
                    fragment.detail_depth,
                    path,
                    source.start_line,
                    source.end_line,
                    source.kind,
                    item.title,
                    item.language,
                    fragment.text,
                    fragment.token_count,
                    fragment.content_hash,
                    modified,
                    fragment.metadata.get("read_at", ""),
                )
            )
            if item.search_text is not None:
                title = f"{item.title} {source.path}"
                searchable.append((rowid, *search_columns(title, item.search_text)))
        many(
            f"INSERT INTO fragments(rowid, {FRAGMENT_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        many("INSERT INTO fts(rowid, title, text, words) VALUES (?, ?, ?, ?)", searchable)
        self._text.add([(rowid, columns) for rowid, *columns in searchable])


def _damaged(database: Path, what: str) -> str:
    return (
        f"{database}: damaged ({what}); run `contextpipe index --rebuild PATH` to move it"
        " aside and index again"
    )


class EmbeddedBackend:
    """The embedded store: one folder (`[store] path`) per project, no server."""

    name = "embedded"

    def open(self, settings: Settings, project_dir: Path) -> EmbeddedStore:
        """The store in `[store] path`, resolved against the project directory."""
        return EmbeddedStore(
            (project_dir / settings.store.path).resolve(),
            settings.store.approximate_vectors_above,
            settings.memory,
            settings.store.vector_dtype,
        )


@hookimpl
def contextpipe_stores() -> list[StoreBackend]:
    """The embedded store, registered like any other store plugin."""
    return [EmbeddedBackend()]
