"""What was said right after a memory item: the turns of the same conversation that follow
it, for strategies that bring a hit's reply and its speaker's next turn along with it.

An answer is often the turn after the one that matches a question ("Any book
recommendations?" - "You'd love this fantasy novel..."), and a speaker often goes on in
their next turn. The turns that follow an item are the memory items of the same scope and
owner (the same conversation: the node URI up to its last `/`, where owner and id are
percent-quoted) said after it and within `window` of it, earliest first, ties by id.

They are read from the timeline oldest first from the item's time on, within the stored
paths of its conversation (a memory item's stored path is its node URI: the conversation's
start with `uko://memory/<scope>/<owner>/`), unless the request filters paths itself, so a
read holds the next turns and little else; a read that held too few of the conversation's
own is made again, larger.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from contextpipe import ContextFragment, RequestFilters, Timeline

#: The kind of a memory item's fragment.
MEMORY = "memory"
#: The first read holds this many times the turns wanted (at least `_AT_LEAST`); each
#: further read holds `_GROWTH` times more.
_AT_LEAST = 8
_GROWTH = 4


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
    # The request's own path globs stay (the turns must fit them too); without any, the
    # read keeps to the conversation's paths.
    paths = filters.paths or (glob_literal(f"{conversation}/") + "*",)
    scoped = filters.model_copy(update={"kinds": (MEMORY,), "paths": paths})
    limit = max(_AT_LEAST, 2 * count)
    try:
        until = said + window
    except OverflowError:  # said in the last moments of year 9999
        until = datetime.max.replace(tzinfo=UTC)
    while True:
        found = timeline.after(said, limit, scoped, until=until)
        same = [f for f in found if conversation_of(f) == conversation and f.id != item.id]
        if len(same) >= count or len(found) < limit:
            return same[:count]
        limit *= _GROWTH


def glob_literal(text: str) -> str:
    """`text` as a glob pattern that matches only itself."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in text)
