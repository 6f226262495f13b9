"""How much of its ranked hits a strategy should propose: what acceptance reads of a list.

Rules (see `acceptance`, rules 5 and 7):

1. Acceptance reads a strategy's list, best first, until it holds `REACH` times the
   strategy's allocation, and leaves the rest out unchecked: a candidate made beyond that
   is made for nothing.
2. Copies of one text (one content hash) are charged, and packed, once: they hold its
   tokens once.
3. At least `AT_LEAST` hits are proposed whatever they hold: once large texts fall back to
   shorter depths in packing, smaller ones may be needed to fill the budget.

Built-in strategies use these through the package root, as a plugin would.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

from .models import ContextFragment

#: A strategy's list holding this many times its allocation is all acceptance reads.
REACH = 2
#: Hits proposed at least, however much the first ones hold (rule 3).
AT_LEAST = 20


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
