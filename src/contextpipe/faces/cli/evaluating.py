"""Commands that measure and tune: eval (beir, fileloc, locomo), tune (beir)."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from ... import CONFIG_FILENAME

if TYPE_CHECKING:
    from ..evaluation import BeirSet, EvalProgress, Project

from ._base import CliContext, F, errors, format_option
from ._progress import BarProgress, progress_bar


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
    obj: CliContext, folder: Path, split: str, limit: int | None
) -> Generator[tuple[BeirSet, Project, EvalProgress | None]]:
    """The BEIR set, its corpus indexed into a temporary project under the user's settings,
    and a progress bar for the queries when stderr is a terminal (none otherwise).
    """
    from rich.console import Console

    from ..evaluation import indexed_project, read_beir

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
        progress_bar(stderr) as bar,
        indexed_project(data, config, BarProgress(bar, "files")) as project,
    ):
        yield data, project, BarProgress(bar, "queries")


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


@click.group("eval")
def eval_group() -> None:
    """Measure the assembled context on a benchmark (docs/evaluation.md)."""


@eval_group.command("beir")
@_beir_options("test")
@format_option("text", "json", default="text")
@click.pass_obj
def eval_beir(
    obj: CliContext, folder: Path, split: str, limit: int | None, output_format: str
) -> None:
    """nDCG@10, Recall@10 and @100 and budget hit rates on the BEIR FOLDER (corpus.jsonl,
    queries.jsonl, qrels/SPLIT.tsv), for the default mix and for each strategy alone.

    The corpus is indexed into a temporary store under your settings (config file and
    environment); your own store is not touched.
    """
    from ..evaluation import evaluate

    with errors(), _evaluation(obj, folder, split, limit) as (data, project, progress):
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
@format_option("text", "json", default="text")
@click.pass_obj
def eval_fileloc(
    obj: CliContext, tasks: Path, repository: Path, limit: int | None, output_format: str
) -> None:
    """File localisation: Acc@1/3/5/10 of the files that had to change among the files of
    the context assembled for each task of TASKS (JSON lines: id, base, query, gold_files),
    with each task's base checked out from --repo, for the default mix and each strategy
    alone.

    The repository is cloned into a temporary folder and indexed there, under your
    settings (config file and environment); your own store is not touched.
    """
    from rich.console import Console

    from ..evaluation import evaluate_fileloc, read_tasks

    config = obj.config_file()
    stderr = Console(stderr=True)
    with errors():
        chosen = read_tasks(tasks, limit)
        if stderr.is_terminal:
            with progress_bar(stderr) as bar:
                result = evaluate_fileloc(chosen, repository, config, BarProgress(bar, "tasks"))
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
@format_option("text", "json", default="text")
@click.pass_obj
def eval_locomo(obj: CliContext, file: Path, output_format: str) -> None:
    """recall@5/10/25 of the evidence turns of the questions of a LoCoMo FILE, each
    conversation kept as memory, for the default mix and each strategy alone.

    The conversations go into a temporary store under your settings; your own store is
    not touched. Categories 1-4 make the overall figures; 5 (adversarial) is apart.
    """
    from rich.console import Console

    from ..evaluation import evaluate_locomo, memory_project, read_locomo

    config = obj.config_file()
    stderr = Console(stderr=True)
    with errors():
        conversations = read_locomo(file)
        if stderr.is_terminal:
            with (
                progress_bar(stderr) as bar,
                memory_project(conversations, config, BarProgress(bar, "texts")) as project,
            ):
                result = evaluate_locomo(project, conversations, BarProgress(bar, "questions"))
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


@click.group("tune")
def tune_group() -> None:
    """Tune settings on a benchmark and write the winners to config.toml."""


# Tuned on the test split, the settings would be chosen by what they are then judged on.
@tune_group.command("beir")
@_beir_options("train")
@format_option("text", "json", default="text")
@click.pass_obj
def tune_beir(
    obj: CliContext, folder: Path, split: str, limit: int | None, output_format: str
) -> None:
    """Search strategy weights, fusion.rrf_k and packing.mmr_lambda for the best nDCG@10 on
    the BEIR FOLDER, and write the winners to the config file (--config, else
    ./config.toml), with a comment saying what was tuned; other settings and comments stay.
    """
    from ..evaluation import searched, tune, tuned_config, tuning_note

    target = obj.config or Path(CONFIG_FILENAME)
    with errors(), _evaluation(obj, folder, split, limit) as (data, project, progress):
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
