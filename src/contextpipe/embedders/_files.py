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
from typing import TYPE_CHECKING, Generic, TypeVar

from contextpipe import MODEL_INSTALL_COMMAND, EmbedderError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

_T = TypeVar("_T")


class LoadedOnce(Generic[_T]):
    """What the built-in embedders share: their model (`_T`), made by `make` on first use,
    once, whichever thread asks first; `load()` makes it now.
    """

    def __init__(self, make: Callable[[], _T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._value: _T | None = None

    def loaded(self) -> _T:
        """The model, made now if it was not yet."""
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    def load(self) -> None:
        self.loaded()


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


def read_tokenizer(path: Path, embedder: str, max_length: int | None) -> Tokenizer:
    """A HuggingFace `tokenizers.Tokenizer` from its JSON file, with no padding (each text
    is encoded alone) and texts cut on the right at `max_length` tokens (None: never cut).
    """
    from tokenizers import Tokenizer  # with the model, not with the plugin

    data = read_model_file(path, embedder)
    try:
        tokenizer = Tokenizer.from_buffer(data)
    except Exception as exc:
        raise damaged(path, exc, embedder) from None
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        # Its defaults cut on the right, longest first; its stub leaves the options untyped.
        tokenizer.enable_truncation(max_length)  # pyright: ignore[reportUnknownMemberType]
    return tokenizer
