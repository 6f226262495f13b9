"""Writing the commented default `config.toml` (`contextpipe config init`).

Rules: every key is written with its default, under a comment made of its field's
description (a key unset by default is written commented out); plugins' own options are
written and commented like the core's; what is written must read back as TOML.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping

import tomli_w
from pydantic import BaseModel

from .schema import Settings, StrategySettings


def _comment(text: str) -> str:
    return "\n".join(f"# {line}" for line in text.splitlines())


def _write_table(lines: list[str], header: str, model: BaseModel) -> None:
    """A TOML table of the model's fields, each preceded by its description."""
    lines.append(f"[{header}]")
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        description = field.description or ""
        if isinstance(value, dict):
            continue  # sub-tables (strategy options) are written by their owner
        if value is None:
            lines.append(_comment(f"{description} Unset by default."))
            lines.append(f"# {name} =")
        else:
            lines.append(_comment(description))
            lines.append(tomli_w.dumps({name: value}).strip())
    lines.append("")


def default_config_toml(
    strategy_options: Mapping[str, BaseModel | None] | None = None,
    strategy_weights: Mapping[str, float] | None = None,
) -> str:
    """The commented default `config.toml` that `contextpipe config init` writes.

    `strategy_options` maps each strategy name to its options model (defaults and field
    descriptions), so plugins' own settings are written and commented like the core's;
    `strategy_weights` maps it to the weight it runs with when config sets none (its
    declared `default_weight`), written as its `weight`.
    """
    settings = Settings()
    lines = [
        "# contextpipe configuration. Every key is shown with its default.",
        "# Precedence: command-line flags > CONTEXTPIPE_SECTION__KEY environment > this file.",
        "",
    ]
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            lines.append(_comment(str(type(value).__doc__).strip()))
            _write_table(lines, name, value)
    for strategy_name, options in sorted((strategy_options or {}).items()):
        lines.append(_comment(f"Strategy {strategy_name}: {StrategySettings.__doc__}"))
        weight = (strategy_weights or {}).get(strategy_name)
        _write_table(lines, f"strategies.{strategy_name}", StrategySettings(weight=weight))
        if options is not None:
            _write_table(lines, f"strategies.{strategy_name}.options", options)
    text = "\n".join(lines).rstrip() + "\n"
    tomllib.loads(text)  # what we write must read back
    return text
