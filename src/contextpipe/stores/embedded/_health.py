"""Cheap checks that an embedded store's database is whole. Opening a store runs them, and
opening is on every query's path, so none reads more than the file header, the schema and
the first and last entries of each table and index (a full `PRAGMA quick_check` reads every
page: seconds on a large store). They read through SQLite: the file itself is opened only
once SQLite has found it damaged, to say how (see `_header_damage`).

What they catch: a file that is not an SQLite database (overwritten), a file shorter than
its header says (truncated), a missing table or index, and pages that cannot be read at the
ends of a table or index (where a truncated or overwritten file usually breaks first).

Damage further inside (a page in the middle of a table) is found by the first read that
meets it, or by the full check (`_full_check`). Either way it is noted in the store's folder
(`DAMAGED`, one line: what was found), and every later command says so until the store is
rebuilt or a full check finds it whole: a store that is damaged somewhere must not go on
answering as if it were whole, nor `index` call its files unchanged.

SQLite's other errors that a user, not a programmer, must act on (a full disk, a store that
cannot be written, a disk that fails) are said in one line too (`fault_text`).
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"
_HEADER_BYTES = 100
_NOT_A_DATABASE = "not an SQLite database: overwritten or cut short"


#: The note of damage found, in the store's folder.
DAMAGE_NOTE = "DAMAGED"


#: What Python's sqlite3 says of a text that is not UTF-8 (it names the column).
_NOT_UTF8 = "Could not decode to UTF-8"
_NOT_UTF8_COLUMN = re.compile(r"Could not decode to UTF-8 column '([^']*)'")


def is_damage(error: sqlite3.Error) -> bool:
    """Whether SQLite's error means a damaged file (not a lock, a full disk or a bad query).
    A text that does not decode is damage too: every text the store holds was written as
    UTF-8, and a page overwritten inside a text cell reads back as valid SQLite.
    """
    name = getattr(error, "sqlite_errorname", None)
    if name is not None:
        return str(name).startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    text = str(error)
    return type(error) is sqlite3.DatabaseError or "malformed" in text or _NOT_UTF8 in text


def fault_text(error: sqlite3.Error, directory: Path) -> str | None:
    """One line for an error of the disk under the store in `directory`, saying what to do
    (None: not such an error). The store keeps what was committed before it.
    """
    name = str(getattr(error, "sqlite_errorname", ""))
    if name == "SQLITE_FULL":
        return (
            f"{directory}: the disk is full ({error}); what was saved before is kept: free"
            " some space and run the command again"
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or name == "SQLITE_AUTH":
        return (
            f"{directory}: the store cannot be written ({error}); index, remember, pin and"
            " forget need a folder they can write to"
        )
    if name.startswith("SQLITE_IOERR"):
        return f"{directory}: the disk failed to read or write the store ({error})"
    return None


def rollback(connection: sqlite3.Connection) -> None:
    """End the connection's transaction after an error, if SQLite has not ended it already
    (it does for a full disk and for damage): the error is what went wrong, not this.
    """
    if connection.in_transaction:
        with suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def noted_damage(directory: Path) -> str | None:
    """The damage noted in the store's folder (see the module's docstring), if any."""
    try:
        return (directory / DAMAGE_NOTE).read_text(encoding="utf-8").strip() or "damaged"
    except FileNotFoundError:
        return None
    except (OSError, UnicodeError) as exc:
        return f"{DAMAGE_NOTE} cannot be read: {exc}"


def note_damage(directory: Path, message: str) -> None:
    """Note the damage `message` says in the store's folder, whole or not at all; a folder
    that cannot be written (read-only, full) keeps no note: the error is said all the same.
    """
    temporary = directory / f".{DAMAGE_NOTE}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        temporary.write_text(message + "\n", encoding="utf-8")
        temporary.replace(directory / DAMAGE_NOTE)
    except OSError:
        with suppress(OSError):
            temporary.unlink(missing_ok=True)


def clear_damage(directory: Path) -> None:
    """Forget the damage noted (a full check found the store whole); a folder that cannot
    be written keeps its note.
    """
    with suppress(OSError):
        (directory / DAMAGE_NOTE).unlink(missing_ok=True)


def damage_text(error: sqlite3.Error, database: Path) -> str:
    """What SQLite's error about a damaged `database` means, said as the other checks say
    it: a file that is no database, or one shorter than its header says, else the error.
    """
    if "file is not a database" in str(error):
        return _NOT_A_DATABASE
    if (column := _NOT_UTF8_COLUMN.search(str(error))) is not None:
        return f"a text of column {column[1]!r} is not UTF-8"  # the damaged bytes, not shown
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
