"""Commands for agent memory: remember, import, forget-memory, pin, unpin."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.

if TYPE_CHECKING:
    from ... import Pipeline

from ._base import CliContext, F, errors, iso_time
from ._progress import LogProgress, embed


def _scope_options(command: F) -> F:
    """--session and --user: whose memory an item is (neither: global)."""
    command = click.option("--user", help="Remember it for this user only.")(command)
    return click.option("--session", help="Remember it for this session only.")(command)


def _embed_quietly(pipeline: Pipeline) -> str:
    """Vectors for what was just remembered, as `index` computes them; a line saying so."""
    vectors, no_vectors = embed(pipeline, LogProgress("texts"))
    if vectors is None:
        return f"vectors: none computed ({no_vectors}); keyword search works without them"
    return f"vectors: {vectors.embedded} texts embedded with {vectors.embedder}"


@click.command()
@click.argument("text")
@_scope_options
@click.option("--at", help="When it was said (ISO 8601; default: now; no zone: UTC).")
@click.option("--id", "item_id", help="Its id (default: a hash of scope, time and text).")
@click.option("--speaker", default="", help="Who said it.")
@click.pass_obj
def remember(
    obj: CliContext,
    text: str,
    session: str | None,
    user: str | None,
    at: str | None,
    item_id: str | None,
    speaker: str,
) -> None:
    """Keep TEXT as a memory item: seen by requests of --session, of --user, or (neither)
    by every request; re-indexing files never removes it (see `forget-memory`).
    """
    moment = iso_time(at, "--at")
    with errors():
        pipeline = obj.pipeline()
        item = pipeline.remember(
            text, session=session, user=user, at=moment, item_id=item_id, speaker=speaker
        )
        line = _embed_quietly(pipeline)
    owner = f" {item.owner}" if item.owner else ""
    click.echo(f"remembered {item.id} ({item.scope.value}{owner}, {item.at.isoformat()})")
    click.echo(line)


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_scope_options
@click.pass_obj
def import_conversation(obj: CliContext, file: Path, session: str | None, user: str | None) -> None:
    """Keep each turn of a conversation FILE (a JSON list of turns with id, speaker, time
    and text) as a memory item that keeps its id.
    """
    with errors():
        pipeline = obj.pipeline()
        items = pipeline.import_conversation(file, session=session, user=user)
        line = _embed_quietly(pipeline)
    click.echo(f"{file}: remembered {len(items)} turns")
    click.echo(line)


@click.command("forget-memory")
@_scope_options
@click.option("--global", "everything_global", is_flag=True, help="Forget global memory.")
@click.option("--id", "ids", multiple=True, help="Only the item with this id (repeatable).")
@click.pass_obj
def forget_memory(
    obj: CliContext,
    session: str | None,
    user: str | None,
    everything_global: bool,
    ids: tuple[str, ...],
) -> None:
    """Forget the memory of one --session, one --user or --global memory (only the items
    --id names, when given). Indexed files are never touched.
    """
    with errors():
        count = obj.pipeline().forget_memory(
            session=session, user=user, everything_global=everything_global, ids=ids
        )
    click.echo(f"forgot {count} memory items")


@click.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def pin(obj: CliContext, targets: tuple[str, ...]) -> None:
    """Pin node URIs (uko://...), paths, folders (ending in /) or globs of paths: the tiered
    strategy puts them in its hot tier in every request.
    """
    with errors():
        pipeline = obj.pipeline()
        for target in targets:
            pipeline.pin(target)
            click.echo(f"pinned {target}")


@click.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def unpin(obj: CliContext, targets: tuple[str, ...]) -> None:
    """Unpin targets `contextpipe pin` pinned ([memory] pinned in config stays)."""
    with errors():
        pipeline = obj.pipeline()
        for target in targets:
            done = pipeline.unpin(target)
            click.echo(f"unpinned {target}" if done else f"{target} was not pinned")
