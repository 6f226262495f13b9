"""Steps for fusion's echo rule (rule 3), held by a property test over `fuse` itself."""

from __future__ import annotations

from collections import Counter
from typing import Literal, cast

from behave import then, when
from behave.runner import Context
from hypothesis import HealthCheck, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from testkit import make_fragment

from contextpipe import Candidate
from contextpipe.assembly.fusion import FusedItem, RankedList, fuse

_POOL = [
    make_fragment(f"uko://doc/p{n}.md#p{n}", f"Paragraph {n} about budgets.", f"p{n}.md", 1, 1)
    for n in range(6)
]

#: A strategy's weight and its list: which pool fragments, best first, each an echo or not
#: and beyond the strategy's allocation or not.
Lists = list[tuple[float, list[tuple[int, bool, bool]]]]
_LISTS = st.lists(
    st.tuples(
        st.floats(0.1, 8.0),
        st.lists(
            st.tuples(st.integers(0, len(_POOL) - 1), st.booleans(), st.booleans()),
            max_size=len(_POOL),
            unique_by=lambda entry: entry[0],
        ),
    ),
    min_size=1,
    max_size=4,
)


def _ranked(lists: Lists, echoes: Literal["marked", "ordinary", "left out"]) -> list[RankedList]:
    """The lists as fusion gets them: echoes marked, taken as ordinary votes, or left out
    (every other candidate keeping its rank).
    """
    ranked: list[RankedList] = []
    for number, (weight, entries) in enumerate(lists):
        kept = [
            (rank, n, echo, beyond)
            for rank, (n, echo, beyond) in enumerate(entries, start=1)
            if echoes != "left out" or not echo
        ]
        candidates = [
            Candidate(
                fragment=_POOL[n], score=1 / rank, reason="r", echo=echo and echoes == "marked"
            )
            for rank, n, echo, _ in kept
        ]
        ranks = tuple(rank for rank, *_ in kept)
        beyond = frozenset(place for place, (*_, out) in enumerate(kept) if out)
        ranked.append(RankedList(f"s{number}", "test", weight, candidates, ranks, beyond))
    return ranked


def _fused(lists: Lists, echoes: Literal["marked", "ordinary", "left out"]) -> dict[str, FusedItem]:
    return {item.fragment.id: item for item in fuse(_ranked(lists, echoes), 5)}


@when("the fusion property test fuses {examples:d} random sets of lists with echoes")
def fuse_property(context: Context, examples: int) -> None:
    seen: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @for_all(lists=_LISTS)
    def echoes_count_once(lists: Lists) -> None:
        marked, ordinary = _fused(lists, "marked"), _fused(lists, "ordinary")
        without = _fused(lists, "left out")
        assert marked.keys() == ordinary.keys(), "an item was lost"
        for fid, item in marked.items():
            voters = sorted(vote.strategy for vote in item.provenance)
            assert voters == sorted(v.strategy for v in ordinary[fid].provenance), item
            # Rule 3: an item some strategy proposed in its own right scores, and lies
            # within or beyond, as without the echoes; one only echoes proposed, as their
            # votes say.
            reference = without.get(fid, ordinary[fid])
            assert abs(item.score - reference.score) < 1e-12, (item, reference)
            assert item.beyond == reference.beyond, (item, reference)
            if fid not in without:
                seen["proposed by echoes alone"] += 1
            elif len(voters) > len(without[fid].provenance):
                seen["with an echo that did not count"] += 1
            else:
                seen["without echoes"] += 1

    echoes_count_once()
    context.fusion_seen = seen


@then('the property test saw items "{cases}"')
def fusion_cases_seen(context: Context, cases: str) -> None:
    seen = cast(Counter[str], context.fusion_seen)
    for case in (c.strip() for c in cases.split(",")):
        assert seen[case] > 0, f"the property test saw no item {case}: {dict(seen)}"
