"""Memory scope in the embedded store's searches (rules for `embedded`).

Rules:

1. A memory item of scope `session` is seen only by requests whose filters name its
   session, one of scope `user` only by requests naming its user; files and global memory
   by every request. A strategy cannot ask past that: the store applies it to every search,
   timeline and tier read, whatever filters it is given.
2. What a request may not see is left out before ranking is cut, so it never hides a match
   the request may see: a search without path or kind filters asks the ranking for as many
   more as are hidden and drops those (keeping the unfiltered search's pruning and its
   approximate vector index); with filters, or when more are hidden than asked for, the
   filter's row ids leave them out before ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..models import ContextFragment, RequestFilters
from ..storage import VectorCoverage, VectorHit, VectorIndex
from ._rows import HIDDEN_MEMORY

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]


def hidden(rows: Rows, filters: RequestFilters) -> dict[int, str]:
    """The fragments (row id to stored path) of the memory the request may not see."""
    found = rows(
        f"SELECT rowid, path FROM fragments WHERE path IN ({HIDDEN_MEMORY})",
        (filters.session, filters.user),
    )
    return {int(rowid): str(path) for rowid, path in found}


class ScopedVectors:
    """The store's vector index, never returning memory the request may not see (rule 2)."""

    def __init__(self, inner: VectorIndex, rows: Rows) -> None:
        self._inner = inner
        self._rows = rows

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space."""
        return self._inner.coverage()

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> list[VectorHit]:
        """The most similar full texts the request may see first, ties by id."""
        if filters.paths or filters.kinds:  # the filter's row ids apply the scope
            return list(self._inner.nearest(vector, limit, filters))
        paths = set(hidden(self._rows, filters).values())
        if not paths:
            return list(self._inner.nearest(vector, limit, filters))
        if len(paths) > limit:
            # Ranking past many hidden texts reads them all back: rank only what fits,
            # through a path filter every path fits (its row ids apply the scope).
            everything = filters.model_copy(update={"paths": ("*",)})
            return list(self._inner.nearest(vector, limit, everything))
        hits = self._inner.nearest(vector, limit + len(paths), filters)
        return [hit for hit in hits if hit.fragment.source.path not in paths][:limit]

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `vector` (None: it has no vector)."""
        return self._inner.similarities(vector, fragments)
