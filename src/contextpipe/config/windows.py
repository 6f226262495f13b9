"""The LLMs a chat request may name: the built-in list (`models.toml`, read once: it is a
constant of the package) and `[models."NAME"]` of config.toml, which adds or replaces.

A name is looked up lowercased and without a provider prefix (up to its last '/'):
exactly, else by its longest listed prefix followed by '-', ':' or '@', which is how
providers name dated and suffixed versions.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from .schema import ModelSettings, Settings

_VERSION_MARKS = "-:@"


@cache
def _built_in() -> dict[str, ModelSettings]:
    text = resources.files("contextpipe.config").joinpath("models.toml").read_text(encoding="utf-8")
    table: dict[str, dict[str, object]] = tomllib.loads(text)["models"]
    return {name: ModelSettings.model_validate(entry) for name, entry in table.items()}


def model_window(settings: Settings, name: str) -> ModelSettings | None:
    """The window, tokenizer and output reserve of model `name`; None when unknown."""
    known = _built_in() | {key.lower(): entry for key, entry in settings.models.items()}
    wanted = name.strip().lower().rsplit("/", 1)[-1]
    if wanted in known:
        return known[wanted]
    prefixes = [
        listed
        for listed in known
        if wanted.startswith(listed) and wanted[len(listed)] in _VERSION_MARKS
    ]
    return known[max(prefixes, key=len)] if prefixes else None
