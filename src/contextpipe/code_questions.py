"""What a code question (`ContextRequest.prefer_source`) changes in an assembly: in every
strategy's accepted list, candidates from source files come first and those from tests,
docs, changelogs and CI files (`text.source_role`) after them, each group in the
strategy's own order, before fusion ranks them. Tests and docs match the words of an issue
report well, but are rarely the code to read or change; a strategy that does not know
about code questions is held to the request all the same.

Each moved candidate keeps the ranks its list had, handed out again in the new order (so
the list's fusion weight is unchanged), and its reason says why it moved.
"""

from __future__ import annotations

from collections.abc import Sequence

from .fusion import RankedList
from .text import source_role


def source_first(ranked: RankedList) -> RankedList:
    """`ranked` with its source candidates first (see the module docstring)."""
    candidates = ranked.candidates
    roles = [source_role(candidate.fragment.source.path) for candidate in candidates]
    order = sorted(range(len(candidates)), key=lambda i: roles[i] != "source")
    if order == sorted(order):
        return ranked
    ranks: Sequence[int] = ranked.ranks or range(1, len(candidates) + 1)
    moved = [
        candidates[i]
        if roles[i] == "source"
        else candidates[i].model_copy(
            update={
                "reason": f"{candidates[i].reason} (in {roles[i]} files: after source files,"
                " as the request prefers source)"
            }
        )
        for i in order
    ]
    return RankedList(
        ranked.strategy,
        ranked.plugin,
        ranked.weight,
        moved,
        sorted(ranks),
        frozenset(place for place, i in enumerate(order) if i in ranked.beyond),
    )
