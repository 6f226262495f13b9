"""contextpipe-example-plugin: the `path-match` strategy, registered through the
`contextpipe.strategies` entry point (see pyproject.toml).
"""

from __future__ import annotations

from contextpipe import ContextStrategy, Settings, hookimpl, strategy_options

from .path_match import NAME, PathMatchOptions, PathMatchStrategy

__all__ = ["PathMatchOptions", "PathMatchStrategy", "contextpipe_strategies"]


@hookimpl
def contextpipe_strategies(settings: Settings) -> list[ContextStrategy]:
    """Register `path-match`, configured from `[strategies.path-match.options]`."""
    # A mistake in the user's options raises ConfigError naming the dotted key, and
    # contextpipe stops with one line naming the file, line and key.
    return [PathMatchStrategy(strategy_options(settings, NAME, PathMatchOptions))]
