"""What a code question (`ContextRequest.prefer_source`) changes in an assembly: after
fusion, every item from a source file ranks before every item from tests, docs,
changelogs, CI, build configuration or examples (`text.source_role`), each group in its
fused order. Those files match the words of an issue report well, and several strategies
often agree on them, but they are rarely the code to read or change.

The items outside the source keep their order and their fused scores times one factor:
the largest that puts the best of them below the last source item, so that the packer,
which weighs items by fused score, sees the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..text.words import source_role
from .fusion import FusedItem

#: How far below the last source item the best other item lands.
_BELOW = 0.99


def source_first(items: Sequence[FusedItem]) -> list[FusedItem]:
    """Fused items, source first (see the module docstring)."""
    source = [item for item in items if source_role(item.fragment.source.path) == "source"]
    others = [item for item in items if source_role(item.fragment.source.path) != "source"]
    if not source or not others:
        return list(items)
    lowest, highest = source[-1].score, others[0].score
    factor = min(1.0, _BELOW * lowest / highest) if highest > 0 else 1.0
    return source + [item._replace(score=item.score * factor) for item in others]
