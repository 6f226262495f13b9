"""Progress of the long-running commands: a bar on a terminal, a log line otherwise."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from ... import EmbedSummary, Pipeline


class BarProgress:
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


def progress_bar(console: Console) -> Progress:
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


class LogProgress:
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


def embed(
    pipeline: Pipeline, progress: BarProgress | LogProgress
) -> tuple[EmbedSummary | None, str]:
    """Compute the vectors the store lacks; without a usable model, why not instead."""
    from ... import EmbedderError

    try:
        return pipeline.embed(progress), ""
    except EmbedderError as exc:
        return None, str(exc)
