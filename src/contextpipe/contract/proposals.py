"""How much of its ranked hits a strategy should propose: what acceptance reads of a list.

Rules (see `acceptance`, rules 5 and 7):

1. Acceptance reads a strategy's list, best first, until it holds `REACH` times the
   strategy's allocation, and leaves the rest out unchecked: a candidate made beyond that
   is made for nothing.
2. Copies of one text (one content hash) are charged, and packed, once: they hold its
   tokens once.
3. At least `AT_LEAST` hits are proposed whatever they hold: once large texts fall back to
   shorter depths in packing, smaller ones may be needed to fill the budget.
4. A search asks first for a page of hits, `FIRST_PAGE` unless it has a reason of its own
   (the searches of one request are shared: strategies asking the same page search once),
   and once more only when that page came back full and holds less than is wanted: for as
   many hits as the page suggests are needed, a quarter more, at least twice as many
   (`next_page`).

Built-in strategies use these through the package root, as a plugin would.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, TypeVar

from ..core.models import ContextFragment

#: A strategy's list holding this many times its allocation is all acceptance reads.
REACH = 2
#: Hits proposed at least, however much the first ones hold (rule 3).
AT_LEAST = 20
#: Hits a search asks for first (rule 4); most requests need no more.
FIRST_PAGE = 50


class _Hit(Protocol):
    @property
    def fragment(self) -> ContextFragment: ...


H = TypeVar("H", bound=_Hit)


def distinct_tokens(hits: Iterable[_Hit]) -> int:
    """Tokens the hits' distinct texts hold (rule 2)."""
    sizes = {hit.fragment.content_hash: hit.fragment.token_count for hit in hits}
    return sum(sizes.values())


def within_reach(hits: Iterable[H], budget: int) -> Iterator[H]:
    """The hits, best first, that a list for an allocation of `budget` tokens needs: until
    their distinct texts hold `REACH` times `budget`, and at least `AT_LEAST` of them.
    """
    wanted, held = REACH * budget, 0
    seen: set[str] = set()
    for given, hit in enumerate(hits):
        if held >= wanted and given >= AT_LEAST:
            return
        fragment = hit.fragment
        if fragment.content_hash not in seen:
            seen.add(fragment.content_hash)
            held += fragment.token_count
        yield hit


def next_page(hits: Sequence[_Hit], limit: int, most: int, wanted: int) -> int | None:
    """How many hits to ask for once more after a first page of `limit` (rule 4), at most
    `most`; None when the page was not full, when it asked for `most` already, or when its
    distinct texts hold `wanted` tokens.
    """
    held = distinct_tokens(hits)
    if len(hits) < limit or limit >= most or held >= wanted:
        return None
    per_hit = max(1.0, held / len(hits))
    return min(most, max(2 * limit, math.ceil(1.25 * wanted / per_hit)))
