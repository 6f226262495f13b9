"""Exceptions that reach users: each message is one line naming what to fix."""

from __future__ import annotations

import reprlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


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


class EmbedderError(ContextpipeError):
    """An embedding model that cannot be used: not installed (the message names
    `contextpipe model install`), or a model file that is damaged (the message names it).
    """


def validation_problem(exc: ValidationError) -> tuple[str, str]:
    """The first error pydantic found, as its dotted location ('' for the value as a whole)
    and one line saying what is wrong: "unknown key" for a key the model does not have,
    else pydantic's message with the value given, quoted and cut short (none for a missing
    one). Every caller puts its own context before them (file and line, request, candidate).
    """
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return where, "unknown key"
    message = error["msg"].removeprefix("Value error, ")
    if kind == "missing":
        return where, message
    # reprlib keeps a long value to one readable line (and survives a failing __repr__).
    return where, f"{message} (got {reprlib.repr(error['input'])})"


def described(exc: BaseException) -> str:
    """An exception as `Type: message` for one line of a report; just the type when it has
    no message, or its message cannot be made (making it runs its `__str__`, which a
    plugin wrote).
    """
    try:
        message = str(exc)
    except Exception:
        return f"{type(exc).__name__} (its message could not be read)"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
