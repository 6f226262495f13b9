"""The HTTP API over one warm pipeline (FastAPI; the schema at `GET /openapi.json`).

Rules:

1. Each endpoint is a few lines over `Pipeline`: what the command line does, the same way.
2. A request's body is a published model (`ContextRequest`, `OptimizeRequest`,
   `MemoryNote`, `PinTarget`); FastAPI's validation answers a malformed one with 422
   naming the field, and so does `/v1/optimize` for what is wrong across its chunks.
3. An error the caller can fix is a 4xx with one `detail` line: a `ContextpipeError` 400,
   a store that cannot serve (`StoreError`) 503, a body over `max_body_bytes` 413.
4. At most `max_running` requests are assembled at once and `max_queued` wait; one more
   gets 503 with `Retry-After` at once (`admission`). Health and readiness never wait.
5. `/metrics` counts what an operator watches (Prometheus text: `metrics`).
   `/readyz` is 503 until the warm-up (store read, tokenizer, graph) is done, and again
   whenever the store stops opening; `/healthz` only says the process answers.
6. Each call to the pipeline runs on a daemon worker, reused from one request to the next
   (`DaemonWorkers`): the event loop keeps answering meanwhile, a call stuck past the
   shutdown grace (a plugin that never returns) does not keep the process from exiting,
   and a request finds the store's connections of its thread open (a new thread per
   request opened them anew: 6-8 ms a request at 10k, `benchmarks/bench_service`).
7. A chat request is never failed by contextpipe: its deadline counts from its arrival,
   waiting for a turn included, and a request refused (`busy`), out of time (`deadline`)
   or failed gets its messages back unchanged with the reason. Only bad input is a 4xx.
8. MCP (`..mcp`) is served at `/mcp` as stateless streamable HTTP, each tool call admitted
   like any request (a refusal is a tool error saying when to retry).
9. Once API tokens exist (`..tokens`), every `/v1/*` and `/mcp` call needs one: 401
   without a known one, 403 for a request beyond its token's scope. Health, readiness,
   metrics and the schema stay open.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from typing import Any, TypeVar, cast

from fastapi import FastAPI, Query, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ... import (
    AssembledContext,
    ChatContext,
    ChatRequest,
    ContextpipeError,
    ContextRequest,
    DaemonWorkers,
    MemoryItem,
    OptimizedContext,
    OptimizeRequest,
    Pipeline,
    Settings,
    StoreError,
    __version__,
)
from ..mcp import mcp_server
from ..tokens import CALLER, Guard, ScopeError, TokenBook, UnknownTokenError, tokens_path
from .admission import Admission, BusyError
from .jobs import IndexJobs, JobRefusedError
from .metrics import Metrics

T = TypeVar("T")
_WORKERS = DaemonWorkers("contextpipe-request")


class AssembleRequest(ContextRequest):
    """A `ContextRequest` whose budget may be left out: `[budget] default` then."""

    budget: int | None = Field(  # pyright: ignore[reportIncompatibleVariableOverride]
        default=None, description="Hard limit on the rendered output, in tokens."
    )


class MemoryNote(BaseModel):
    """A memory item to keep (an existing id in the same scope is replaced)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    id: str | None = Field(default=None, min_length=1, description="Default: from the text.")
    session: str | None = Field(default=None, min_length=1, description="Only this session's.")
    user: str | None = Field(default=None, min_length=1, description="Only this user's.")
    at: datetime | None = Field(default=None, description="When it was said; default: now.")
    speaker: str = ""


class PinTarget(BaseModel):
    """A node URI, a path, a folder (ending in '/') or a glob of paths."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=1)


class IndexRun(BaseModel):
    """Which configured root to index (`[service] index_roots`, as written there)."""

    model_config = ConfigDict(extra="forbid")

    root: str = Field(min_length=1)


class _Readiness:
    def __init__(self) -> None:
        self.ready = False
        self.reason = "warming up"


def create_app(pipeline: Pipeline, settings: Settings) -> FastAPI:
    """The API over `pipeline`, which the caller opened and closes."""
    limits = settings.service
    admission = Admission(limits.max_running, limits.max_queued)
    readiness = _Readiness()
    jobs = IndexJobs(pipeline, limits.index_roots)
    metrics = Metrics(admission)

    async def admitted_or_busy(call: Callable[[], T]) -> T:
        """`call()` once admitted; a refusal is a `ContextpipeError` (an MCP tool error)."""
        try:
            async with admission.admitted():
                return await _on_thread(call)
        except BusyError:
            metrics.refused.inc()
            raise ContextpipeError(f"busy: retry after {limits.retry_after_s} s") from None

    tools = mcp_server(pipeline, admitted_or_busy)
    tools.streamable_http_app(stateless_http=True, json_response=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        warming = asyncio.create_task(_warm_up(pipeline, readiness))
        try:
            async with tools.session_manager.run():
                yield
        finally:
            warming.cancel()

    app = FastAPI(
        title="contextpipe",
        version=__version__,
        summary="The best context for an LLM request inside a hard token budget.",
        lifespan=lifespan,
    )
    app.add_middleware(_BodyLimit, most=limits.max_body_bytes)
    app.add_middleware(_Authorize, book=TokenBook(tokens_path(pipeline)))
    app.add_exception_handler(ScopeError, lambda request, exc: _problem(403, str(exc)))
    # MCP's stateless streamable HTTP, at exactly /mcp (a mount would redirect /mcp to /mcp/).
    # Starlette serves an endpoint that is not a function as an ASGI app; its type says less.
    endpoint = cast(Any, StreamableHTTPASGIApp(tools.session_manager))
    app.router.add_route("/mcp", endpoint, ["GET", "POST", "DELETE"], include_in_schema=False)

    async def admitted(
        call: Callable[[], T], wait_s: float | None = None, busy_error: bool = True
    ) -> T | JSONResponse:
        """`call()` on a worker thread once admitted (within `wait_s`), errors as rule 3
        says; when not `busy_error`, a refusal raises `BusyError` instead.
        """
        try:
            async with admission.admitted(wait_s):
                return await _on_thread(call)
        except BusyError:
            metrics.refused.inc()
            if not busy_error:
                raise
            headers = {"Retry-After": str(limits.retry_after_s)}
            return _problem(503, "busy: every slot and the queue are taken", headers)
        except StoreError as exc:
            return _problem(503, str(exc))
        except ContextpipeError as exc:
            return _problem(400, str(exc))

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process answers."""
        return {"status": "alive"}

    @app.get("/readyz", tags=["health"], responses={503: {"description": "Not ready"}})
    async def readyz() -> JSONResponse:
        """Warmed up, and the store opens."""
        if readiness.ready:
            try:
                await _on_thread(pipeline.check)
            except ContextpipeError as exc:
                return JSONResponse({"status": "unavailable", "reason": str(exc)}, 503)
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "not ready", "reason": readiness.reason}, 503)

    @app.post("/v1/assemble", response_model=AssembledContext, tags=["context"])
    async def assemble(request: AssembleRequest) -> Response:
        """Assemble context for a request: the same JSON as `contextpipe query --format json`."""
        session, user = Guard.current().reading(request.session, request.user)
        fields = request.model_dump(exclude={"query", "session", "user"}, exclude_none=True)
        fields.update(session=session, user=user)
        found = await admitted(lambda: pipeline.assemble(request.query, **fields))
        if isinstance(found, Response):
            return found
        metrics.observe(found)
        return Response(found.model_dump_json(), media_type="application/json")

    @app.post("/v1/chat/assemble", response_model=ChatContext, tags=["context"])
    async def chat(request: ChatRequest) -> Response:
        """A model's messages with context before them (rule 7: never an error for a
        failure of contextpipe's; the reason is in `metadata.fallback_reason`).
        """
        arrived = time.perf_counter()
        session, user = Guard.current().reading(request.session, request.user)
        request = request.model_copy(update={"session": session, "user": user})
        deadline_s = (request.deadline_ms or settings.executor.deadline_ms) / 1000

        def enrich() -> ChatContext:
            left_ms = int((deadline_s - (time.perf_counter() - arrived)) * 1000)
            if left_ms < 1:
                return pipeline.chat_unchanged(request, "deadline")
            return pipeline.assemble_chat(request.model_copy(update={"deadline_ms": left_ms}))

        try:
            found = await admitted(enrich, wait_s=deadline_s, busy_error=False)
        except (BusyError, TimeoutError) as exc:
            reason = "busy" if isinstance(exc, BusyError) else "deadline"
            found = await _on_thread(lambda: pipeline.chat_unchanged(request, reason))
        if isinstance(found, Response):
            return found
        metrics.observe_chat(found)
        return Response(found.model_dump_json(exclude_unset=True), media_type="application/json")

    @app.post("/v1/optimize", response_model=OptimizedContext, tags=["context"])
    async def optimize(request: OptimizeRequest) -> Response:
        """A caller's own chunks deduplicated, one per topic, diversified and packed into
        the budget: the same JSON as `contextpipe optimize --format json`.
        """
        if problem := request.problem():
            return _problem(422, f"optimize request {problem}")
        found = await admitted(lambda: pipeline.optimize(request))
        if isinstance(found, Response):
            return found
        return Response(found.model_dump_json(), media_type="application/json")

    @app.post("/v1/index", tags=["index"], status_code=202)
    async def index(run: IndexRun) -> Any:
        """Start indexing a configured root; the job says how far it got."""
        Guard.current().project_wide("index runs")
        try:
            return jobs.start(run.root)
        except JobRefusedError as exc:
            return _problem(exc.status, str(exc))

    @app.get("/v1/jobs/{job_id}", tags=["index"])
    async def job(job_id: str) -> Any:
        """An index job: running, done (with its summary) or failed (with the reason)."""
        found = jobs.get(job_id)
        return found if found is not None else _problem(404, f"no job {job_id!r}")

    @app.get("/v1/graph/node", tags=["context"])
    async def graph_node(
        uri: str = Query(min_length=1), hops: int = Query(default=1, ge=0, le=3)
    ) -> Any:
        """A node of the code and document graph, and the edges and nodes within `hops`."""

        def around() -> dict[str, Any] | None:
            graph = pipeline.graph()
            node = graph.node(uri)
            if node is None:
                return None
            edges = graph.subgraph([uri], hops)  # 0 hops: the edges of the node to itself
            near = sorted({end for edge in edges for end in (edge.source, edge.target)} - {uri})
            nodes = [found._asdict() for name in near if (found := graph.node(name))]
            return {
                "node": node._asdict(),
                "edges": [edge._asdict() for edge in edges],
                "nodes": nodes,
            }

        found = await admitted(around)
        if found is None:
            return _problem(404, f"no node {uri!r} in the graph")
        return found

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    async def prometheus() -> PlainTextResponse:
        """Requests in flight and queued, strategies' latency and outcomes (Prometheus)."""
        return PlainTextResponse(metrics.text(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/strategies", tags=["context"])
    async def strategies() -> list[dict[str, Any]]:
        """Every strategy plugin, as `contextpipe strategies --format json` lists them."""
        return pipeline.strategy_rows()

    @app.post("/v1/memory", tags=["memory"], status_code=201)
    async def remember(note: MemoryNote) -> Any:
        """Keep a memory item for a session, a user, or (neither) every request."""
        session, user = Guard.current().keeping(note.session, note.user)

        def keep() -> dict[str, str]:
            item = pipeline.remember(
                note.text,
                session=session,
                user=user,
                at=note.at,
                item_id=note.id,
                speaker=note.speaker,
            )
            return _item(item)

        return await admitted(keep)

    @app.delete("/v1/memory/{item_id}", tags=["memory"])
    async def forget_one(
        item_id: str,
        session: str | None = Query(default=None, min_length=1),
        user: str | None = Query(default=None, min_length=1),
    ) -> Any:
        """Forget one memory item of a session, a user, or (neither) global memory."""
        session, user = Guard.current().keeping(session, user)
        everything_global = session is None and user is None
        found = await admitted(
            lambda: pipeline.forget_memory(
                session=session, user=user, everything_global=everything_global, ids=[item_id]
            )
        )
        if isinstance(found, Response):
            return found
        if not found:
            return _problem(404, f"no memory item {item_id!r} in that scope")
        return {"forgotten": found}

    @app.delete("/v1/memory", tags=["memory"])
    async def forget_all(
        session: str | None = Query(default=None, min_length=1),
        user: str | None = Query(default=None, min_length=1),
        everything_global: bool = Query(default=False, alias="global"),
    ) -> Any:
        """Forget all the memory of one session, one user, or (`global=true`) global memory."""
        session, user = Guard.current().forgetting(session, user, everything_global)
        # The pipeline refuses anything but exactly one of the three (400).
        found = await admitted(
            lambda: pipeline.forget_memory(
                session=session, user=user, everything_global=everything_global
            )
        )
        return found if isinstance(found, Response) else {"forgotten": found}

    @app.post("/v1/pins", tags=["memory"], status_code=201)
    async def pin(pinned: PinTarget) -> Any:
        """Pin a target: the tiered strategy's hot tier holds it in every request."""
        Guard.current().project_wide("pins")
        found = await admitted(lambda: pipeline.pin(pinned.target))
        return found if isinstance(found, Response) else {"pinned": pinned.target}

    @app.delete("/v1/pins", tags=["memory"])
    async def unpin(target: str = Query(min_length=1)) -> Any:
        """Unpin a target that was pinned."""
        Guard.current().project_wide("pins")
        found = await admitted(lambda: pipeline.unpin(target))
        if isinstance(found, Response):
            return found
        if not found:
            return _problem(404, f"{target!r} is not pinned")
        return {"unpinned": target}

    return app


def _item(item: MemoryItem) -> dict[str, str]:
    """A memory item as JSON (`Client.remember` reads it back)."""
    return {
        "id": item.id,
        "text": item.text,
        "at": item.at.isoformat(),
        "scope": item.scope.value,
        "owner": item.owner,
        "speaker": item.speaker,
    }


async def _warm_up(pipeline: Pipeline, readiness: _Readiness) -> None:
    try:
        await _on_thread(pipeline.warm_up)
        await _on_thread(pipeline.check)
    except ContextpipeError as exc:
        readiness.reason = str(exc)
        return
    # What the warm-up loaded (the graph, the store's tables, the vocabulary) lives as long
    # as the process: left out of the collector's full passes, which otherwise walk it all
    # and stopped every request for 80-90 ms, past a 48 ms deadline (benchmarks/bench_service).
    gc.freeze()
    readiness.ready = True


async def _on_thread(call: Callable[[], T]) -> T:
    """`call()` on a daemon worker (rule 6), its result or exception awaited."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(cast(T, result))

    def run() -> Callable[[], None]:
        try:
            result, error = call(), None
        except BaseException as exc:  # travels to the awaiting request, as to_thread's do
            result, error = None, exc

        def wake() -> None:
            with suppress(RuntimeError):  # the loop closed: the process is ending
                loop.call_soon_threadsafe(settle, result, error)

        return wake

    _WORKERS.submit(run)
    return await done


def _problem(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status, headers=headers)


class _Authorize:
    """Rule 9: the caller's token, found once per request and kept in `CALLER` for it."""

    def __init__(self, app: ASGIApp, book: TokenBook) -> None:
        self.app = app
        self.book = book

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        guarded = path.startswith("/v1/") or path == "/mcp"
        if scope["type"] != "http" or not guarded:
            await self.app(scope, receive, send)
            return
        said = dict(scope["headers"]).get(b"authorization", b"")
        try:
            caller = self.book.caller(said.decode("latin-1"))
        except UnknownTokenError as exc:
            refusal = f"{exc} (Authorization header)"
            await _problem(401, refusal, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        bound = CALLER.set(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(bound)


class _BodyLimit:
    """413 for a body over `most` bytes, by its Content-Length or as it streams in."""

    def __init__(self, app: ASGIApp, most: int) -> None:
        self.app = app
        self.most = most

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.most:
            await _too_large(self.most)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.most:
                raise _TooLargeError
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLargeError:
            await _too_large(self.most)(scope, receive, send)


class _TooLargeError(Exception):
    pass


def _too_large(most: int) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    return _problem(413, f"request body over {most} bytes (service.max_body_bytes)")
