"""Fusion: recognise the same content proposed by several strategies and fuse their ranks.

Rules, in order:

1. Identity is the content. Candidates are the same item when their texts are equal
   (equal content hashes, which acceptance has checked against the texts), wherever they
   come from; the item stands for its copies (`FusedItem.copies`). Nothing else merges
   them: another text for the same node, or other lines overlapping the same lines of a
   source, is another item, credited only to the strategies that proposed that text.
   (The packer keeps two items of one node, or two overlapping spans at one depth, from
   both entering the context.)
2. Each strategy counts once per item, at its best rank.
3. An echo (`Candidate.echo`: a place that only repeats a text or vector search other
   strategies run too) counts only for an item that nothing but echoes voted for: the
   search it repeats is already counted once by the strategy that ran it, and must not
   be twice. An echo that does not count stays in the provenance, last, and adds nothing
   to rules 4 and 5.
4. The fused score is weighted reciprocal-rank fusion: the sum over the item's counted
   votes of `weight / (k + rank)`.
5. An item lies beyond the allocations when every counted vote for it came from beyond
   its strategy's allocation (see `acceptance`); the packer takes such items last.
6. Items come best fused score first, ties by fragment id, then content hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..core.models import Candidate, ContextFragment


@dataclass(frozen=True)
class RankedList:
    """One strategy's accepted candidates, best first. `ranks` are their ranks in the
    strategy's own list (default 1, 2, ...); `beyond` the positions of those beyond its
    allocation.
    """

    strategy: str
    plugin: str
    weight: float
    candidates: Sequence[Candidate]
    ranks: Sequence[int] = ()
    beyond: frozenset[int] = field(default_factory=frozenset[int])


class Vote(NamedTuple):
    """One strategy's proposal of an item: the fields of its `Provenance` entry."""

    strategy: str
    plugin: str
    rank: int
    score: float
    reason: str


class FusedItem(NamedTuple):
    """Content proposed by one or more strategies, with the fused score and every vote.
    `copies` are the (id, URI) of the other fragments with this text (the same file
    vendored twice, say), which this item stands for.
    """

    fragment: ContextFragment
    score: float
    provenance: tuple[Vote, ...]
    beyond: bool = False
    copies: tuple[tuple[str, str], ...] = ()


class _Group(NamedTuple):
    fragment: ContextFragment
    contribution: float
    vote: Vote
    within: bool
    echo: bool


def fuse(lists: Sequence[RankedList], rrf_k: int) -> list[FusedItem]:
    """Merge equal content across lists; best fused score first (see the module rules)."""
    groups: dict[str, dict[str, _Group]] = {}  # content hash -> strategy -> its best vote
    places: dict[str, dict[tuple[str, str], None]] = {}  # content hash -> (id, URI), in order
    for ranked in lists:
        ranks = ranked.ranks or range(1, len(ranked.candidates) + 1)
        for position, (candidate, rank) in enumerate(zip(ranked.candidates, ranks, strict=True)):
            fragment = candidate.fragment
            places.setdefault(fragment.content_hash, {})[(fragment.id, fragment.uko_uri)] = None
            votes = groups.setdefault(fragment.content_hash, {})
            best = votes.get(ranked.strategy)
            if best is not None and best.vote.rank <= rank:
                continue
            votes[ranked.strategy] = _Group(
                fragment,
                ranked.weight / (rrf_k + rank),
                Vote(ranked.strategy, ranked.plugin, rank, candidate.score, candidate.reason),
                position not in ranked.beyond,
                candidate.echo,
            )
    items: list[FusedItem] = []
    for digest, votes in groups.items():
        # Rule 3: echoes count only where nothing but echoes voted.
        own = [g for g in votes.values() if not g.echo]
        counted = own or list(votes.values())
        chosen = sorted(counted, key=lambda g: (-g.contribution, g.vote.strategy, g.fragment.id))
        echoes = sorted((g for g in votes.values() if g.echo), key=lambda g: g.vote.strategy)
        echoes = echoes if own else []
        fragment = chosen[0].fragment
        copies = places[digest]
        items.append(
            FusedItem(
                fragment=fragment,
                score=sum(g.contribution for g in chosen),
                provenance=tuple(g.vote for g in (*chosen, *echoes)),
                beyond=not any(g.within for g in chosen),
                copies=tuple(p for p in copies if p != (fragment.id, fragment.uko_uri))
                if len(copies) > 1
                else (),
            )
        )
    items.sort(key=lambda item: (-item.score, item.fragment.id, item.fragment.content_hash))
    return items
