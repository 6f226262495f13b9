"""One request's keyword searches, kept so that asking one again for more hits reads
neither its ranking nor the rows it read already (rules for `embedded.search`).

A strategy asks a first page of hits and, when they hold too little, once more for more
(`proposals` rule 4): the same query and filters, a larger limit. At 100k fragments the
second search cost as much as the first: the ranking again, then every row again.

Rules:

1. A ranking is made for at least `DEPTH` hits: the keyword index's pruning saves little
   past a query's first terms, so a deeper ranking costs about the same (1.1 ms at 100k
   fragments for 50 hits or for 500).
2. A search of the same query and filters on the same keyword view (one state of the
   store, and so one set of memory hidden from the request) for at most as many hits as
   the ranking was made for takes its best from that ranking, cut by the same
   `select_best`: it gives what a fresh search would. The rows and hits it made already
   are reused, by row id.
3. Searches are kept per request (one `SearchMemo` per `backends()`), never across
   requests: a request's second page costs less, nothing else changes. A request keeps
   its `KEPT` latest rankings (a caller that holds one `backends()` for many requests
   keeps no more).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from ...contract.records import TextHit

if TYPE_CHECKING:
    from ._text_index import Float, Int, Scored

#: Hits a ranking is made for, at least (rule 1).
DEPTH = 512
#: Rankings kept per request (rule 3); each holds its matches' scores (16 bytes each).
KEPT = 8

#: A fragment row of `FRAGMENT_COLUMNS`, then its row id.
Row = tuple[Any, ...]


class Ranked:
    """One search's ranking, and the rows and hits read from it so far (rule 2)."""

    def __init__(self, rowids: Int, scores: Float, depth: int) -> None:
        self.rowids, self.scores, self.depth = rowids, scores, depth
        self._rows: dict[int, Row | None] = {}  # None: read, and it does not fit
        self._hits: dict[int, TextHit] = {}
        self._lock = threading.Lock()

    def scored(
        self, rowids: list[int], scores: list[float], read: Callable[[list[int]], list[Row]]
    ) -> Scored:
        """The rows of these fragments that fit, best first, ties by id, each with its
        score; `read` gives the rows (row id last) of those that fit among the ones not
        read before.
        """
        with self._lock:
            missing = [rowid for rowid in rowids if rowid not in self._rows]
        found = {int(row[-1]): row for row in read(missing)} if missing else {}
        with self._lock:
            for rowid in missing:
                self._rows[rowid] = found.get(rowid)
            rows = self._rows
            scored = [
                (score, row)
                for rowid, score in zip(rowids, scores, strict=True)
                if (row := rows[rowid]) is not None
            ]
        scored.sort(key=lambda pair: (-pair[0], pair[1][0]))
        return scored

    def hit(self, score: float, row: Row, make: Callable[[float, Row], TextHit]) -> TextHit:
        """The hit of a scored row (row id last), made once."""
        rowid = int(row[-1])
        with self._lock:
            known = self._hits.get(rowid)
        if known is None:
            known = make(score, row)
            with self._lock:
                self._hits[rowid] = known
        return known


class SearchMemo:
    """The rankings of one request's searches, by view, query and filters (rule 3)."""

    def __init__(self) -> None:
        self._ranked: dict[Hashable, Ranked] = {}
        self._lock = threading.Lock()

    def ranked(self, key: Hashable, limit: int, rank: Callable[[int], Ranked]) -> Ranked:
        """The ranking kept for `key` when it was made for `limit` hits or more, else a
        fresh one from `rank(depth)`, kept.
        """
        with self._lock:
            known = self._ranked.get(key)
        if known is not None and limit <= known.depth:
            return known
        made = rank(max(limit, DEPTH))
        with self._lock:
            self._ranked.pop(key, None)
            while len(self._ranked) >= KEPT:
                del self._ranked[next(iter(self._ranked))]  # the oldest
            self._ranked[key] = made
        return made
