"""What was said right after a memory item: the turns of the same conversation that follow
it, for strategies that bring a hit's reply and its speaker's next turn along with it.

An answer is often the turn after the one that matches a question ("Any book
recommendations?" - "You'd love this fantasy novel..."), and a speaker often goes on in
their next turn. The turns that follow an item are the memory items of the same scope and
owner (the same conversation: the node URI up to its last `/`, where owner and id are
percent-quoted) said after it and within `window` of it, earliest first, ties by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from contextpipe import ContextFragment, RequestFilters, Timeline

#: The kind of a memory item's fragment.
MEMORY = "memory"
#: Items read from the timeline at once; a fuller answer narrows the window (the timeline
#: gives the newest first, and the nearest are wanted).
_PAGE = 64
_NARROWINGS = 12


def conversation_of(fragment: ContextFragment) -> str | None:
    """The conversation (scope and owner) of a memory item, None for anything else."""
    if fragment.source.kind != MEMORY:
        return None
    return fragment.uko_uri.rpartition("/")[0]


def following(
    timeline: Timeline,
    item: ContextFragment,
    count: int,
    window: timedelta,
    filters: RequestFilters,
) -> Sequence[ContextFragment]:
    """Up to `count` items of `item`'s conversation said after it within `window` (see the
    module docstring); none for an item that is not memory.
    """
    conversation = conversation_of(item)
    said = item.source.modified_at
    if conversation is None or said is None or count <= 0:
        return ()
    scoped = filters.model_copy(update={"kinds": (MEMORY,)})
    since = said + timedelta(microseconds=1)
    until = said + window
    found: Sequence[ContextFragment] = ()
    for _ in range(_NARROWINGS):
        found = timeline.recent(_PAGE, scoped, since=since, until=until)
        if len(found) < _PAGE:
            break
        # Full: the nearest may lie beyond the page. Halve the window and look again.
        until = since + (until - since) / 2
    same = [f for f in found if conversation_of(f) == conversation and f.id != item.id]
    same.sort(key=lambda f: (f.source.modified_at or said, f.id))
    return same[:count]
