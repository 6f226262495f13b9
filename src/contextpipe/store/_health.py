"""Cheap checks that an embedded store's database is whole. Opening a store runs them, and
opening is on every query's path, so none reads more than the file header, the schema and
the first and last entries of each table and index (a full `PRAGMA quick_check` reads every
page: seconds on a large store). They read through SQLite: the file itself is opened only
once SQLite has found it damaged, to say how (see `_header_damage`).

What they catch: a file that is not an SQLite database (overwritten), a file shorter than
its header says (truncated), a missing table or index, and pages that cannot be read at the
ends of a table or index (where a truncated or overwritten file usually breaks first).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"
_HEADER_BYTES = 100
_NOT_A_DATABASE = "not an SQLite database: overwritten or cut short"


def is_damage(error: sqlite3.DatabaseError) -> bool:
    """Whether SQLite's error means a damaged file (not a lock, a full disk or a bad query)."""
    return type(error) is sqlite3.DatabaseError or "malformed" in str(error)


def damage_text(error: sqlite3.DatabaseError, database: Path) -> str:
    """What SQLite's error about a damaged `database` means, said as the other checks say
    it: a file that is no database, or one shorter than its header says, else the error.
    """
    if "file is not a database" in str(error):
        return _NOT_A_DATABASE
    return _header_damage(database) or str(error)


def _header_damage(database: Path) -> str | None:
    """What the file's header and size say is wrong with it (None: nothing). Only for a
    file SQLite has found damaged: it opens and closes the file, and closing any descriptor
    of a file drops every POSIX lock this process's connections hold on it, after which
    another process may checkpoint and delete a write-ahead log they still use
    (sqlite.org/howtocorrupt.html, section 2.2). Healthy files are measured through SQLite.
    """
    wal_in_use = _wal_in_use(database)
    try:
        with database.open("rb") as file:
            header = file.read(_HEADER_BYTES)
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if len(header) < _HEADER_BYTES or not header.startswith(_MAGIC):
        return _NOT_A_DATABASE
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65_536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count in the header is valid when the two counters agree (SQLite file format).
    expected = pages * page_size if pages and header[24:28] == header[92:96] else 0
    return _shorter(database, expected, wal_in_use)


def _size_damage(connection: sqlite3.Connection, database: Path) -> str | None:
    """Whether the file is shorter than the header SQLite read says (its page count, when
    the header's counters agree; else SQLite counts pages from the size).
    """
    wal_in_use = _wal_in_use(database)
    page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
    expected = int(connection.execute("PRAGMA page_count").fetchone()[0]) * page_size
    return _shorter(database, expected, wal_in_use)


def _shorter(database: Path, expected: int, wal_in_use: bool) -> str | None:
    """A file shorter than `expected` bytes, unless a write-ahead log was or is in use:
    pages may then still be in the log, and only a closed store (or one whose log was
    checkpointed and removed) must hold every page in the file.
    """
    try:
        size = database.stat().st_size
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if size < expected and not wal_in_use and not _wal_in_use(database):
        return f"truncated: {size:,} of {expected:,} bytes"
    return None


def _wal_in_use(database: Path) -> bool:
    try:
        return database.with_name(database.name + "-wal").stat().st_size > 0
    except OSError:
        return False


@dataclass(frozen=True)
class Inspection:
    """What the schema of an open database says."""

    empty: bool
    """No table at all: nothing was ever committed (a first index that was interrupted)."""
    version: str | None
    """The layout version recorded in `meta`, if any."""
    damage: str | None
    """What is wrong, if something is."""


def inspect(
    connection: sqlite3.Connection, database: Path, schema: str, version: str
) -> Inspection:
    """Check the size of `database` (open on `connection`), compare it with `schema` (the
    DDL of layout `version`) and probe the ends of every table and index. A database of
    another layout is reported by its version only.
    """
    try:
        found = {str(name) for (name,) in connection.execute("SELECT name FROM sqlite_master")}
        if not found:
            return Inspection(empty=True, version=None, damage=None)
        short = _size_damage(connection, database)
        if short is not None:
            return Inspection(False, None, short)
        recorded = _recorded_version(connection) if "meta" in found else None
        if recorded is not None and recorded != version:
            return Inspection(empty=False, version=recorded, damage=None)
        expected = _objects(schema)
        missing = [f"{kind} {name}" for name, kind in expected.items() if name not in found]
        if missing:
            return Inspection(False, recorded, f"{missing[0]} is missing")
        if recorded is None:
            return Inspection(False, None, "no layout version recorded")
        # Every cache of a reader is kept per generation: without one, none would follow a change.
        if connection.execute("SELECT 1 FROM meta WHERE key = 'generation'").fetchone() is None:
            return Inspection(False, recorded, "no generation recorded")
        _probe(connection, expected)
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        return Inspection(False, None, damage_text(exc, database))
    return Inspection(empty=False, version=recorded, damage=None)


def _recorded_version(connection: sqlite3.Connection) -> str | None:
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


@lru_cache(maxsize=4)
def _objects(schema: str) -> dict[str, str]:
    """Tables and indexes (name -> "table"/"index") that `schema` creates, in its order,
    learned by running it in memory, so that the check never drifts from the DDL.
    """
    with sqlite3.connect(":memory:") as memory:
        memory.executescript(schema)
        rows = memory.execute(
            "SELECT name, type FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
    memory.close()
    return {str(name): str(kind) for name, kind in rows}


def _probe(connection: sqlite3.Connection, objects: dict[str, str]) -> None:
    """Read the first and last entry of every rowid table and every named index."""
    without_rowid = {
        str(name)
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID%'"
        )
    }
    for name, kind in objects.items():
        if kind == "table" and name not in without_rowid:
            for order in ("ASC", "DESC"):
                connection.execute(f'SELECT rowid FROM "{name}" ORDER BY rowid {order} LIMIT 1')
        elif kind == "index":
            table, sql = connection.execute(
                "SELECT tbl_name, sql FROM sqlite_master WHERE name = ?", (name,)
            ).fetchone()
            column = connection.execute(f'PRAGMA index_info("{name}")').fetchone()[2]
            # A partial index is only used by a query that asks what it holds.
            _, where, condition = str(sql or "").partition(" WHERE ")
            for order in ("ASC", "DESC"):
                connection.execute(
                    f'SELECT "{column}" FROM "{table}" INDEXED BY "{name}"'
                    f' {where}{condition} ORDER BY "{column}" {order} LIMIT 1'
                ).fetchall()
