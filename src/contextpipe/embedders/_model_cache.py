"""A per-user cache that spares each process the slow part of loading a model from its
weights (speed machinery for the built-in embedders; they give the same vectors without
it).

Loading all-MiniLM-L6-v2 from its package means reading 90 MB of weights, hashing them for
`space` (SHA-256), building the ONNX graph and letting onnxruntime optimise it: about half
a second of every command that searches by meaning. Kept here instead, under
`<cache>/models/<embedder>/` (`<cache>` is `$XDG_CACHE_HOME/contextpipe`, default
`~/.cache/contextpipe`):

- `weights-<h>.json`: the digest of the weights file at one path (`h` hashes the path),
  beside that file's identity: size, mtime, ctime (in ns), inode and device. It is used
  only while the file still has that identity: any write to a file changes its ctime, and
  a file put in its place has another inode, so a file of the same identity holds the same
  bytes (the rule by which Python trusts a `.pyc`, with ctime and inode added). It is
  recorded only once the weights were read and matched the hash their installer recorded
  (`_files`), so a digest found here is of weights that were checked.
- `<key>/`: the optimised model onnxruntime saved (`model.onnx`, `model.onnx.data`) and
  `stamp.json`, which records the key and each file's identity when it was written. `key`
  hashes the weights' digest, the onnxruntime version and the recipe (the source of the
  code that builds and runs the graph), so any change to one of them is a miss. A folder
  whose files no longer have the identities its stamp records (damaged, cut short,
  replaced) is a miss, and so is a file onnxruntime cannot read: the model is then built
  from the weights and saved anew.
- Written to a temporary folder first and renamed into place, so a reader never sees half
  a model; a folder that cannot be written leaves the cache out. Saving a model removes
  the embedder's other saved models (a new onnxruntime or new weights leave the old ones
  unused). Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from contextpipe import cache_dir

#: 2: a digest is recorded only for weights that matched their installer's hash.
_FORMAT = 2
#: The file onnxruntime writes the optimised graph to; the weights go to this + ".data".
MODEL_FILE = "model.onnx"
_STAMP = "stamp.json"

Identity = list[int]


def _identity(path: Path) -> Identity | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev]


def _sha256(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


def source_digest(files: Sequence[Path]) -> str:
    """A hash of the given source files (the recipe a saved model depends on)."""
    return _sha256(*(path.read_bytes() for path in files))


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as out:
        temporary = Path(out.name)
        try:
            out.write(data)
            out.close()
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)


class ModelCache:
    """The cached digest and saved models of one embedder's weights file."""

    def __init__(self, embedder: str, weights: Path) -> None:
        self._root = cache_dir() / "models" / embedder
        self._weights = weights
        self._identity = _identity(weights)
        self._digest_file = self._root / f"weights-{_sha256(str(weights.absolute()))[:16]}.json"

    def digest(self) -> str | None:
        """The recorded digest of the weights, if recorded for the file as it is now."""
        recorded = _read_json(self._digest_file)
        if self._identity is None or not isinstance(recorded, dict):
            return None
        digest = cast("dict[str, object]", recorded).get("digest")
        if not isinstance(digest, str) or recorded != self._digest_entry(digest):
            return None
        return digest

    def record_digest(self, digest: str) -> None:
        """Keep `digest` (read from the weights just now) for the next process."""
        if self._identity is None:
            return
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            _write_atomically(self._digest_file, json.dumps(self._digest_entry(digest)).encode())
        except OSError:
            return

    def _digest_entry(self, digest: str) -> dict[str, object]:
        path = str(self._weights.absolute())
        return {"format": _FORMAT, "path": path, "identity": self._identity, "digest": digest}

    def saved(self, key: str) -> Path | None:
        """The saved model of `key` (its `model.onnx`) when its stamp verifies."""
        folder = self._folder(key)
        stamp = _read_json(folder / _STAMP)
        if stamp != self._stamp(folder, key):
            return None
        return folder / MODEL_FILE

    @contextmanager
    def saving(self, key: str) -> Generator[Path | None]:
        """A path to save the model of `key` to (None: the cache cannot be written); what
        is saved there by the end of the block becomes the saved model of `key`.
        """
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            temporary = Path(tempfile.mkdtemp(dir=self._root, prefix=".saving-"))
        except OSError:
            yield None
            return
        try:
            yield temporary / MODEL_FILE
            self._publish(temporary, key)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)

    def _publish(self, temporary: Path, key: str) -> None:
        stamp = self._stamp(temporary, key)
        if None in cast("dict[str, object]", stamp["files"]).values():
            return  # onnxruntime saved nothing (or not all of it)
        try:
            _write_atomically(temporary / _STAMP, json.dumps(stamp).encode())
            folder = self._folder(key)
            shutil.rmtree(folder, ignore_errors=True)
            temporary.rename(folder)
        except OSError:
            return  # another process saved it first, or the folder cannot be written
        for other in self._root.iterdir():
            if other.is_dir() and other != folder and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)

    def _folder(self, key: str) -> Path:
        return self._root / key[:32]

    @staticmethod
    def _stamp(folder: Path, key: str) -> dict[str, object]:
        files = (MODEL_FILE, f"{MODEL_FILE}.data")
        return {"format": _FORMAT, "key": key, "files": {n: _identity(folder / n) for n in files}}


def model_key(digest: str, runtime_version: str, recipe: str) -> str:
    """The key of the model built from weights of `digest` by `recipe` on that runtime."""
    return _sha256(str(_FORMAT), digest, runtime_version, recipe)
