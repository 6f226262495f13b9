"""The MCP face (the official `mcp` SDK): context for an agent as a tool, over one warm
pipeline, on stdio (`contextpipe mcp`) and as stateless streamable HTTP at `/mcp` of
`contextpipe serve`.

Rules:

1. Three tools: `get_context` (read-only and idempotent), `remember` (idempotent: the same
   id again replaces the item) and `forget` (destructive, idempotent). Their definitions
   are short: every agent turn carries them.
2. A `get_context` result never exceeds its budget (the call's, else `[mcp]
   default_budget`, never above `[mcp] max_budget`), counted with the configured
   tokenizer: the packed text once, as the content, and a small manifest as structured
   content (the ids, tokens, how many were left out for room, as copies or duplicates,
   and as rejected, and a cursor when there is more): its size does not grow with the
   wording of the reasons.
   Agent hosts cap tool results; the result must fit, not be cut by the host.
3. A cursor names the fragments already given; the next page leaves them out.
4. A call the pipeline refuses is a tool error of one line, never a protocol error.
5. Each pipeline call runs through the runner the face is given: on a thread of its own
   (stdio), or admitted like any HTTP request (the service).
6. A call runs in its caller's scope (`..tokens.Guard`): in the service, the scope of its
   API token, which a call may narrow and never widen.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .. import AssembledContext, ContextpipeError, Pipeline, __version__, get_tokenizer
from .tokens import Guard

T = TypeVar("T")
Runner = Callable[[Callable[[], Any]], Awaitable[Any]]

#: Tokens first kept for the manifest out of a result's budget; a manifest larger than that
#: shrinks the text to what it leaves and the context is packed again (at most
#: `_ATTEMPTS` times).
_MANIFEST_TOKENS = 200
_ATTEMPTS = 3

_INSTRUCTIONS = (
    "contextpipe assembles the most relevant passages of this project's indexed code, docs"
    " and memory within a token budget. Call get_context with the question; pass the cursor"
    " back for more."
)


def mcp_server(pipeline: Pipeline, run: Runner | None = None) -> MCPServer:
    """The MCP server over `pipeline` (rule 5: `run`, default a thread per call)."""
    limits = pipeline.settings.mcp
    runner: Runner = run or _on_thread
    server = MCPServer(
        name="contextpipe", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
    )

    async def get_context(
        query: Annotated[str, Field(min_length=1, description="The question or task.")],
        budget: Annotated[int | None, Field(gt=0, description="Most tokens.")] = None,
        cursor: Annotated[str | None, Field(description="From the last result: more.")] = None,
        session: str | None = None,
        user: str | None = None,
    ) -> CallToolResult:
        most = min(budget or limits.default_budget, limits.max_budget)
        try:
            given = _given(cursor)
            scope = Guard.current().reading(session, user)
            return await runner(lambda: _page(pipeline, query, most, given, *scope))
        except ContextpipeError as exc:
            return _error(str(exc))

    async def remember(
        text: Annotated[str, Field(min_length=1, description="What to keep.")],
        id: Annotated[str | None, Field(description="The same id replaces.")] = None,
        session: Annotated[str | None, Field(description="Only this session's.")] = None,
        user: Annotated[str | None, Field(description="Only this user's.")] = None,
    ) -> CallToolResult:
        guard = Guard.current()  # read here: the call runs on another thread

        def keep() -> str:
            kept_in = guard.keeping(session, user)
            item = pipeline.remember(text, session=kept_in[0], user=kept_in[1], item_id=id)
            return f"kept {item.id} ({item.scope.value} memory)"

        return await _answer(runner, keep)

    async def forget(
        id: Annotated[str | None, Field(description="One item; none: all of the scope.")] = None,
        session: str | None = None,
        user: str | None = None,
        everything_global: Annotated[bool, Field(description="All global memory.")] = False,
    ) -> CallToolResult:
        guard = Guard.current()  # read here: the call runs on another thread

        def drop() -> str:
            ids = [id] if id else []
            kept_in = guard.forgetting(session, user, everything_global)
            every = everything_global or (bool(ids) and kept_in == (None, None))
            gone = pipeline.forget_memory(
                session=kept_in[0], user=kept_in[1], everything_global=every, ids=ids
            )
            return f"forgot {gone} memory items"

        return await _answer(runner, drop)

    # Rule 1: every tool is idempotent and touches only this project (no open world).
    tools = (
        (
            get_context,
            "The most relevant passages of the project for a question, within budget.",
            True,
            False,
        ),
        (
            remember,
            "Keep a note as memory (for a session, a user, or every request).",
            False,
            False,
        ),
        (
            forget,
            "Forget one memory item, or all of a session, user or global memory.",
            False,
            True,
        ),
    )
    for tool, description, read_only, destructive in tools:
        hints = ToolAnnotations(
            read_only_hint=read_only,
            idempotent_hint=True,
            destructive_hint=destructive,
            open_world_hint=False,
        )
        server.add_tool(tool, description=description, annotations=hints, structured_output=False)
    return server


def _page(
    pipeline: Pipeline,
    query: str,
    budget: int,
    given: tuple[str, ...],
    session: str | None,
    user: str | None,
) -> CallToolResult:
    """Rules 2-3: the text and manifest of one page, together within `budget`."""
    room = budget - min(_MANIFEST_TOKENS, budget // 4)
    for _ in range(_ATTEMPTS):
        context = pipeline.assemble(
            query, budget=max(room, 1), session=session, user=user, exclude=given
        )
        manifest = _manifest(context, budget, given)
        tokenizer = get_tokenizer(context.tokenizer)
        listed = tokenizer.count(json.dumps(manifest))
        total = tokenizer.count(context.text) + listed
        if total <= budget:
            return CallToolResult(
                content=[TextContent(type="text", text=context.text)],
                structured_content=manifest,
            )
        # The packer keeps the text within its room: at most what this manifest leaves.
        room = min(room - (total - budget), budget - listed)
    raise ContextpipeError(f"budget {budget} leaves no room for the result and its manifest")


def _manifest(context: AssembledContext, budget: int, given: tuple[str, ...]) -> dict[str, Any]:
    ids = [fragment.id for fragment in context.fragments]
    left_out = Counter(_left_out_as(dropped.reason) for dropped in context.dropped)
    more = left_out.get("budget", 0) > 0 and bool(ids)
    return {
        "ids": ids,
        "tokens": context.tokens_used,
        "budget": budget,
        "left_out": dict(sorted(left_out.items())),
        "cursor": _cursor((*given, *ids)) if more else None,
    }


def _left_out_as(reason: str) -> str:
    """Rule 2: the kind of a dropped fragment's reason."""
    if reason.startswith("budget:"):
        return "budget"
    if reason.endswith("already in the context") or reason.startswith("same text as"):
        return "duplicate"
    return "rejected"


def _cursor(ids: tuple[str, ...]) -> str:
    return base64.urlsafe_b64encode(zlib.compress(",".join(ids).encode(), 9)).decode()


def _given(cursor: str | None) -> tuple[str, ...]:
    """The fragment ids a cursor names (rule 3)."""
    if not cursor:
        return ()
    try:
        return tuple(zlib.decompress(base64.urlsafe_b64decode(cursor)).decode().split(","))
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        raise ContextpipeError("cursor: not one a get_context result gave") from None


async def _answer(runner: Runner, call: Callable[[], str]) -> CallToolResult:
    try:
        said: str = await runner(call)
    except ContextpipeError as exc:
        return _error(str(exc))
    return CallToolResult(content=[TextContent(type="text", text=said)])


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def _on_thread(call: Callable[[], T]) -> T:
    return await asyncio.to_thread(call)


def serve_stdio(pipeline: Pipeline) -> None:
    """`contextpipe mcp`: the tools on stdin and stdout until the client closes them."""
    asyncio.run(mcp_server(pipeline).run_stdio_async())
