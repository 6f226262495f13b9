"""The names the store keeps for files, and which of them a root covers.

A file inside the project folder is stored under its path relative to the project
(`docs/guide.md`); a file outside it under its absolute path (`/elsewhere/a/x.py`), both
with '/' separators. A root (a folder or one file given to `index` or `forget`) covers the
stored names of the files at or under it, whichever of the two forms they have: the project
folder covers every relative name and no absolute one, `/elsewhere` covers
`/elsewhere/a/x.py`, and a folder containing the project also covers its relative names.
"""

from __future__ import annotations

from pathlib import Path


def stored_name(path: Path, project_dir: Path) -> str:
    """The name under which the store keeps `path` (both paths resolved)."""
    try:
        return path.relative_to(project_dir).as_posix()
    except ValueError:
        return path.as_posix()


class RootCover:
    """Decides which stored names lie at or under `root`."""

    def __init__(self, root: Path, project_dir: Path) -> None:
        self._root = root.resolve().as_posix().rstrip("/")
        self._project = project_dir.resolve().as_posix().rstrip("/")

    def __contains__(self, name: str) -> bool:
        # Stored names use '/' separators: absolute ones start with '/' (or 'C:/').
        absolute = name if name.startswith("/") or name[1:3] == ":/" else f"{self._project}/{name}"
        return absolute == self._root or absolute.startswith(f"{self._root}/")
