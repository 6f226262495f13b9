"""Fusion: recognise the same content proposed by several strategies and fuse their ranks.

Two candidates denote the same content when they have the same URI and depth, overlapping
line spans of one source at the same depth, or equal content hashes. The fused score is
weighted reciprocal-rank fusion: the sum over contributing strategies of
`weight / (k + rank)`, each strategy counted once (its best rank) per item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from pydantic import TypeAdapter

from .models import Candidate, ContextFragment, Provenance

_PROVENANCE = TypeAdapter(list[Provenance])


@dataclass(frozen=True)
class RankedList:
    """One strategy's accepted candidates, best first."""

    strategy: str
    plugin: str
    weight: float
    candidates: Sequence[Candidate]


class FusedItem(NamedTuple):
    """Content proposed by one or more strategies, with the fused score."""

    fragment: ContextFragment
    score: float
    provenance: tuple[Provenance, ...]


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, first: int, second: int) -> None:
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


class _Vote(NamedTuple):
    fragment: ContextFragment
    strategy: str
    plugin: str
    rank: int
    score: float
    reason: str
    contribution: float


def fuse(lists: Sequence[RankedList], rrf_k: int) -> list[FusedItem]:
    """Merge same-content candidates across lists; best fused score first (ties by id)."""
    votes = [
        _Vote(
            candidate.fragment,
            ranked.strategy,
            ranked.plugin,
            rank,
            candidate.score,
            candidate.reason,
            ranked.weight / (rrf_k + rank),
        )
        for ranked in lists
        for rank, candidate in enumerate(ranked.candidates, start=1)
    ]
    merged: list[list[_Vote]] = []
    for members in _same_content_groups([vote.fragment for vote in votes]):
        if len(members) == 1:  # the common case: content only one strategy proposed
            merged.append([votes[members[0]]])
            continue
        best_per_strategy: dict[str, _Vote] = {}
        for vote in (votes[i] for i in members):
            current = best_per_strategy.get(vote.strategy)
            if current is None or vote.rank < current.rank:
                best_per_strategy[vote.strategy] = vote
        merged.append(
            sorted(
                best_per_strategy.values(),
                key=lambda v: (-v.contribution, v.strategy, v.fragment.id),
            )
        )
    # One validation call for every provenance entry: far cheaper than one model each.
    provenance = iter(
        _PROVENANCE.validate_python(
            [
                {
                    "strategy": v.strategy,
                    "plugin": v.plugin,
                    "rank": v.rank,
                    "score": v.score,
                    "reason": v.reason,
                }
                for chosen in merged
                for v in chosen
            ]
        )
    )
    items = [
        FusedItem(
            fragment=chosen[0].fragment,
            score=sum(v.contribution for v in chosen),
            provenance=tuple(next(provenance) for _ in chosen),
        )
        for chosen in merged
    ]
    items.sort(key=lambda item: (-item.score, item.fragment.id))
    return items


def _same_content_groups(fragments: Sequence[ContextFragment]) -> list[list[int]]:
    """Indices of fragments grouped by the same-content rules, in first-seen order."""
    union = _UnionFind(len(fragments))
    first_by_node: dict[tuple[str, int], int] = {}
    first_by_hash: dict[str, int] = {}
    spans: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
    for index, fragment in enumerate(fragments):
        node = (fragment.uko_uri, fragment.detail_depth)
        first = first_by_node.setdefault(node, index)
        if first != index:
            union.union(first, index)
        first = first_by_hash.setdefault(fragment.content_hash, index)
        if first != index:
            union.union(first, index)
        spans[(fragment.source.path, fragment.detail_depth)].append(index)
    for members in spans.values():
        members.sort(key=lambda i: (fragments[i].source.start_line, fragments[i].source.end_line))
        reach_index = members[0]
        reach_end = fragments[reach_index].source.end_line
        for index in members[1:]:
            source = fragments[index].source
            if source.start_line <= reach_end:
                union.union(reach_index, index)
            if source.end_line > reach_end:
                reach_index, reach_end = index, source.end_line
    grouped: dict[int, list[int]] = {}
    for index in range(len(fragments)):
        grouped.setdefault(union.find(index), []).append(index)
    return list(grouped.values())
