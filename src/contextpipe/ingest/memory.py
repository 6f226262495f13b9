"""Memory items into the store, and conversations read from JSON files.

Rules:

1. A memory item is one node, `uko://memory/<scope>/<owner>/<id>` (`uko://memory/global/
   <id>` for global memory; owner and id percent-quoted, so that any two owners and ids
   give two URIs), of kind `memory`; its parent is itself, so no folder contains it and no
   edge reaches it, and the graph, which every request shares, leaves it out. Its stored
   path is its URI, which no file's path can be (a file's holds no `//`): `index` and
   `forget PATH` leave it alone, and only `forget_memory` removes it.
2. Its one fragment (the full text, depth 9) reads `[YYYY-MM-DD HH:MM] speaker: text` (UTC;
   without a speaker `[time] text`); its time is its `modified_at`, so the timeline and the
   time-aware strategies see it; its title is its speaker (else `memory`); it is searched
   by its speaker and text, and embedded by the normal embedding stage like any full text.
3. An item's id is the caller's, else the first 12 hex digits of the SHA-256 of its scope,
   owner, time and text: remembering the same thing twice keeps it once. An item with the
   id of one already kept in its scope replaces it.
4. A conversation file is a JSON list of turns, each an object with the strings `id`,
   `speaker`, `time` (ISO 8601; without a zone, UTC) and `text`; each turn becomes one item
   that keeps its id. Every mistake is one line naming the file, the turn and the key.
5. Searched, not shown: with `[memory] searched_neighbours = "previous"` an item is also
   searched by the text of the item said just before it in the same conversation (scope
   and owner) among the items remembered together (a conversation import, `remember_all`),
   so that an answer is found by the words of the question it answers; "both" adds the
   item said just after it; "none" searches the item alone. Its fragment, and its
   vector, stay the item's own text; a single `remember` has no neighbours.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import cast
from urllib.parse import quote

from ..config.schema import SearchedNeighbours
from ..contract.records import (
    MEMORY_KIND,
    MEMORY_URI_PREFIX,
    MemoryItem,
    MemoryScope,
    NewFragment,
    NodeRecord,
)
from ..contract.store import Store
from ..core.errors import ContextpipeError
from ..core.models import ContextFragment, SourceRef, content_hash, fragment_id, in_utc_range
from ..text.tokens import Tokenizer


def memory_scope(session: str | None, user: str | None) -> tuple[MemoryScope, str]:
    """The scope and owner of an item remembered for `session` or `user` (neither: global)."""
    if session is not None and user is not None:
        raise ContextpipeError("a memory item belongs to a session or a user, not both")
    if session is not None:
        return MemoryScope.SESSION, _owner(session, "session")
    if user is not None:
        return MemoryScope.USER, _owner(user, "user")
    return MemoryScope.GLOBAL, ""


def _owner(value: str, what: str) -> str:
    if not value.strip():
        raise ContextpipeError(f"the {what} id must not be empty")
    return value


def memory_item(
    text: str,
    scope: MemoryScope,
    owner: str,
    at: datetime,
    item_id: str | None = None,
    speaker: str = "",
) -> MemoryItem:
    """A validated item (rule 3 gives it an id when it has none)."""
    if not text.strip():
        raise ContextpipeError("a memory item needs some text")
    try:
        moment = in_utc_range(at if at.tzinfo is not None else at.replace(tzinfo=UTC))
    except ValueError as exc:
        raise ContextpipeError(f"a memory item's time {exc}") from None
    if item_id is None:
        key = "\x1f".join((scope.value, owner, moment.astimezone(UTC).isoformat(), text))
        item_id = hashlib.sha256(key.encode()).hexdigest()[:12]
    elif not item_id.strip():
        raise ContextpipeError("a memory item's id must not be empty")
    return MemoryItem(item_id, text, moment, scope, owner, speaker)


def node_uri(item: MemoryItem) -> str:
    """The item's node (rule 1)."""
    owner = "" if item.scope is MemoryScope.GLOBAL else f"{quote(item.owner, safe='')}/"
    return f"{MEMORY_URI_PREFIX}{item.scope.value}/{owner}{quote(item.id, safe='')}"


def rendered(item: MemoryItem) -> str:
    """The item's fragment text (rule 2)."""
    stamp = item.at.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "minutes")
    said = f"{item.speaker}: {item.text}" if item.speaker else item.text
    return f"[{stamp}] {said}"


def remember_items(
    store: Store,
    tokenizer: Tokenizer,
    items: Iterable[MemoryItem],
    neighbours: SearchedNeighbours = "none",
) -> int:
    """Write the items in one write session (all or none); returns how many. Each is
    searched with the neighbours `neighbours` names (rule 5).
    """
    items = list(items)
    context = _neighbours_said(items, neighbours)
    count = 0
    with store.writer() as writer:
        for item in items:
            uri, text = node_uri(item), rendered(item)
            lines = text.count("\n") + 1
            source = SourceRef(
                uri=uri,
                path=uri,
                start_line=1,
                end_line=lines,
                kind=MEMORY_KIND,
                modified_at=item.at,
            )
            fragment = ContextFragment(
                id=fragment_id(uri, 9),
                uko_uri=uri,
                detail_depth=9,
                text=text,
                token_count=tokenizer.count(text),
                source=source,
                content_hash=content_hash(text),
                metadata={"tokenizer": tokenizer.name},
            )
            said = f"{item.speaker}: {item.text}" if item.speaker else item.text
            searched = f"{said}\n{context[item]}" if item in context else said
            writer.add_memory(
                item,
                NewFragment(fragment, item.speaker or MEMORY_KIND, "text", searched),
                NodeRecord(uri, MEMORY_KIND, f"memory {item.id}", uri, 1, lines, uri),
            )
            count += 1
    return count


def _neighbours_said(
    items: Sequence[MemoryItem], neighbours: SearchedNeighbours
) -> dict[MemoryItem, str]:
    """What each item is searched with besides itself (rule 5): the text of the item said
    before it and, for "both", of the one said after it, in the same conversation (scope
    and owner) among `items`, in order of time, ties by id.
    """
    if neighbours == "none":
        return {}
    conversations: dict[tuple[MemoryScope, str], list[MemoryItem]] = {}
    for item in items:
        conversations.setdefault((item.scope, item.owner), []).append(item)
    context: dict[MemoryItem, str] = {}
    for turns in conversations.values():
        turns.sort(key=lambda turn: (turn.at, turn.id))
        for place, item in enumerate(turns):
            near = turns[max(0, place - 1) : place]
            if neighbours == "both":
                near += turns[place + 1 : place + 2]
            if near:
                context[item] = "\n".join(turn.text for turn in near)
    return context


def read_conversation(path: Path, scope: MemoryScope, owner: str) -> list[MemoryItem]:
    """The turns of a conversation file as memory items (rule 4)."""
    try:
        parsed: object = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContextpipeError(f"{path}: cannot be read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ContextpipeError(f"{path}: not JSON ({exc})") from None
    if not isinstance(parsed, list):
        raise ContextpipeError(f"{path}: expected a JSON list of turns")
    items: list[MemoryItem] = []
    seen: set[str] = set()
    for number, turn in enumerate(cast(Sequence[object], parsed), start=1):
        where = f"{path}: turn {number}"
        if not isinstance(turn, dict):
            raise ContextpipeError(f"{where}: expected an object with id, speaker, time, text")
        fields = cast(dict[str, object], turn)
        values: dict[str, str] = {}
        for key in ("id", "speaker", "time", "text"):
            value = fields.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ContextpipeError(f'{where}: "{key}" must be a non-empty string')
            values[key] = value
        try:
            at = datetime.fromisoformat(values["time"])
        except ValueError:
            raise ContextpipeError(
                f'{where}: "time" {values["time"]!r} is not an ISO 8601 time'
            ) from None
        if values["id"] in seen:
            raise ContextpipeError(f'{where}: "id" {values["id"]!r} appears twice')
        seen.add(values["id"])
        items.append(memory_item(values["text"], scope, owner, at, values["id"], values["speaker"]))
    return items
