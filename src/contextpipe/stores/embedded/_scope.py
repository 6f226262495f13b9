"""Memory scope in the embedded store's reads (rules for `embedded`).

Rules:

1. A request's reads are bound to its `RequestScope` when it opens them
   (`EmbeddedStore.backends`, `vector_index`): every read narrows the filters it is given
   to that scope first (`RequestScope.narrow`), so a strategy can leave memory out but
   never ask for more. A memory item of scope `session` is then seen only by requests of
   its session, one of scope `user` only by requests of its user; files and global memory
   by every request.
2. Memory a request may not see is in no answer: not among hits, fragments, variants or
   timeline reads, not in a count (how much of the store has vectors included), a token
   count, a score (0) or a similarity (None), so
   that guessing another scope's ids, URIs or texts tells nothing; nor in the statistics
   of a keyword score (how many fragments there are, hold a word, how long they are), so
   that another scope's memory changes no score a request is given. The access log is
   read and written for the scope's own session only.
3. What a request may not see is left out before ranking is cut, so it never hides a match
   the request may see: the keyword ranking skips it (keeping its pruning, and asking for
   no more hits than wanted); a vector search without path or kind filters asks for as
   many more as are hidden and drops those (keeping its approximate index), or, when more
   are hidden than asked for, searches exactly past their row ids; with filters, the
   filter's row ids leave them out. Text rows are read through the filters' SQL, which
   applies the scope again.
4. What is hidden from a session and user is read once per state of the store (its
   generation, which every memory write changes), in one statement with that generation.
5. What came after a request's `as_of` is left out as hidden memory is, by row id, for the
   keyword ranking and vector search (their filters would read every row that fits):
   when each full text was modified is read once per state of the store. The other reads
   apply it in their SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ...contract.records import TextHit, VectorCoverage, VectorHit
from ...core._memo import BoundedMemo
from ...core.models import ContextFragment, RequestFilters, RequestScope
from ._rows import HIDDEN_MEMORY, narrows, utc
from ._search_memo import SearchMemo

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Int = NDArray[np.int64]

    from ._sessions import EmbeddedSessions
    from ._vector_matrix import EmbeddedVectors
    from .backend import EmbeddedStore

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]
T = TypeVar("T")


#: Sessions and users whose hidden memory is kept, per state of the store.
_REMEMBERED = 64


class HiddenMemory:
    """The memory each request may not see (rule 4): a service asks again with every
    request, and reading it costs milliseconds once a store holds many sessions' memory.
    """

    def __init__(self, rows: Rows, epoch: Callable[[], int]) -> None:
        """`epoch` tells when the database file was replaced (its generations restart)."""
        self._rows = rows
        self._epoch = epoch
        self._known = BoundedMemo[tuple[int, int, str | None, str | None], dict[int, str]](
            _REMEMBERED
        )

    def of(self, filters: RequestFilters) -> dict[int, str]:
        """The fragments (row id to stored path) of the memory the request may not see."""
        generation = self._rows("SELECT value FROM meta WHERE key = 'generation'", ())
        key = (self._epoch(), int(generation[0][0]), filters.session, filters.user)
        known = self._known.peek(key)
        if known is not None:
            return known
        found = self._rows(
            "SELECT generation.value, hidden.rowid, hidden.path"
            " FROM (SELECT value FROM meta WHERE key = 'generation') AS generation"
            " LEFT JOIN (SELECT fragments.rowid AS rowid, fragments.path AS path FROM memory"
            f" JOIN fragments ON fragments.path = memory.path WHERE {HIDDEN_MEMORY}) AS hidden",
            (filters.session, filters.user),
        )
        hidden = {int(rowid): str(path) for _, rowid, path in found if rowid is not None}
        self._known.put((key[0], int(found[0][0]), *key[2:]), hidden)
        return hidden


class TextTimes:
    """When each full text was modified, by row id, read once per state of the store (rule
    5). Times are compared as stored, ISO 8601 in UTC, as the SQL compares them.
    """

    def __init__(self, rows: Rows, epoch: Callable[[], int]) -> None:
        """`epoch` tells when the database file was replaced (its generations restart)."""
        self._rows = rows
        self._epoch = epoch
        self._known: tuple[tuple[int, int], Int, NDArray[np.bytes_]] | None = None
        self._lock = threading.Lock()

    def after(self, moment: datetime) -> Int:
        """Row ids of the full texts modified after `moment`, ascending."""
        import numpy as np

        generation = self._rows("SELECT value FROM meta WHERE key = 'generation'", ())
        key = (self._epoch(), int(generation[0][0]))
        with self._lock:
            known = self._known
        if known is None or known[0] != key:
            found = self._rows(
                "SELECT (SELECT value FROM meta WHERE key = 'generation'), rowid, modified_at"
                " FROM fragments WHERE depth = 9 ORDER BY rowid",
                (),
            )
            rowids = np.fromiter((row[1] for row in found), np.int64, len(found))
            times = np.array([str(row[2]).encode() for row in found], np.bytes_)
            read_at = (key[0], int(found[0][0])) if found else key
            known = (read_at, rowids, times)
            with self._lock:
                self._known = known
        return known[1][known[2] > utc(moment).encode()]


def unseen_rowids(hidden: Collection[int], times: TextTimes, filters: RequestFilters) -> Int:
    """Row ids of the full texts a request of `filters` may not see, ascending: memory
    `hidden` from it, and what came after its `as_of` (rules 2 and 5).
    """
    import numpy as np

    memory = np.fromiter(hidden, np.int64, len(hidden))
    if filters.as_of is not None:
        memory = np.concatenate([memory, times.after(filters.as_of)])
    both = np.sort(memory)
    # Each once (numpy's unique hashes: 36 ms for 100k row ids, the sort 1 ms).
    return both[np.concatenate(([True], both[1:] != both[:-1]))] if len(both) else both


class RequestReads:
    """The store's fragment lookup, text search, timeline and session tiers as one
    request's scope allows them (rules 1 and 2), its keyword searches kept for the
    request (`_search_memo`).
    """

    def __init__(self, store: EmbeddedStore, sessions: EmbeddedSessions, scope: RequestScope):
        self._store = store
        self._sessions = sessions
        self._scope = scope
        self._memo = SearchMemo()

    # -- FragmentLookup

    def variants(
        self, uko_uri: str, filters: RequestFilters | None = None
    ) -> list[ContextFragment]:
        """Every stored depth of one node the scope allows, deepest first."""
        return self._store.variants(uko_uri, self._scope.narrow(filters))

    def variants_many(
        self, uko_uris: Collection[str], filters: RequestFilters | None = None
    ) -> Mapping[str, list[ContextFragment]]:
        """`variants` of several nodes in one read, by URI; a node with none is left out."""
        return self._store.variants_many(uko_uris, self._scope.narrow(filters))

    def count(self) -> int:
        """How many fragments (all depths) the store holds that the scope allows."""
        return self._store.count(self._scope.narrow(None))

    def token_counts(
        self,
        fragments: Collection[ContextFragment],
        tokenizer: str,
        filters: RequestFilters | None = None,
    ) -> dict[str, int]:
        """The stored token counts of these fragments' texts the scope allows."""
        return self._store.token_counts(fragments, tokenizer, self._scope.narrow(filters))

    # -- TextSearch

    def search(self, query: str, limit: int, filters: RequestFilters) -> list[TextHit]:
        """BM25-ranked full-text fragments the scope allows, best first."""
        return self._store.search(query, limit, self._scope.narrow(filters), self._memo)

    def scores(self, query: str, fragments: Sequence[ContextFragment]) -> list[float]:
        """Each fragment's score for `query` (0 for memory the scope does not allow)."""
        return self._store.scores(query, fragments, self._scope.narrow(None))

    # -- Timeline

    def recent(
        self,
        limit: int,
        filters: RequestFilters,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        """Full texts the scope allows modified within [since, until), newest first."""
        return self._store.recent(limit, self._scope.narrow(filters), since, until)

    def after(
        self,
        moment: datetime,
        limit: int,
        filters: RequestFilters,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        """Full texts the scope allows modified after `moment` and before `until`, oldest
        first.
        """
        return self._store.after(moment, limit, self._scope.narrow(filters), until)

    # -- SessionTiers

    def pinned(self, limit: int, filters: RequestFilters) -> list[ContextFragment]:
        """Full texts of the pinned items the scope allows."""
        return self._sessions.pinned(limit, self._scope.narrow(filters))

    def named(
        self, targets: Sequence[str], limit: int, filters: RequestFilters
    ) -> list[ContextFragment]:
        """Full texts the scope allows of the nodes and files `targets` name."""
        return self._sessions.named(targets, limit, self._scope.narrow(filters))

    def recently_used(self, limit: int, filters: RequestFilters) -> list[ContextFragment]:
        """Full texts of the nodes the scope's session was given lately (rule 2)."""
        if self._scope.session is None:
            return []
        narrowed = self._scope.narrow(filters)
        return self._sessions.recently_used(self._scope.session, limit, narrowed)

    def recent_memory(
        self, limit: int, filters: RequestFilters, until: datetime | None = None
    ) -> list[ContextFragment]:
        """Memory items the scope allows from before `until`, newest first."""
        return self._sessions.recent_memory(limit, self._scope.narrow(filters), until)

    def record_use(self, uris: Sequence[str]) -> None:
        """Log an assembly of the scope's session (rule 2)."""
        if self._scope.session is not None:
            self._sessions.record_use(self._scope.session, uris)


class ScopedVectors:
    """The store's vector index as one request's scope allows it (rules 1 to 3 and 5)."""

    def __init__(
        self,
        inner: EmbeddedVectors,
        hidden: HiddenMemory,
        times: TextTimes,
        scope: RequestScope,
        seen: Callable[[Collection[str], RequestFilters], set[str]],
    ) -> None:
        """`seen` tells which of some content hashes are full texts the filters allow."""
        self._inner = inner
        self._hidden = hidden
        self._times = times
        self._scope = scope
        self._seen = seen

    def coverage(self) -> VectorCoverage:
        """How much of what the request may see has a vector of this space (rule 2)."""
        filters = self._scope.narrow(None)
        return self._inner.coverage(unseen_rowids(self._hidden.of(filters), self._times, filters))

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> list[VectorHit]:
        """The most similar full texts the request may see first, ties by id."""
        filters = self._scope.narrow(filters)
        if narrows(filters):  # the filter's row ids apply the scope and the time
            return list(self._inner.nearest(vector, limit, filters))
        hidden = self._hidden.of(filters)
        unseen = unseen_rowids(hidden, self._times, filters)
        if len(unseen) > limit:
            # Ranking past many texts left out would read them all back.
            return self._inner.nearest(vector, limit, filters, unseen)
        if not len(unseen):
            return list(self._inner.nearest(vector, limit, filters))
        paths = set(hidden.values())
        latest = None if filters.as_of is None else utc(filters.as_of)
        hits = self._inner.nearest(vector, limit + len(unseen), filters)
        return [
            hit
            for hit in hits
            if hit.fragment.source.path not in paths
            and (latest is None or _when(hit.fragment) <= latest)
        ][:limit]

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `vector`; None when no text the scope allows (its
        memory, and by its time) has its content hash (rules 2 and 5), or it has no vector.
        """
        return self._allowed(fragments, self._inner.similarities(vector, fragments))

    def vectors(self, fragments: Sequence[ContextFragment]) -> Sequence[NDArray[np.float32] | None]:
        """Each fragment's vector; None as for `similarities`."""
        return self._allowed(fragments, self._inner.vectors(fragments))

    def _allowed(
        self, fragments: Sequence[ContextFragment], found: Sequence[T | None]
    ) -> list[T | None]:
        """`found` (one per fragment), None where no text the scope allows has the
        fragment's content hash.
        """
        filters = self._scope.narrow(None)
        if filters.as_of is None and not self._hidden.of(filters):
            return list(found)
        seen = self._seen({fragment.content_hash for fragment in fragments}, filters)
        return [
            value if fragment.content_hash in seen else None
            for fragment, value in zip(fragments, found, strict=True)
        ]


def _when(fragment: ContextFragment) -> str:
    """When a fragment was modified, as the store keeps it."""
    modified = fragment.source.modified_at
    return "" if modified is None else utc(modified)
