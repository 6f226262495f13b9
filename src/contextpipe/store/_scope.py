"""Memory scope in the embedded store's searches (rules for `embedded`).

Rules:

1. A memory item of scope `session` is seen only by requests whose filters name its
   session, one of scope `user` only by requests naming its user; files and global memory
   by every request. A strategy cannot ask past that: the store applies it to every search,
   timeline and tier read, whatever filters it is given.
2. What a request may not see is left out before ranking is cut, so it never hides a match
   the request may see: the keyword ranking skips it (keeping its pruning, and asking for
   no more hits than wanted); a vector search without path or kind filters asks for as
   many more as are hidden and drops those (keeping its approximate index), or, when more
   are hidden than asked for, searches exactly past their row ids; with filters, the
   filter's row ids leave them out. Text rows are read through the filters' SQL, which
   applies the scope again.
3. What is hidden from a session and user is read once per state of the store (its
   generation, which every memory write changes), in one statement with that generation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._memo import BoundedMemo
from ..models import ContextFragment, RequestFilters
from ..storage import VectorCoverage, VectorHit
from ._rows import HIDDEN_MEMORY

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ._vector_matrix import EmbeddedVectors

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]


#: Sessions and users whose hidden memory is kept, per state of the store.
_REMEMBERED = 64


class HiddenMemory:
    """The memory each request may not see (rule 3): a service asks again with every
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


class ScopedVectors:
    """The store's vector index, never returning memory the request may not see (rule 2)."""

    def __init__(self, inner: EmbeddedVectors, hidden: HiddenMemory) -> None:
        self._inner = inner
        self._hidden = hidden

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space."""
        return self._inner.coverage()

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> list[VectorHit]:
        """The most similar full texts the request may see first, ties by id."""
        if filters.paths or filters.kinds:  # the filter's row ids apply the scope
            return list(self._inner.nearest(vector, limit, filters))
        hidden = self._hidden.of(filters)
        if len(hidden) > limit:
            # Ranking past many hidden texts would read them all back.
            return self._inner.nearest(vector, limit, filters, list(hidden))
        paths = set(hidden.values())
        if not paths:
            return list(self._inner.nearest(vector, limit, filters))
        hits = self._inner.nearest(vector, limit + len(paths), filters)
        return [hit for hit in hits if hit.fragment.source.path not in paths][:limit]

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `vector` (None: it has no vector)."""
        return self._inner.similarities(vector, fragments)
