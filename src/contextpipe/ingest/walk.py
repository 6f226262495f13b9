"""Find the files under a root that should be indexed, honouring .gitignore files, and the
folders that are not walked at all.

Rules, in order:

- A root that is a file is that file alone (gitignore rules do not apply: it was named).
- A contextpipe store is never walked, wherever it is: a folder holding the store's
  database file (`index.sqlite3`) is one, whatever its name, and so is anything inside it.
- Version-control folders (`.git`, `.hg`, `.svn`, `.bzr`, `.jj`) and virtual environments
  (folders holding `pyvenv.cfg`) below the root are skipped unless the rules say otherwise.
- Folders in `skip_dirs` (the store being written) are passed over silently; symbolic
  links are not followed; gitignore-style patterns (`.gitignore` files and `exclude`) apply.

Every folder skipped for being a store, a virtual environment or version control is
reported (as a `SkippedFolder`), so that a summary can say what was left out and why.

Files change while an index runs. `read_source` reads a walked file only if it is still the
file the walk found, else it says why not (`Unread`), so that the file is skipped and the
run goes on:

- A path that is gone is "vanished during the run"; one that cannot be opened is
  "unreadable" with the system's reason.
- It is opened without waiting (a FIFO put in its place would block the open forever), and
  what was opened must be a regular file: else "not a regular file".
- At most one byte more than the walk's size is read (never all of an endless file), and
  the bytes read and the file's size and modification time afterwards must be what the walk
  saw: else "changed during the run". The next run reads it again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .paths import stored_name

if TYPE_CHECKING:
    import pathspec

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj"})
VENV_MARKER = "pyvenv.cfg"

VANISHED_REASON = "vanished during the run"
NOT_REGULAR_REASON = "not a regular file"
CHANGED_REASON = "changed during the run"
STORE_REASON = "contextpipe store"
VENV_REASON = "virtual environment"
VCS_REASON = "version control"


@dataclass(frozen=True)
class SourceFile:
    """A regular file found by the walk."""

    path: Path
    relpath: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Unread:
    """Why a walked file was not read (see the module rules)."""

    reason: str


@dataclass(frozen=True)
class SkippedFolder:
    """A folder the walk did not enter, and why."""

    relpath: str
    reason: str


@dataclass(frozen=True)
class WalkRules:
    """What the walk leaves out (from `[ingest]`), and the file names that mark a folder as
    a store (`Store.folder_marker`): a store is never walked.
    """

    exclude: Sequence[str] = ()
    skip_virtualenvs: bool = True
    skip_vcs: bool = True
    store_markers: Sequence[str] = ()


@dataclass(frozen=True)
class _Ignore:
    base: Path
    spec: pathspec.GitIgnoreSpec

    def matches(self, path: Path, is_dir: bool) -> bool:
        relative = path.relative_to(self.base).as_posix()
        return self.spec.match_file(f"{relative}/" if is_dir else relative)


def _rules(base: Path, lines: Sequence[str]) -> _Ignore:
    import pathspec  # 30-50 ms to import: only a walk needs it

    return _Ignore(base, pathspec.GitIgnoreSpec.from_lines(lines))


def _load_gitignore(directory: Path) -> _Ignore | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    return _rules(directory, gitignore.read_text(encoding="utf-8", errors="replace").splitlines())


def _store_holding(path: Path, markers: Sequence[str]) -> Path | None:
    """The store folder that is `path` or contains it, if any."""
    for folder in (path, *path.parents):
        if any((folder / marker).is_file() for marker in markers):
            return folder
    return None


def walk(
    root: Path, relative_to: Path, rules: WalkRules, skip_dirs: Sequence[Path] = ()
) -> Iterator[SourceFile | SkippedFolder]:
    """Files under `root` in sorted order, and the folders skipped (see the module rules).

    `relpath` is the name the store keeps (see `paths.stored_name`), so the same file has the
    same name whichever folder was indexed.
    """
    root, base = root.resolve(), relative_to.resolve()
    store = _store_holding(root if root.is_dir() else root.parent, rules.store_markers)
    if store is not None:
        yield SkippedFolder(stored_name(store, base), STORE_REASON)
        return
    if not root.is_dir():
        yield _source(root, base)
        return
    skipped = {p.resolve() for p in skip_dirs}
    extra = _rules(root, rules.exclude) if rules.exclude else None
    ignores: dict[Path, list[_Ignore]] = {}

    def inherited(directory: Path) -> list[_Ignore]:
        if directory in ignores:
            return ignores[directory]
        parent = ignores.get(directory.parent, [extra] if extra else [])
        own = _load_gitignore(directory)
        ignores[directory] = [*parent, own] if own else parent
        return ignores[directory]

    # A sub-folder of the project still obeys the .gitignore files above it.
    if root.is_relative_to(base):
        for ancestor in reversed(root.parents):
            if ancestor.is_relative_to(base):
                inherited(ancestor)

    for dirpath, dirnames, filenames in os.walk(root):
        directory = Path(dirpath)
        if directory != root:
            # The listing is at hand here: no extra system call to recognise a folder.
            reason = _skip_reason(filenames, rules)
            if reason is not None:
                dirnames[:] = []
                yield SkippedFolder(stored_name(directory, base), reason)
                continue
        active = inherited(directory)
        kept: list[str] = []
        for name in sorted(dirnames):
            child = directory / name
            if child in skipped or child.is_symlink():
                continue
            if rules.skip_vcs and name in VCS_DIRS:
                yield SkippedFolder(stored_name(child, base), VCS_REASON)
                continue
            if any(rule.matches(child, is_dir=True) for rule in active):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            path = directory / name
            try:
                info = path.lstat()
            except FileNotFoundError:  # gone since the folder was listed
                continue
            if not stat.S_ISREG(info.st_mode):  # symbolic links, FIFOs, devices, sockets
                continue
            if any(rule.matches(path, is_dir=False) for rule in active):
                continue
            yield _source(path, base, info)


def _skip_reason(filenames: Sequence[str], rules: WalkRules) -> str | None:
    if any(marker in filenames for marker in rules.store_markers):
        return STORE_REASON
    if rules.skip_virtualenvs and VENV_MARKER in filenames:
        return VENV_REASON
    return None


def _source(path: Path, base: Path, info: os.stat_result | None = None) -> SourceFile:
    info = info or path.stat()
    return SourceFile(
        path=path, relpath=stored_name(path, base), size=info.st_size, mtime_ns=info.st_mtime_ns
    )


def read_source(source: SourceFile) -> bytes | Unread:
    """The bytes of a walked file, if it is still the file the walk found (the module rules)."""
    try:
        handle = os.open(source.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Unread(VANISHED_REASON)
    except OSError as exc:
        return Unread(f"unreadable: {exc.strerror or exc}")
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return Unread(NOT_REGULAR_REASON)
        with os.fdopen(handle, "rb", closefd=False) as file:
            data = file.read(source.size + 1)
        after = os.fstat(handle)
    except OSError as exc:
        return Unread(f"unreadable: {exc.strerror or exc}")
    finally:
        os.close(handle)
    if not len(data) == after.st_size == source.size or after.st_mtime_ns != source.mtime_ns:
        return Unread(CHANGED_REASON)
    return data
