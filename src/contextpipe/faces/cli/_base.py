"""What every command shares: one-line errors, the command's pipeline, the format option."""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from ... import CONFIG_FILENAME, ContextpipeError

if TYPE_CHECKING:
    from ... import Pipeline


F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    click.echo(f"contextpipe: error: {message}", err=True)
    sys.exit(1)


@contextmanager
def errors() -> Generator[None]:
    """Known errors become one line on stderr and exit status 1."""
    try:
        yield
    except ContextpipeError as exc:
        fail(str(exc))


class CliContext:
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
        from ... import Pipeline

        pipeline = Pipeline.open(store=self.store, config=self.config)
        click.get_current_context().call_on_close(pipeline.close)
        return pipeline


def format_option(*choices: str, default: str) -> Callable[[F], F]:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="Output format.",
    )


def iso_time(value: str | None, option: str) -> datetime | None:
    """An ISO 8601 option value (without a zone: UTC), or one line saying what to fix."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        fail(f"{option}: {value!r} is not an ISO 8601 time such as 2024-05-07T10:00")
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        fail(f"{option}: {value!r} is outside years 1-9999 in UTC")
    return moment
