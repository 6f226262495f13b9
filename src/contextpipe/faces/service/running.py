"""`contextpipe serve`: the API on uvicorn until SIGTERM or Ctrl-C.

Rules:

1. It binds loopback unless configured otherwise, and no other address until API tokens
   exist to guard it: `serve` refuses one with a line saying so.
2. On SIGTERM (or SIGINT) it stops accepting, gives the requests in flight
   `shutdown_grace_s` to finish, closes the pipeline and exits 0.
3. Once listening it prints one line with the address it bound (port 0 picks a free one),
   so that a caller that started it knows where to connect; with `grpc_port`, one more
   for the gRPC face, started first and stopped after the HTTP API with the same grace.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

import uvicorn

from ... import ContextpipeError, Pipeline, Settings
from ..tokens import TokenBook, tokens_path
from .app import create_app

#: The addresses `serve` binds without API tokens.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def serve(pipeline: Pipeline, settings: Settings, announce: Callable[[str], None]) -> None:
    """Serve `pipeline` (closed by the caller) until a signal ends it."""
    limits = settings.service
    if limits.host not in LOOPBACK and not TokenBook(tokens_path(pipeline)).any():
        raise ContextpipeError(
            f"service.host {limits.host!r}: only loopback (127.0.0.1, localhost, ::1) may be"
            " bound until API tokens guard the service (contextpipe token create --user U)"
        )
    config = uvicorn.Config(
        create_app(pipeline, settings),
        host=limits.host,
        port=limits.port,
        log_level="warning",
        timeout_graceful_shutdown=limits.shutdown_grace_s,
        # The app's own admission bounds the work; this is the backstop for idle sockets.
        limit_concurrency=None,
    )
    server = uvicorn.Server(config)
    if limits.grpc_port is None:
        asyncio.run(_run(server, announce))
        return
    try:
        from ..grpc import grpc_server
    except ImportError:
        raise ContextpipeError(
            "service.grpc_port: the gRPC face needs its extra: pip install 'contextpipe[grpc]'"
        ) from None
    rpc, bound = grpc_server(pipeline, settings, limits.host, limits.grpc_port)
    announce(f"serving gRPC on {_shown(limits.host)}:{bound}")
    try:
        asyncio.run(_run(server, announce))
    finally:
        rpc.stop(grace=limits.shutdown_grace_s).wait()


async def _run(server: uvicorn.Server, announce: Callable[[str], None]) -> None:
    # uvicorn re-raises the signal that stopped it once it is done, which would end the
    # process with 143 and skip closing the store: a handler of our own keeps the exit 0.
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, lambda number, frame: None)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving
            raise ContextpipeError("the service did not start (see the lines above)")
        await asyncio.sleep(0.02)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    announce(f"serving on http://{_shown(host)}:{port}")
    await serving


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host
