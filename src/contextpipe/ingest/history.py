"""When each file last changed, from git when the folder is in a repository.

One `git log` pass gives every file's last commit time and hash (per-file calls cost
~15 ms each). Files with uncommitted changes, or outside any repository, fall back to
their modification time; the caller then records the content hash instead of a commit.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


@dataclass(frozen=True)
class Revision:
    """The last commit that touched a file."""

    committed_at: datetime
    commit: str


def _git(root: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(root), *args], capture_output=True, check=False, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def git_revisions(root: Path, project_dir: Path) -> dict[str, Revision]:
    """Last commit of every clean, committed file under `root`, keyed by its path relative
    to `project_dir`; empty when `root` is not in a git work tree.
    """
    top = _git(root, "rev-parse", "--show-toplevel")
    if not top:
        return {}
    toplevel = Path(top.strip()).resolve()
    log = _git(root, "log", "--format=%x01%ct %H", "--name-only", "--no-renames", "-z", "--", ".")
    status = _git(root, "status", "--porcelain", "-z", "--untracked-files=no", "--", ".")
    if log is None:
        return {}
    dirty = {entry[3:] for entry in (status or "").split("\0") if len(entry) > 3}
    revisions: dict[str, Revision] = {}
    current: Revision | None = None
    for field in log.split("\0"):
        field = field.strip("\n")
        if field.startswith("\x01"):
            stamp, commit = field[1:].split(" ", 1)
            current = Revision(datetime.fromtimestamp(int(stamp), UTC), commit.strip())
            continue
        # Newest first: the first commit seen for a path is its last change.
        if field and current is not None and field not in revisions and field not in dirty:
            revisions[field] = current
    project = project_dir.resolve()
    keyed: dict[str, Revision] = {}
    for path, revision in revisions.items():
        absolute = toplevel / path
        try:
            keyed[absolute.relative_to(project).as_posix()] = revision
        except ValueError:
            keyed[absolute.as_posix()] = revision
    return keyed
