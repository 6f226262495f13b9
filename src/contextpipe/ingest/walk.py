"""Find the files under a folder that should be indexed, honouring .gitignore files."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Version-control internals are never content, whatever .gitignore says.
_ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class SourceFile:
    """A regular file found by the walk."""

    path: Path
    relpath: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class _Ignore:
    base: Path
    spec: pathspec.GitIgnoreSpec

    def matches(self, path: Path, is_dir: bool) -> bool:
        relative = path.relative_to(self.base).as_posix()
        return self.spec.match_file(f"{relative}/" if is_dir else relative)


def _load_gitignore(directory: Path) -> _Ignore | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    return _Ignore(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def walk_files(
    root: Path, relative_to: Path, exclude: Sequence[str] = (), skip_dirs: Sequence[Path] = ()
) -> Iterator[SourceFile]:
    """Regular files under `root` in sorted order, skipping ignored files and `skip_dirs`.

    `relpath` is relative to `relative_to` with '/' separators, so the same file has the same
    name whichever sub-folder was indexed.
    """
    root = root.resolve()
    skipped = {p.resolve() for p in skip_dirs}
    extra = _Ignore(root, pathspec.GitIgnoreSpec.from_lines(exclude)) if exclude else None
    ignores: dict[Path, list[_Ignore]] = {}

    def inherited(directory: Path) -> list[_Ignore]:
        if directory in ignores:
            return ignores[directory]
        parent = ignores.get(directory.parent, [extra] if extra else [])
        own = _load_gitignore(directory)
        ignores[directory] = [*parent, own] if own else parent
        return ignores[directory]

    # A sub-folder of the project still obeys the .gitignore files above it.
    base = relative_to.resolve()
    if root.is_relative_to(base):
        for ancestor in reversed(root.parents):
            if ancestor.is_relative_to(base):
                inherited(ancestor)

    for dirpath, dirnames, filenames in os.walk(root):
        directory = Path(dirpath)
        active = inherited(directory)
        kept: list[str] = []
        for name in sorted(dirnames):
            child = directory / name
            if name in _ALWAYS_SKIPPED_DIRS or child in skipped or child.is_symlink():
                continue
            if any(rule.matches(child, is_dir=True) for rule in active):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            path = directory / name
            if path.is_symlink() or not path.is_file():
                continue
            if any(rule.matches(path, is_dir=False) for rule in active):
                continue
            stat = path.stat()
            yield SourceFile(
                path=path,
                relpath=_relative(path, relative_to),
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
            )


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
