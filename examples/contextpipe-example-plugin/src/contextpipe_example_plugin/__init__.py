"""contextpipe-example-plugin: the `path-match` strategy, registered through the
`contextpipe.strategies` entry point (see pyproject.toml).
"""

from __future__ import annotations

from contextpipe import ConfigError, ContextStrategy, Settings, hookimpl
from pydantic import ValidationError

from .path_match import NAME, PathMatchOptions, PathMatchStrategy

__all__ = ["PathMatchOptions", "PathMatchStrategy", "contextpipe_strategies"]


@hookimpl
def contextpipe_strategies(settings: Settings) -> list[ContextStrategy]:
    """Register `path-match`, configured from `[strategies.path-match.options]`."""
    try:
        options = PathMatchOptions.model_validate(settings.strategy(NAME).options)
    except ValidationError as exc:
        # A mistake in the user's config, not in the plugin: raise ConfigError with the
        # dotted key, and contextpipe stops with one line naming the file, line and key.
        error = exc.errors()[0]
        key = f"strategies.{NAME}.options." + ".".join(str(part) for part in error["loc"])
        problem = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(f"{key}: {problem}", key) from None
    return [PathMatchStrategy(options)]
