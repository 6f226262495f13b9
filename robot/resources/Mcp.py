"""Robot keywords that talk MCP to contextpipe with the official SDK's own client: over
stdio (`contextpipe mcp`, started by the client as an agent host starts it) and over
streamable HTTP (`/mcp` of a running `contextpipe serve`).

Each keyword opens a session, makes its calls and closes it; the results are plain data for
the suite to check.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from contextpipe import get_tokenizer

#: A session's calls end long before this (ten times what a busy machine needs).
PATIENCE_S = 120.0

Calls = Callable[[ClientSession], Awaitable[Any]]


class Mcp:
    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._where: tuple[str, str] = ("stdio", "")
        self._token = ""

    def talk_mcp_over_stdio_in(self, project: str) -> None:
        """Later keywords start `contextpipe mcp` in `project` for each session."""
        self._where = ("stdio", project)

    def talk_mcp_over_http_at(self, url: str, token: str = "") -> None:
        """Later keywords talk to `url`/mcp (with `token` as the bearer token, if given)."""
        self._where = ("http", url.rstrip("/") + "/mcp")
        self._token = token

    def the_tools(self) -> list[dict[str, Any]]:
        """Every tool definition, as the server lists it (JSON, as a host sends it on)."""

        async def listed(session: ClientSession) -> list[dict[str, Any]]:
            tools = await session.list_tools()
            return [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools
            ]

        return self._run(listed)

    def tokens_of(self, value: Any) -> int:
        """`value` as JSON, counted with o200k_base (what the definitions cost a model)."""
        return get_tokenizer("o200k_base").count(json.dumps(value))

    def call_the_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        """One call: its text, its structured content, whether it is an error, and the
        tokens of the text and of the structured content.
        """

        async def called(session: ClientSession) -> dict[str, Any]:
            await session.list_tools()
            return _result(await session.call_tool(name, arguments))

        return self._run(called)

    def pages_of_context(self, query: str, budget: int, pages: int) -> list[dict[str, Any]]:
        """`get_context` for `query`, then again with each result's cursor, in one session."""

        async def paged(session: ClientSession) -> list[dict[str, Any]]:
            await session.list_tools()
            found: list[dict[str, Any]] = []
            cursor = None
            for _ in range(pages):
                arguments: dict[str, Any] = {"query": query, "budget": budget}
                if cursor:
                    arguments["cursor"] = cursor
                found.append(_result(await session.call_tool("get_context", arguments)))
                cursor = (found[-1]["structured"] or {}).get("cursor")
                if not cursor:
                    break
            return found

        return self._run(paged)

    def post_to_mcp_with_host(self, host: str) -> int:
        """The status of an MCP request whose Host header names `host` (DNS rebinding)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"host": host, "accept": "application/json, text/event-stream"}
        return httpx.post(
            self._where[1], json=body, headers=headers, timeout=PATIENCE_S
        ).status_code

    def _run(self, calls: Calls) -> Any:
        async def run() -> Any:
            async with self._session() as session:
                return await calls(session)

        return asyncio.run(asyncio.wait_for(run(), PATIENCE_S))

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[ClientSession]:
        kind, where = self._where
        if kind == "stdio":
            params = StdioServerParameters(
                command="contextpipe", args=["mcp"], cwd=where, env=dict(os.environ)
            )
            # The server's stderr goes to a real file: Robot's sys.stderr has no descriptor.
            with tempfile.TemporaryFile("w+") as said:
                async with (
                    stdio_client(params, errlog=said) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    yield session
        else:
            headers = {"authorization": f"Bearer {self._token}"} if self._token else None
            async with (
                create_mcp_http_client(headers=headers) as http,
                streamable_http_client(where, http_client=http) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session


def _result(result: Any) -> dict[str, Any]:
    text = "".join(part.text for part in result.content if part.type == "text")
    structured = result.structured_content
    counted = get_tokenizer("o200k_base")
    return {
        "text": text,
        "structured": structured,
        "error": bool(result.is_error),
        "text_tokens": counted.count(text),
        "structured_tokens": counted.count(json.dumps(structured)) if structured else 0,
    }
