"""Commands that build and read the index and its store: init, index, forget, graph, store."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from ... import CONFIG_FILENAME

if TYPE_CHECKING:
    from ... import IndexSummary

from ._base import CliContext, errors, fail, format_option
from ._progress import BarProgress, LogProgress, embed, progress_bar


@click.command()
@click.pass_obj
def init(obj: CliContext) -> None:
    """Write a commented default config.toml here (if there is none) and say what next."""
    from ... import Pipeline

    target = obj.config or Path(CONFIG_FILENAME)
    if target.exists():
        click.echo(f"{target} already exists; left as it is.")
    else:
        target.write_text(Pipeline.default_config(), encoding="utf-8")
        click.echo(f"wrote {target}")
    click.echo('next: contextpipe index PATH, then contextpipe query "your question"')


def _print_summary(summary: IndexSummary) -> None:
    """One line per root: the files seen (= indexed + unchanged + skipped), skip reasons,
    folders not walked, and what was written.
    """
    skipped = len(summary.skipped_files)
    reasons = "".join(f"; {count} {reason}" for reason, count in sorted(summary.skipped.items()))
    syntax = summary.with_syntax_errors
    indexed = f"{summary.indexed} indexed" + (f" ({syntax} with syntax errors)" if syntax else "")
    folders = summary.folders_skipped
    not_walked = ""
    if folders:
        kinds = ", ".join(f"{count} {reason}" for reason, count in sorted(folders.items()))
        total = sum(folders.values())
        not_walked = f"; {total} {'folder' if total == 1 else 'folders'} not walked ({kinds})"
    click.echo(
        f"{summary.root}: {summary.files_seen} files seen, {indexed}, "
        f"{summary.unchanged} unchanged, {summary.removed} removed, {skipped} skipped{reasons}"
        f"{not_walked}; {summary.nodes_written} nodes, {summary.edges_written} declared edges, "
        f"{summary.fragments_written} fragments written in {summary.seconds:.2f} s"
    )


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--rebuild",
    is_flag=True,
    help="Move the store aside (kept, renamed with a time stamp) and index into a new one.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Read the whole store and check that it is whole (slow); index nothing.",
)
@format_option("text", "json", default="text")
@click.pass_obj
def index(
    obj: CliContext, paths: tuple[Path, ...], rebuild: bool, check: bool, output_format: str
) -> None:
    """Index folders or single files of text, markdown and source (honours .gitignore).

    Each PATH is brought up to date: new and changed files are indexed, files that vanished
    from under it are removed, files indexed from other paths are left alone (see
    `contextpipe forget`). Skipped files are listed with -v and in --format json.
    """
    from rich.console import Console

    if check:
        if paths or rebuild:
            raise click.UsageError("--check indexes nothing: give it no PATH and no --rebuild")
        with errors():
            click.echo(obj.pipeline().verify_store())
        return
    if not paths:
        raise click.UsageError("Missing argument 'PATHS...'.")
    stderr = Console(stderr=True)
    with errors():
        pipeline = obj.pipeline()
        roots = pipeline.index_roots(paths)  # a mistyped path fails before anything moves
        moved = pipeline.move_store_aside() if rebuild else None
        if moved is not None and output_format == "text":
            click.echo(f"moved the store aside to {moved}; indexing into a new one")
        # Memory, pins and session logs come from no file: carried over, not re-indexed.
        carried = pipeline.carry_memory(moved) if moved is not None else None
        said = carried.summary(moved) if carried is not None and moved is not None else None
        if said is not None and output_format == "text":
            click.echo(said)
        if stderr.is_terminal:
            with progress_bar(stderr) as bar:
                summaries = pipeline.index(roots, BarProgress(bar, "files"))
                vectors, no_vectors = embed(pipeline, BarProgress(bar, "texts"))
        else:
            summaries = pipeline.index(roots, LogProgress("files"))
            vectors, no_vectors = embed(pipeline, LogProgress("texts"))
        store = pipeline.stats()
    if output_format == "json":
        result = {
            "roots": [asdict(summary) for summary in summaries],
            "store": {
                "path": store.location,
                "fragments": store.fragments,
                "searchable": store.searchable,
            },
            "vectors": asdict(vectors) if vectors else {"error": no_vectors},
            "moved_aside": moved,
            "memory_carried": asdict(carried) if carried is not None else None,
        }
        click.echo(json.dumps(result, indent=2))
        return
    for summary in summaries:
        _print_summary(summary)
    click.echo(
        f"store: {store.location} ({store.fragments} fragments, {store.searchable} searchable)"
    )
    if vectors is not None:
        click.echo(
            f"vectors: {vectors.embedded} texts embedded with {vectors.embedder} in"
            f" {vectors.seconds:.2f} s; {vectors.with_vectors} of {vectors.total} have vectors"
        )
    else:
        click.echo(f"vectors: none computed ({no_vectors}); keyword search works without them")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_obj
def forget(obj: CliContext, paths: tuple[Path, ...]) -> None:
    """Remove from the index every file indexed at or under each PATH (which need not exist
    any more), with everything read from it, and say what went.
    """
    with errors():
        pipeline = obj.pipeline()
        for path in paths:
            done = pipeline.forget(path)
            click.echo(f"{done.root}: forgot {done.files} files, {done.fragments} fragments")


@click.group()
def graph() -> None:
    """Inspect the UKO graph of the index."""


@graph.command("stats")
@format_option("text", "json", default="text")
@click.pass_obj
def graph_stats_command(obj: CliContext, output_format: str) -> None:
    """Node counts by kind and edge counts by type."""
    with errors():
        stats = obj.pipeline().graph().stats()
    if output_format == "json":
        click.echo(json.dumps({"nodes": stats.nodes, "edges": stats.edges}, indent=2))
        return
    click.echo(f"nodes: {sum(stats.nodes.values())}")
    for kind, count in stats.nodes.items():
        click.echo(f"  {kind}: {count}")
    click.echo(f"edges: {sum(stats.edges.values())}")
    for kind, count in stats.edges.items():
        click.echo(f"  {kind}: {count}")


@graph.command("show")
@click.argument("uri")
@click.option("--hops", type=click.IntRange(0, 10), default=1, show_default=True)
@click.pass_obj
def graph_show(obj: CliContext, uri: str, hops: int) -> None:
    """Print a node's neighbourhood: every edge within HOPS of it."""
    with errors():
        view = obj.pipeline().graph()
        node = view.node(uri)
        if node is None:
            fail(f"{uri}: no such node; `contextpipe graph stats` shows what is indexed")
        edges = view.subgraph([uri], hops)
    click.echo(f"{uri} ({node.kind}, {node.path})")
    for source, kind, target in edges:
        click.echo(f"  {source} -[{kind}]-> {target}")


@click.group()
def store() -> None:
    """Check a store backend against the store contract."""


@store.command("check")
@click.argument("name", required=False)
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="One of the backend's [store.options] (a server's address, say), over the config's.",
)
@click.pass_obj
def store_check(obj: CliContext, name: str | None, options: tuple[str, ...]) -> None:
    """Run every check of the store contract against the installed backend NAME (default:
    the configured `[store] backend`), each on a temporary project of its own; print each
    failed check in one line, then how many passed and failed (exit status 1 on a failure).
    The backend gets its `[store.options]` from the config when that names it, and from
    `--option`.
    """
    from ... import check_store, setting_value

    given: dict[str, object] = {}
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or not key.strip():
            fail(f"--option {option!r}: give KEY=VALUE, one of the backend's [store.options]")
        given[key.strip()] = setting_value(value)
    with errors():
        report = check_store(name, obj.config, options=given)
    for line in report.failures():
        click.echo(line)
    click.echo(report.summary())
    if report.failed:
        sys.exit(1)
