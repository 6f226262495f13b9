"""`contextpipe serve` and `contextpipe mcp`: one warm pipeline behind HTTP (and MCP at
`/mcp`), or behind MCP on stdio for an agent host that starts it; `contextpipe token`: the
API tokens that guard the service.
"""

from __future__ import annotations

import json

import click

from ._base import CliContext, errors, fail, format_option


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


@click.group()
def token() -> None:
    """API tokens of the service: each speaks for one user (and session)."""


@token.command("create")
@click.option("--user", required=True, help="The user the token speaks for.")
@click.option("--session", help="The one session whose memory it may read and keep.")
@click.pass_obj
def token_create(obj: CliContext, user: str, session: str | None) -> None:
    """Make a token and print it once: the store keeps only its hash."""
    from ..tokens import create_token, tokens_file

    with errors():
        path = tokens_file(obj.pipeline())
        secret, scope = create_token(path, user, session)
    bound = f"user {user!r}" + (f", session {session!r}" if session else "")
    click.echo(f"token {scope.id} for {bound}; shown only now, kept hashed in {path}", err=True)
    click.echo(secret)


@token.command("list")
@format_option("text", "json", default="text")
@click.pass_obj
def token_list(obj: CliContext, output_format: str) -> None:
    """Every token's id, scope and creation time (never the token itself)."""
    from ..tokens import list_tokens, tokens_file

    with errors():
        rows = list_tokens(tokens_file(obj.pipeline()))
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        session = row["session"] or "-"
        click.echo(f"{row['id']}  user={row['user']}  session={session}  {row['created']}")


@token.command("revoke")
@click.argument("token_id")
@click.pass_obj
def token_revoke(obj: CliContext, token_id: str) -> None:
    """Revoke the token TOKEN_ID (as `token list` shows it): it stops working at once."""
    from ..tokens import revoke_token, tokens_file

    with errors():
        if not revoke_token(tokens_file(obj.pipeline()), token_id):
            fail(f"no token {token_id!r} (contextpipe token list shows them)")
    click.echo(f"revoked {token_id}")
