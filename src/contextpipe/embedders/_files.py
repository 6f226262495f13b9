"""Finding and reading the files of a model installed as a Python package, with the
one-line errors every built-in embedder gives: a package not installed names
`contextpipe model install NAME`; a file that cannot be read or is damaged names the file
and `contextpipe model install --force NAME`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from contextpipe import MODEL_INSTALL_COMMAND, EmbedderError

_T = TypeVar("_T")


class Once(Generic[_T]):
    """A value made on first use, once, whichever thread asks first (a loaded model)."""

    def __init__(self, make: Callable[[], _T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._value: _T | None = None

    def get(self) -> _T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value


def package_folder(module: str, package: str, embedder: str) -> Path:
    """The folder of the installed package `module` (PyPI name `package`), found without
    importing it.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise EmbedderError(
            f"embedder {embedder!r} has no model: the package {package} is not installed;"
            f" run `{MODEL_INSTALL_COMMAND} {embedder}`"
        )
    return Path(spec.origin).parent


def read_model_file(path: Path, embedder: str) -> bytes:
    """The bytes of one model file."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise EmbedderError(
            f"{path}: model file unreadable ({exc.strerror}); reinstall it with"
            f" `{MODEL_INSTALL_COMMAND} --force {embedder}`"
        ) from None


def damaged(path: Path, exc: Exception, embedder: str) -> EmbedderError:
    """The error for a model file whose content is wrong, `exc` saying how."""
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return EmbedderError(
        f"{path}: damaged model file ({first_line}); reinstall it with"
        f" `{MODEL_INSTALL_COMMAND} --force {embedder}`"
    )


def weights_digest(data: bytes) -> str:
    """The short hash of a weights file that `space` carries."""
    return hashlib.sha256(data).hexdigest()[:16]
