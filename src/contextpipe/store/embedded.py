"""The embedded store: one directory holding a SQLite database (WAL) with fragments, the
files they came from, and an FTS5 index of the full-text fragments.

Writers change the database only inside one transaction, so an interrupted `index` leaves
the previous index intact. Readers get one connection per thread, since strategies run in
worker threads.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import cast

from ..backends import TextHit
from ..errors import StoreError
from ..models import ContextFragment, DetailDepth, RequestFilters, SourceRef

DATABASE_NAME = "index.sqlite3"
SCHEMA_VERSION = "3"
#: Nodes whose depth variants a reader thread remembers (see `EmbeddedStore.variants`).
_VARIANTS_CACHED = 4_096

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL
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
    parent TEXT
);
CREATE INDEX IF NOT EXISTS nodes_by_path ON nodes(path);
CREATE TABLE IF NOT EXISTS edges (
    source TEXT NOT NULL,
    type TEXT NOT NULL,
    target TEXT NOT NULL,
    path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS edges_by_path ON edges(path);
CREATE INDEX IF NOT EXISTS fragments_by_path ON fragments(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, text, words, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

_FRAGMENT_COLUMNS = (
    "id, uri, depth, path, start_line, end_line, kind, title, language, text, token_count,"
    " content_hash, modified_at, read_at"
)

# A heading or definition name that matches says more than a word in the body.
_TITLE_WEIGHT = 3.0
_QUALIFIED_COLUMNS = ", ".join(f"fragments.{c.strip()}" for c in _FRAGMENT_COLUMNS.split(","))

# Words too common to say anything about relevance; they only slow OR queries down.
_STOPWORDS = frozenset(
    (
        "a an and are as at be but by do does for from has have how i if in into is it its of on"
        " or so than that the their then there these this to was we what when where which who why"
        " will with you your"
    ).split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]+)"')
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MAX_TERMS = 32


def identifier_words(text: str) -> str:
    """Split identifiers into words (`BudgetAllocator` -> `budget allocator`) so that a
    query in plain words finds code.
    """
    return " ".join(filter(None, map(_word_parts, _WORD.findall(text))))


@lru_cache(maxsize=200_000)
def _word_parts(word: str) -> str:
    """`BudgetAllocator` -> `budget allocator`; '' for a word that is not compound. Code
    repeats its identifiers endlessly, so this is cached per word.
    """
    pieces = _IDENTIFIER_PART.findall(word)
    if len(pieces) > 1 or "_" in word:
        return " ".join(piece.lower() for piece in pieces)
    return ""


def query_terms(query: str) -> list[str]:
    """The search terms of a user query: quoted phrases, then words, lower-cased, without
    stopwords, deduplicated, in order of appearance.
    """
    terms: list[str] = []
    for phrase in _PHRASE.findall(query):
        words = [w.lower() for w in _WORD.findall(phrase)]
        if len(words) > 1:
            terms.append(" ".join(words))
    for word in _WORD.findall(_PHRASE.sub(" ", query)):
        # Split before lower-casing: `BudgetAllocator` also searches `budget` and `allocator`.
        terms.extend([word.lower(), *identifier_words(word).split()])
    informative = [t for t in terms if t not in _STOPWORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(informative or terms))[:_MAX_TERMS]


def fts_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the terms, each one quoted so that no user text is
    ever read as FTS syntax (operators, column filters, `*`, parentheses).
    """
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


@dataclass(frozen=True)
class StoredFile:
    """What the store remembers about an indexed file, to skip unchanged ones."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class NewFragment:
    """A fragment to write, with the fields the store indexes. `search_text` is what the
    full-text index sees (None: not searchable at all).
    """

    fragment: ContextFragment
    title: str
    language: str
    search_text: str | None


@dataclass(frozen=True)
class StoredNode:
    """A UKO node as the store keeps it (the graph is built from these and the edges)."""

    uri: str
    kind: str
    name: str
    path: str
    start_line: int
    end_line: int
    parent: str | None


@dataclass(frozen=True)
class StoredEdge:
    """A typed edge as declared by its source file; `target` is a key the graph resolves."""

    source: str
    type: str
    target: str
    path: str


class EmbeddedStore:
    """Fragments, files and full-text search in `<directory>/index.sqlite3`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.database = directory / DATABASE_NAME
        self._local = threading.local()

    # -- connections -------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether an index has been written here."""
        return self.database.is_file()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.database, isolation_level=None, timeout=30.0)
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    def _reader(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            if not self.exists():
                raise StoreError(
                    f"{self.directory}: no index here; run `contextpipe index PATH` first"
                )
            connection = self._connect()
            version = _schema_version(connection)
            if version != SCHEMA_VERSION:
                connection.close()
                raise StoreError(
                    f"{self.directory}: index has layout {version}, this contextpipe reads "
                    f"{SCHEMA_VERSION}; run `contextpipe index PATH` to rebuild it"
                )
            self._local.connection = connection
        return connection

    def check(self) -> None:
        """Raise `StoreError` unless the index exists and has this version's layout."""
        self._reader()

    def close(self) -> None:
        """Close this thread's reader connection."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
            self._local.variants = None

    @contextmanager
    def writer(self) -> Generator[StoreWriter]:
        """A write transaction: everything inside commits together or not at all."""
        self.directory.mkdir(parents=True, exist_ok=True)
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                if _schema_version(connection) not in (None, SCHEMA_VERSION):
                    # An index of an older layout is rebuilt, inside this same transaction.
                    for table in ("fts", "edges", "nodes", "fragments", "files", "meta"):
                        connection.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                writer = StoreWriter(connection)
                writer.set_meta("schema_version", SCHEMA_VERSION)
                yield writer
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()
        self.close()  # this thread's reader must not keep an old schema check

    # -- reading -----------------------------------------------------------------------

    def count(self) -> int:
        """How many fragments (all depths) the store holds."""
        return int(self._reader().execute("SELECT count(*) FROM fragments").fetchone()[0])

    def searchable_count(self) -> int:
        """How many fragments the full-text index holds."""
        return int(self._reader().execute("SELECT count(*) FROM fts").fetchone()[0])

    def variants(self, uko_uri: str) -> list[ContextFragment]:
        """Every stored depth of one node, deepest first."""
        connection = self._reader()
        # Packing asks for the same nodes request after request; the answers stay valid
        # until some connection commits (an index run), which changes data_version.
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        cache: dict[str, list[ContextFragment]] | None = getattr(self._local, "variants", None)
        if cache is None or self._local.variants_version != version:
            cache = self._local.variants = {}
            self._local.variants_version = version
        found = cache.get(uko_uri)
        if found is None:
            rows = connection.execute(
                f"SELECT {_FRAGMENT_COLUMNS} FROM fragments WHERE uri = ? ORDER BY depth DESC",
                (uko_uri,),
            )
            if len(cache) >= _VARIANTS_CACHED:
                del cache[next(iter(cache))]
            found = cache[uko_uri] = [_fragment(row) for row in rows]
        return list(found)

    def search(self, query: str, limit: int, filters: RequestFilters) -> list[TextHit]:
        """BM25-ranked full-text fragments matching any query term, best first."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        where, params = _filter_sql(filters)
        # Rank inside the FTS table first and join only the best rows: joining every match
        # before ranking dominates the query time on large stores. Filters may reject some
        # of the best rows, so a filtered search ranks a wider pool.
        pool = limit * 20 if where else limit
        rows = (
            self._reader()
            .execute(
                f"SELECT {_QUALIFIED_COLUMNS}, best.rank FROM ("
                f"  SELECT rowid, bm25(fts, {_TITLE_WEIGHT}, 1, 0.5) AS rank FROM fts"
                "   WHERE fts MATCH ? ORDER BY rank LIMIT ?"
                ") AS best JOIN fragments ON fragments.rowid = best.rowid"
                f" WHERE 1 {where} ORDER BY best.rank, fragments.id LIMIT ?",
                (fts_expression(terms), pool, *params, limit),
            )
            .fetchall()
        )
        hits: list[TextHit] = []
        for row in rows:
            fragment = _fragment(row[:-1])
            haystack = f"{fragment.text.lower()} {identifier_words(fragment.text)}"
            matched = tuple(term for term in terms if term in haystack)
            hits.append(TextHit(fragment, -float(row[-1]), matched))
        return hits

    def nodes(self) -> list[StoredNode]:
        """Every node, in path and line order."""
        rows = self._reader().execute(
            "SELECT uri, kind, name, path, start_line, end_line, parent FROM nodes"
            " ORDER BY path, start_line, uri"
        )
        return [
            StoredNode(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                int(r[4]),
                int(r[5]),
                None if r[6] is None else str(r[6]),
            )
            for r in rows
        ]

    def edges(self) -> list[StoredEdge]:
        """Every declared edge, in a stable order."""
        rows = self._reader().execute(
            "SELECT source, type, target, path FROM edges ORDER BY path, source, type, target"
        )
        return [StoredEdge(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


class StoreWriter:
    """Changes to the store inside one open transaction."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._next_rowid: int | None = None

    def set_meta(self, key: str, value: str) -> None:
        """Record a metadata value."""
        self._connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def get_meta(self, key: str) -> str | None:
        """A metadata value as this transaction sees it."""
        row = self._connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def files(self, prefix: str) -> dict[str, StoredFile]:
        """Indexed files whose path starts with `prefix` ('' for all)."""
        rows = self._connection.execute(
            "SELECT path, size, mtime_ns, sha256 FROM files WHERE substr(path, 1, ?) = ?",
            (len(prefix), prefix),
        )
        return {str(r[0]): StoredFile(int(r[1]), int(r[2]), str(r[3])) for r in rows}

    def touch_file(self, path: str, stored: StoredFile) -> None:
        """Record a new size and mtime for a file whose content did not change."""
        self._connection.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
            (stored.size, stored.mtime_ns, path),
        )

    def remove_file(self, path: str) -> None:
        """Forget a file and every fragment read from it."""
        for (rowid,) in self._connection.execute(
            "SELECT rowid FROM fragments WHERE path = ?", (path,)
        ).fetchall():
            self._connection.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        for table in ("fragments", "nodes", "edges", "files"):
            self._connection.execute(f"DELETE FROM {table} WHERE path = ?", (path,))

    def replace_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[StoredNode],
        edges: Iterable[StoredEdge],
        *,
        indexed_before: bool = True,
    ) -> None:
        """Write a file's fragments, nodes and edges, replacing what was indexed from it
        (`indexed_before=False` skips looking for that on a file new to the store).
        """
        if indexed_before:
            self.remove_file(path)
        execute, many = self._connection.execute, self._connection.executemany
        execute(
            "INSERT INTO files(path, size, mtime_ns, sha256) VALUES (?, ?, ?, ?)",
            (path, stored.size, stored.mtime_ns, stored.sha256),
        )
        many(
            "INSERT INTO nodes(uri, kind, name, path, start_line, end_line, parent)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(n.uri, n.kind, n.name, n.path, n.start_line, n.end_line, n.parent) for n in nodes],
        )
        many(
            "INSERT INTO edges(source, type, target, path) VALUES (?, ?, ?, ?)",
            [(e.source, e.type, e.target, e.path) for e in edges],
        )
        # Row ids are assigned here so that fragments and their full-text rows can be
        # inserted in two batches.
        if self._next_rowid is None:
            self._next_rowid = int(
                execute("SELECT coalesce(max(rowid), 0) + 1 FROM fragments").fetchone()[0]
            )
        rows: list[tuple[object, ...]] = []
        searchable: list[tuple[object, ...]] = []
        for item in fragments:
            fragment, source = item.fragment, item.fragment.source
            modified = (source.modified_at or datetime.fromtimestamp(0, UTC)).isoformat()
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
                searchable.append(
                    (
                        rowid,
                        f"{title} {identifier_words(title)}",
                        item.search_text,
                        identifier_words(item.search_text),
                    )
                )
        many(
            f"INSERT INTO fragments(rowid, {_FRAGMENT_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        many("INSERT INTO fts(rowid, title, text, words) VALUES (?, ?, ?, ?)", searchable)


def _schema_version(connection: sqlite3.Connection) -> str | None:
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: nothing was ever written
        return None
    return None if row is None else str(row[0])


def _filter_sql(filters: RequestFilters) -> tuple[str, list[str]]:
    clauses: list[str] = []
    params: list[str] = []
    if filters.paths:
        clauses.append("(" + " OR ".join("fragments.path GLOB ?" for _ in filters.paths) + ")")
        params.extend(filters.paths)
    if filters.kinds:
        clauses.append("fragments.kind IN (" + ", ".join("?" for _ in filters.kinds) + ")")
        params.extend(filters.kinds)
    return "".join(f" AND {clause}" for clause in clauses), params


def _fragment(row: Sequence[object]) -> ContextFragment:
    (
        id_,
        uri,
        depth,
        path,
        start,
        end,
        kind,
        title,
        language,
        text,
        tokens,
        digest,
        modified,
        read_at,
    ) = row
    return ContextFragment(
        id=str(id_),
        uko_uri=str(uri),
        detail_depth=cast(DetailDepth, int(str(depth))),
        text=str(text),
        token_count=int(str(tokens)),
        source=SourceRef(
            uri=str(uri),
            path=str(path),
            start_line=int(str(start)),
            end_line=int(str(end)),
            kind=str(kind),
            modified_at=datetime.fromisoformat(str(modified)),
        ),
        content_hash=str(digest),
        metadata={"title": str(title), "language": str(language), "read_at": str(read_at)},
    )
