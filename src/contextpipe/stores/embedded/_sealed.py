"""Checksums of the files derived from the vectors (speed machinery for `_vector_matrix`
and `_vector_ann`): the saved matrix, its row ids and the approximate index are mapped,
not read through SQLite, so bytes written over them would otherwise be served as
similarities.

Rules:

1. A file is sealed right after it is written: its SHA-256 and its identity (size, mtime,
   ctime in ns, inode, device), kept in the state file that names it.
2. Loading checks the seal. A file that still has the identity it was sealed with has not
   been written since (any write changes its ctime, and a file put in its place has
   another inode: the rule `_model_cache` follows), so its bytes are not hashed again,
   which would cost the first query of every process as much as reading every vector.
   Any other file (copied, restored, written over) is hashed, and used only when the hash
   matches.
3. A file that fails is never used, only built again from the vectors' database, with a
   warning naming it; the full check (`_full_check`) hashes every sealed file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from ...core.logs import logger
from ._vectors import APPROXIMATE_NAME, MATRIX_STATE_NAME

Seal = dict[str, object]


def _identity(path: Path) -> list[int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev]


def _sha256(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


def seal(path: Path) -> Seal:
    """Rule 1, for a file just written (raises OSError when it cannot be read)."""
    digest = _sha256(path)
    if digest is None:
        raise OSError(f"{path}: cannot be read back to seal it")
    return {"sha256": digest, "identity": _identity(path)}


def intact(path: Path, sealed: object, rehash: bool = False) -> bool:
    """Rule 2: whether `path` holds what its seal says (`rehash`: hash it whatever its
    identity); a file that fails is named in a warning (rule 3).
    """
    if isinstance(sealed, dict):
        found = cast("Mapping[str, object]", sealed)
        identity = _identity(path)
        if identity is not None and not rehash and identity == found.get("identity"):
            return True
        if identity is not None and _sha256(path) == found.get("sha256"):
            return True
    logger.warning("saved vectors failed their checksum; built anew", file=str(path))
    return False


def as_mapping(value: object) -> Mapping[str, object]:
    """A state file's JSON as a mapping (empty when it is of another form)."""
    return cast("Mapping[str, object]", value) if isinstance(value, dict) else {}


def seals_of(state: object) -> Mapping[str, object]:
    """The seals a state file holds, by file name (none in a state file of another form)."""
    return as_mapping(as_mapping(state).get("seals"))


def failing(folder: Path) -> list[str]:
    """Rule 3: the sealed files in `folder` whose bytes are not the sealed ones."""
    failed: list[str] = []
    for state_file in (MATRIX_STATE_NAME, APPROXIMATE_NAME):
        try:
            state: object = json.loads((folder / state_file).read_text())
        except (OSError, ValueError):
            continue
        for name, sealed in seals_of(state).items():
            if not intact(folder / name, sealed, rehash=True):
                failed.append(name)
    return failed
