"""Exceptions that reach users: each message is one line naming what to fix."""

from __future__ import annotations


class ContextpipeError(Exception):
    """Base class for every error contextpipe raises on purpose."""


class ConfigError(ContextpipeError):
    """A configuration file, environment variable or flag holds a value that is not allowed.

    `key` is the dotted key at fault, when known, so that the file and line can be named.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class BudgetError(ContextpipeError, ValueError):
    """A token budget that cannot be honoured (zero, negative)."""


class StoreError(ContextpipeError):
    """The store is missing, unreadable or was written by an incompatible version."""


class TokenizerError(ContextpipeError):
    """An unknown tokenizer name, or its vocabulary files are missing or corrupt."""
