"""`contextpipe serve` and `contextpipe mcp`: one warm pipeline behind HTTP (and MCP at
`/mcp`), or behind MCP on stdio for an agent host that starts it.
"""

from __future__ import annotations

import click

from ._base import CliContext, errors


@click.command()
@click.option("--host", help="Address to bind (default: service.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="Port (default: service.port).")
@click.option(
    "--grpc-port",
    type=click.IntRange(0, 65535),
    help="Also serve gRPC on this port (default: service.grpc_port; needs contextpipe[grpc]).",
)
@click.pass_obj
def serve(obj: CliContext, host: str | None, port: int | None, grpc_port: int | None) -> None:
    """Serve the HTTP API (docs/service.md) until SIGTERM or Ctrl-C."""
    from ..service import serve as run

    with errors():
        pipeline = obj.pipeline()
        changed = {"host": host, "port": port, "grpc_port": grpc_port}
        limits = pipeline.settings.service.model_copy(
            update={key: value for key, value in changed.items() if value is not None}
        )
        settings = pipeline.settings.model_copy(update={"service": limits})
        run(pipeline, settings, lambda line: click.echo(line, err=True))


@click.command()
@click.pass_obj
def mcp(obj: CliContext) -> None:
    """Serve the MCP tools on stdio (docs/service.md#mcp) until the host closes it."""
    from ..mcp import serve_stdio

    with errors():
        pipeline = obj.pipeline()
        pipeline.warm_up()
        serve_stdio(pipeline)
