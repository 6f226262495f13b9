"""The embedded store's `SessionTiers`: pinned items, each session's access log, recent
memory (rules for `embedded`).

Rules:

1. Pinned are the config's targets (`[memory] pinned`) and the store's pins (`pins`
   table, written by `contextpipe pin`): a target starting `uko://` names a node, one
   ending in `/` a folder, any other a path or a glob of paths. Their full texts come in
   path, line and id order.
2. The access log keeps, per session, the nodes its last `access_log_assemblies`
   assemblies delivered (table `access_log`); each record is one small transaction of its
   own, never part of an index run, and changes nothing a search or the graph reads. A log
   that cannot be written (busy, read-only) is skipped: it is only a log. It is written
   on the thread's own connection to the store, which stays open: opening one per record
   cost a session's request about a millisecond.
3. Every read keeps to the request's filters and memory scope (`_scope` rule 1).
4. The pinned items are read once per state of the store (its generation, which every
   write of an indexed file or of memory changes), per pins and per request filters, and
   kept as rows: a service asks for them with every request of a session.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime

from ...core._memo import BoundedMemo
from ...core.logs import logger
from ...core.models import ContextFragment, RequestFilters
from ._rows import FRAGMENT_COLUMNS, as_fragment, filter_sql, utc
from ._scope import Rows

#: A folder target covers everything under it; a URI is matched exactly.
_NODE_PREFIX = "uko://"
#: Pinned reads kept (rule 4): one per store state, pins, limit and request filters.
_PINNED_KEPT = 64
_PinnedKey = tuple[int, int, tuple[str, ...], int, RequestFilters]


class EmbeddedSessions:
    """`SessionTiers` over the embedded store's tables."""

    def __init__(
        self,
        rows: Rows,
        connection: Callable[[], sqlite3.Connection],
        pinned: Sequence[str],
        assemblies: int,
        state: Callable[[], tuple[int, int]],
    ) -> None:
        """`connection` gives the calling thread's connection to the store; `state` tells
        the store's state: when its database file was replaced (its generations restart),
        and its generation.
        """
        self._rows = rows
        self._connection = connection
        self._configured = tuple(pinned)
        self._assemblies = assemblies
        self._state = state
        self._pinned = BoundedMemo[_PinnedKey, list[tuple[object, ...]]](_PINNED_KEPT)

    def pins(self) -> list[str]:
        """The configured targets, then the store's pins, each once."""
        stored = [str(row[0]) for row in self._rows("SELECT target FROM pins ORDER BY target", ())]
        return list(dict.fromkeys((*self._configured, *stored)))

    def pinned(self, limit: int, filters: RequestFilters) -> list[ContextFragment]:
        """Full texts of the pinned items, by path, line and id (rules 1 and 4)."""
        targets = self.pins()
        key = (*self._state(), tuple(targets), limit, filters)
        rows = self._pinned.get(key, lambda: self._named_rows(targets, limit, filters))
        return [as_fragment(row) for row in rows]

    def named(
        self, targets: Sequence[str], limit: int, filters: RequestFilters
    ) -> list[ContextFragment]:
        """Full texts of the nodes and files `targets` name, by path, line and id (rule 1)."""
        return [as_fragment(row) for row in self._named_rows(targets, limit, filters)]

    def _named_rows(
        self, targets: Sequence[str], limit: int, filters: RequestFilters
    ) -> list[tuple[object, ...]]:
        if not targets or limit <= 0:
            return []
        uris = [target for target in targets if target.startswith(_NODE_PREFIX)]
        globs = [
            f"{target}*" if target.endswith("/") else target
            for target in targets
            if not target.startswith(_NODE_PREFIX)
        ]
        clauses = [*(["uri IN (" + ", ".join("?" * len(uris)) + ")"] if uris else [])]
        clauses += ["fragments.path GLOB ?"] * len(globs)
        where, params = filter_sql(filters)
        found = self._rows(
            f"SELECT {FRAGMENT_COLUMNS} FROM fragments WHERE depth = 9"
            f" AND ({' OR '.join(clauses)}) {where}"
            " ORDER BY fragments.path, start_line, id LIMIT ?",
            (*uris, *globs, *params, limit),
        )
        return [tuple(row) for row in found]

    def recently_used(
        self, session: str, limit: int, filters: RequestFilters
    ) -> list[ContextFragment]:
        """Full texts of the nodes `session`'s recent assemblies delivered, latest first,
        ties by id (rule 2).
        """
        if limit <= 0:
            return []
        logged = self._rows(
            "SELECT uri, assembly FROM access_log WHERE session = ? ORDER BY assembly DESC",
            (session,),
        )
        # Each node at its latest assembly, the assemblies latest first: their fragments are
        # read an assembly at a time until `limit` are found, not all the log holds at once.
        by_assembly: dict[int, list[str]] = {}
        seen: set[str] = set()
        for uri, assembly in logged:
            if uri not in seen:
                seen.add(uri)
                by_assembly.setdefault(int(assembly), []).append(str(uri))
        where, params = filter_sql(filters)
        found: list[ContextFragment] = []
        for uris in by_assembly.values():
            rows = self._rows(
                f"SELECT {FRAGMENT_COLUMNS} FROM fragments WHERE depth = 9"
                f" AND uri IN (SELECT value FROM json_each(?)) {where} ORDER BY id",
                (json.dumps(uris), *params),
            )
            found += [as_fragment(row) for row in rows[: limit - len(found)]]
            if len(found) >= limit:
                break
        return found

    def recent_memory(
        self, limit: int, filters: RequestFilters, until: datetime | None = None
    ) -> list[ContextFragment]:
        """Memory items the request may see from before `until`, newest first, ties by id."""
        if limit <= 0:
            return []
        where, params = filter_sql(filters)
        bound: list[str] = []
        if until is not None:
            where += " AND modified_at < ?"
            bound.append(utc(until))
        # The path filters narrow the memory read first (a range of its primary key): else
        # every memory item's fragment is looked up, 2,000 items taking 2 ms.
        globs = " OR ".join("memory.path GLOB ?" for _ in filters.paths)
        items = f"SELECT path FROM memory WHERE {globs}" if globs else "SELECT path FROM memory"
        found = self._rows(
            f"SELECT {FRAGMENT_COLUMNS} FROM fragments"
            f" WHERE depth = 9 AND fragments.path IN ({items})"
            f" {where} ORDER BY modified_at DESC, id LIMIT ?",
            (*filters.paths, *params, *bound, limit),
        )
        return [as_fragment(row) for row in found]

    def record_use(self, session: str, uris: Sequence[str]) -> None:
        """Log one assembly of `session` and forget its older ones past the bound (rule 2)."""
        if self._assemblies <= 0 or not uris:
            return
        connection = self._connection()
        (waits,) = connection.execute("PRAGMA busy_timeout").fetchone()
        began = False
        try:
            # An index run holds the lock for seconds: a query waits for it only briefly.
            connection.execute("PRAGMA busy_timeout = 50")
            connection.execute("BEGIN IMMEDIATE")
            began = True
            (latest,) = connection.execute(
                "SELECT coalesce(max(assembly), 0) FROM access_log WHERE session = ?", (session,)
            ).fetchone()
            assembly = int(latest) + 1
            connection.executemany(
                "INSERT OR IGNORE INTO access_log(session, assembly, uri) VALUES (?, ?, ?)",
                [(session, assembly, uri) for uri in dict.fromkeys(uris)],
            )
            connection.execute(
                "DELETE FROM access_log WHERE session = ? AND assembly <= ?",
                (session, assembly - self._assemblies),
            )
            connection.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # busy, or a read-only store
            logger.debug("access not logged", session=session, reason=str(exc))
        finally:
            # The connection is the thread's reader: it must go on as it was (a read the
            # caller holds open, where BEGIN failed, is the caller's to end).
            if began and connection.in_transaction:
                connection.execute("ROLLBACK")
            connection.execute(f"PRAGMA busy_timeout = {int(waits)}")
