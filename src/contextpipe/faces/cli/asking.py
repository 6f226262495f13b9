"""Commands that ask: query, and what the strategies are (strategies, explain)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from ... import OutputFormat

if TYPE_CHECKING:
    from ... import AssembledContext, Pipeline

from ._base import CliContext, errors, fail, format_option, iso_time


@click.command()
@click.argument("query")
@click.option("--budget", type=int, help="Token budget (default: budget.default).")
@format_option(*(f.value for f in OutputFormat), default=OutputFormat.MARKDOWN.value)
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
@click.option("--mmr-lambda", type=float, help="MMR trade-off (default: packing.mmr_lambda).")
@click.option(
    "--prefer-source",
    is_flag=True,
    help="A code question: source files before tests, docs, changelogs and CI files.",
)
@click.pass_obj
def query(
    obj: CliContext,
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
    mmr_lambda: float | None,
    prefer_source: bool,
) -> None:
    """Assemble context for QUERY within the budget and print it.

    markdown and xml print the rendered context; json prints the whole result
    (fragments, provenance, strategy reports, dropped items; schema in docs/);
    messages prints the chat messages as JSON.
    """
    from ... import RequestFilters, StrategySelection

    with errors():
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
            as_of=iso_time(as_of, "--as-of"),
            focus=focus,
            mmr_lambda=mmr_lambda,
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


@click.command()
@format_option("text", "json", default="text")
@click.pass_obj
def strategies(obj: CliContext, output_format: str) -> None:
    """List every strategy plugin, with its distribution, version, status and load time."""
    from rich.console import Console
    from rich.table import Table

    with errors():
        pipeline = obj.pipeline()
    rows = pipeline.strategy_rows()
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


@click.command()
@click.argument("name", required=False)
@click.pass_obj
def explain(obj: CliContext, name: str | None) -> None:
    """Say what a strategy (or every strategy) does and which settings it reads."""
    with errors():
        pipeline = obj.pipeline()
    chosen = pipeline.strategies
    if name is not None:
        registered = pipeline.strategy(name)
        if registered is None:
            known = ", ".join(s.strategy.name for s in chosen) or "none"
            fail(f"unknown strategy {name!r}; registered: {known}")
        chosen = [registered]
    for registered in chosen:
        strategy = registered.strategy
        click.echo(f"{strategy.name} ({registered.plugin.label}), quality {strategy.quality}")
        click.echo(f"  needs: {', '.join(sorted(strategy.required_backends)) or 'nothing'}")
        click.echo(f"  {strategy.explain()}")
