"""Searches shared by the strategies of one request: the default mix asks the text index
the same question twice (`simple-keyword` and `relevance` both want the query's best 50
hits) and the vectors a question whose answer is the start of another's (32 and 50
nearest). Each is answered once per request.

Rules: results are shared only within one request (one `Shared` per request); a search
for at most as many hits as one already made or under way for the same query and filters
waits for that one and takes its first hits, which the store contract makes the answer
(a smaller limit returns the first hits of a larger one, ties included); an error is
raised to every caller that waited for it. Nothing else is remembered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import Generic, TypeVar

from ..contract.capabilities import Backends, TextSearch
from ..contract.records import TextHit
from ..core.models import ContextFragment, RequestFilters

H = TypeVar("H")


class Shared(Generic[H]):
    """One request's searches of one kind, by query and filters (see the module rules)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[str, RequestFilters], list[tuple[int, Future[Sequence[H]]]]] = {}

    def search(
        self,
        query: str,
        limit: int,
        filters: RequestFilters,
        run: Callable[[], Sequence[H]],
    ) -> Sequence[H]:
        """The best `limit` hits: from a search for as many or more, else from `run`."""
        key = (query, filters)
        with self._lock:
            made = self._made.setdefault(key, [])
            found = next((future for size, future in made if size >= limit), None)
            if found is None:
                found = Future[Sequence[H]]()
                made.append((limit, found))
                mine = True
            else:
                mine = False
        if mine:
            try:
                found.set_result(run())
            except BaseException as exc:
                found.set_exception(exc)
                raise
        return found.result()[:limit]


class SharedTextSearch:
    """A `TextSearch` whose searches are shared within one request."""

    def __init__(self, text: TextSearch) -> None:
        self._text = text
        self._shared = Shared[TextHit]()

    def search(self, query: str, limit: int, filters: RequestFilters) -> Sequence[TextHit]:
        """Best matches first, as the store's text search gives them."""
        return self._shared.search(
            query, limit, filters, lambda: self._text.search(query, limit, filters)
        )

    def scores(self, query: str, fragments: Sequence[ContextFragment]) -> Sequence[float]:
        """Each fragment's score for `query`, as the store gives it."""
        return self._text.scores(query, fragments)


def with_shared_text(backends: Backends) -> Backends:
    """`backends` for one request, its text searches shared by the request's strategies."""
    if backends.text is None:
        return backends
    return replace(backends, text=SharedTextSearch(backends.text))
