"""The full check of an embedded store (`contextpipe index --check`): every page read and
what the store holds added up. It reads everything, so it runs on demand only: opening a
store runs the cheap checks of `_health`, and the first read that meets damage says so.

Rules, in the order the code follows them (the first damage found is the one said):

1. The index's database: SQLite's `PRAGMA integrity_check`, which reads every page of
   every table and index and checks each index against its table. A problem is said as
   the first table whose own check (with its indexes) finds one says it.
   Then every text the database holds decodes as UTF-8, as it was written: a page
   overwritten inside a text cell leaves the page valid SQLite.
2. The full-text table: FTS5's own integrity check (its index against its content). It
   takes the write lock for a moment, so a store read as immutable skips it.
3. The keyword index (`_text_index.verify`): every array adds up, and it holds exactly the
   searchable fragments.
4. The vectors' database: `integrity_check`, then every vector is of the space's dimension
   and of unit length (the vector writer takes no other: `_vectors` rule 3), so random
   bytes written over vectors are found.
5. The files derived from the vectors (the saved matrix, the approximate index): their
   checksums (`_sealed`). These are never trusted when they fail one, only built anew, so
   a failure is said as what it is, not as damage.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _sealed
from ._health import is_damage
from ._text_index import TextIndexError, verify
from ._vectors import DATABASE_NAME as VECTORS_NAME
from ._vectors import UNIT_TOLERANCE

_INDEX_NAME = "index.sqlite3"
#: Vectors read at once.
_BATCH = 5_000


@dataclass(frozen=True)
class Checked:
    """What the full check found."""

    summary: str
    """What was checked, in one line."""
    damage: str | None
    """What is wrong (None: nothing)."""
    damaged_file: Path
    """The database the damage is in."""


def full_check(connection: sqlite3.Connection, directory: Path) -> Checked:
    """Rules 1-5 over the store in `directory`, open on `connection` (its vectors attached
    as `v`). SQLite's own errors (damage it meets on the way) are the caller's to say.
    """
    started = time.perf_counter()
    index, vectors = directory / _INDEX_NAME, directory / VECTORS_NAME
    pages = int(connection.execute("PRAGMA page_count").fetchone()[0])
    problem = _integrity(connection, "main") or _texts(connection)
    if problem is not None:
        return Checked("", problem, index)
    problem = _fts(connection)
    if problem is not None:
        return Checked("", problem, index)
    try:
        searchable = verify(connection)
    except TextIndexError as exc:
        return Checked("", str(exc), index)
    try:
        problem = _integrity(connection, "v")
        count, problem = (0, problem) if problem is not None else _vectors(connection)
    except sqlite3.DatabaseError as exc:  # damage SQLite meets before it can say where
        if not is_damage(exc):
            raise
        count, problem = 0, str(exc)
    if problem is not None:
        return Checked("", problem, vectors)
    stale = _sealed.failing(directory)
    seconds = time.perf_counter() - started
    summary = (
        f"{directory}: whole ({pages:,} pages of {_INDEX_NAME}, {searchable:,} searchable"
        f" fragments, {count:,} vectors checked in {seconds:.1f} s)"
    )
    if stale:
        summary += f"; {', '.join(stale)} failed its checksum and will be built anew"
    return Checked(summary, None, index)


def _integrity(connection: sqlite3.Connection, schema: str) -> str | None:
    """Rule 1 for `schema` ("main" or "v"): the first problem SQLite finds, if any, said as
    the first table (with its indexes) whose own check finds it, when one does.
    """
    try:
        rows = connection.execute(f"PRAGMA {schema}.integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:  # it stopped at damage instead of saying it
        if not is_damage(exc):
            raise
        problem = str(exc)
    else:
        lines = [line for (row,) in rows for line in str(row).splitlines()]
        problems = [line for line in lines if line != "ok" and not line.startswith("*** ")]
        if not problems:
            return None
        problem = problems[0]
    return _damaged_table(connection, schema) or problem


def _texts(connection: sqlite3.Connection) -> str | None:
    """Rule 1, its second part: the first text of the index's tables that is not UTF-8."""
    tables = connection.execute(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND rootpage > 0"
        " ORDER BY rootpage"
    ).fetchall()
    for (table,) in tables:
        for row in connection.execute(f'PRAGMA table_info("{table}")').fetchall():
            column = f'"{row[1]}"'
            rows = connection.execute(
                f"SELECT CAST({column} AS BLOB) FROM \"{table}\" WHERE typeof({column}) = 'text'"
            )
            for (data,) in rows:
                try:
                    bytes(data).decode("utf-8")
                except UnicodeDecodeError:
                    return f"table {table}: a text of column {row[1]!r} is not UTF-8"
    return None


def _damaged_table(connection: sqlite3.Connection, schema: str) -> str | None:
    """The first table of `schema` whose own check (with its indexes) finds damage."""
    tables = connection.execute(
        f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' AND rootpage > 0"
        " ORDER BY rootpage"
    ).fetchall()
    for (name,) in tables:
        try:
            rows = connection.execute(f'PRAGMA {schema}.integrity_check("{name}")').fetchall()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            return f"table {name}: {exc}"
        if rows != [("ok",)]:
            return f"table {name}: {str(rows[0][0]).splitlines()[-1]}"
    return None


def _fts(connection: sqlite3.Connection) -> str | None:
    """Rule 2."""
    try:
        connection.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
    except sqlite3.OperationalError as exc:
        if str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
            return None  # read as immutable: not checked
        raise
    except sqlite3.DatabaseError as exc:
        return f"full-text table: {exc}"
    return None


def _vectors(connection: sqlite3.Connection) -> tuple[int, str | None]:
    """Rule 4: how many vectors there are, and the first that is wrong, if one is."""
    meta = dict(connection.execute("SELECT key, value FROM v.meta").fetchall())
    if "dimension" not in meta:
        return 0, None
    dimension = int(meta["dimension"])
    count, last = 0, ""
    while rows := connection.execute(
        "SELECT hash, vector FROM v.vectors WHERE hash > ? ORDER BY hash LIMIT ?", (last, _BATCH)
    ).fetchall():
        for digest, blob in rows:
            if not isinstance(blob, bytes) or len(blob) != 4 * dimension:
                return count, f"the vector of text {digest} is not {dimension} float32 wide"
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), np.float32)
        norms = np.linalg.norm(matrix.reshape(len(rows), dimension), axis=1)
        wrong = np.flatnonzero(~(np.abs(norms - 1) <= UNIT_TOLERANCE))
        if len(wrong):
            first = int(wrong[0])
            length = f"{norms[first]:.3f}"
            return count, f"the vector of text {rows[first][0]} has length {length}, not 1"
        count += len(rows)
        last = str(rows[-1][0])
    return count, None
