"""What a moved-aside embedded store holds that no file can give back, read for the new
store (`EmbeddedStore.carry_memory`): memory items, pins and each session's access log.

Rules:

1. The old database is opened read-only and only read: whatever happens here, the
   moved-aside folder stays as it was.
2. Each of the three is read on its own, whole or not at all, so that damage in one loses
   only that one; what could not be read is named, with SQLite's reason.
3. A memory item is read with everything its write needs again: its row of `memory`, its
   full-text fragment, the text it was searched by (its full-text row, which may hold its
   neighbours' words), the tokenizer that counted it and its node, stored under its node
   URI whatever name its layout gave it. A store of a layout without memory (before 9)
   holds none: nothing to read, nothing lost.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ...contract.records import MemoryItem, MemoryScope, NewFragment, NodeRecord
from ._rows import FRAGMENT_COLUMNS, as_fragment

#: Rule 3: one row per memory item.
_ITEMS = (
    "SELECT memory.id, memory.scope, memory.owner, memory.at, memory.speaker,"
    " files.tokenizer, fts.text, nodes.uri, nodes.kind, nodes.name, nodes.path,"
    " nodes.start_line, nodes.end_line, nodes.parent,"
    f" {', '.join(f'fragments.{column.strip()}' for column in FRAGMENT_COLUMNS.split(','))}"
    " FROM memory JOIN files ON files.path = memory.path"
    " JOIN fragments ON fragments.path = memory.path AND fragments.depth = 9"
    " JOIN nodes ON nodes.path = memory.path"
    " LEFT JOIN fts ON fts.rowid = fragments.rowid"
    " ORDER BY memory.path"
)
_USES = "SELECT session, assembly, uri FROM access_log ORDER BY session, assembly, uri"


@dataclass(frozen=True)
class Previous:
    """What was read from the old store, and what could not be (rule 2)."""

    items: list[tuple[MemoryItem, NewFragment, NodeRecord]] = field(default_factory=lambda: [])
    pins: list[tuple[str, str]] = field(default_factory=lambda: [])
    uses: list[tuple[str, int, str]] = field(default_factory=lambda: [])
    unread: list[str] = field(default_factory=lambda: [])


def read_previous(database: Path) -> Previous:
    """Memory items, pins and access log of the database at `database` (module rules)."""
    if not database.is_file():
        return Previous()
    try:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return Previous(unread=[f"the old store cannot be opened ({exc})"])
    try:
        tables = _read(connection, "SELECT name FROM sqlite_master WHERE type = 'table'")
        if isinstance(tables, str):
            return Previous(unread=[f"the old store cannot be read ({tables})"])
        names = {str(row[0]) for row in tables}
        unread: list[str] = []

        def rows(table: str, sql: str, what: str) -> list[tuple[Any, ...]]:
            if table not in names:
                return []  # an older layout: it never held any (rule 3)
            found = _read(connection, sql)
            if isinstance(found, str):
                unread.append(f"{what} ({found})")
                return []
            return found

        items = rows("memory", _ITEMS, "memory items")
        pins = rows("pins", "SELECT target, pinned_at FROM pins ORDER BY target", "pins")
        uses = rows("access_log", _USES, "the access log")
    finally:
        connection.close()
    return Previous(
        [_item(row) for row in items],
        [(str(target), str(at)) for target, at in pins],
        [(str(session), int(assembly), str(uri)) for session, assembly, uri in uses],
        unread,
    )


def _read(connection: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]] | str:
    """Every row, or SQLite's reason it could not read them (rule 2)."""
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc)


def _item(row: tuple[Any, ...]) -> tuple[MemoryItem, NewFragment, NodeRecord]:
    """A row of `_ITEMS` as the arguments of `IndexWriter.add_memory`."""
    item_id, scope, owner, at, speaker, tokenizer, searched = row[:7]
    node = NodeRecord(*row[7:14])
    fragment = as_fragment(row[14:])
    title, language = fragment.metadata["title"], fragment.metadata["language"]
    # Stored under its node URI, whatever name a layout before 12 gave it.
    node = node._replace(path=node.uri)
    source = fragment.source.model_copy(update={"path": node.uri})
    fragment = fragment.model_copy(
        update={"source": source, "metadata": {"tokenizer": str(tokenizer)}}
    )
    # The store keeps the shown text only; an item's own words are not needed again.
    item = MemoryItem(
        str(item_id),
        fragment.text,
        datetime.fromisoformat(str(at)),
        MemoryScope(str(scope)),
        str(owner),
        str(speaker),
    )
    search_text = None if searched is None else str(searched)
    return item, NewFragment(fragment, str(title), str(language), search_text), node
