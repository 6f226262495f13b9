"""Indexed projects for the report scripts, built once into a work folder and reused.

A project is `WORKDIR/NAME/` (its files and its `.contextpipe/` store) plus `WORKDIR/NAME.json`,
the record of a build that finished (timings and counts). The record lies outside the
project, so it is never indexed. A project without its record (an interrupted build) is
deleted and built again, as is every project when `rebuild` is set: a store written by
another version of contextpipe may not be readable by this one.

Also here: the trees copied from installed packages (`copy_packages`), which the fill
report and its asv benchmarks index.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextpipe import Pipeline

Stats = dict[str, Any]


def cached_project(
    workdir: Path, name: str, build: Callable[[Path], Stats], rebuild: bool = False
) -> tuple[Path, Stats, bool]:
    """`WORKDIR/NAME`, built by `build(root)` unless a finished build is there; returns the
    root, the build's record and whether it was reused.
    """
    root = workdir / name
    record = workdir / f"{name}.json"
    if record.is_file() and root.is_dir() and not rebuild:
        return root, json.loads(record.read_text(encoding="utf-8")), True
    record.unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    stats = build(root)
    record.write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return root, stats, False


@contextmanager
def work_folder(given: Path | None, prefix: str) -> Iterator[Path]:
    """`given` (created if missing, kept afterwards), else a temporary folder that is
    deleted when the block ends.
    """
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given
        return
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def scratch_folder(prefix: str) -> Path:
    """A new folder for asv's `setup_cache`: inside the working directory when that is a
    temporary folder (asv runs setup_cache in its own cache folder and deletes it after the
    run), else a new temporary folder; never inside the repository.
    """
    cwd = Path.cwd().resolve()
    inside_temp = cwd.is_relative_to(Path(tempfile.gettempdir()).resolve())
    return Path(tempfile.mkdtemp(prefix=prefix, dir=cwd if inside_temp else None))


def json_memo(path: Path, compute: Callable[[], Stats]) -> Stats:
    """`compute()` once: its result is kept as JSON at `path` and read back afterwards."""
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    result = compute()
    path.write_text(json.dumps(result), encoding="utf-8")
    return result


def package_folder(name: str) -> Path:
    """The source folder of an installed package."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{name} is not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def copy_packages(dest: Path, packages: Sequence[str]) -> dict[str, str]:
    """Copy each installed package's source folder to `dest/<package>` (without compiled
    files); return the copied versions, so that a report says what it measured.
    """
    versions: dict[str, str] = {}
    for name in packages:
        shutil.copytree(
            package_folder(name),
            dest / name,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"),
        )
        versions[name] = importlib.metadata.version(name)
    return versions


def index_project(
    root: Path, paths: Sequence[Path], overrides: dict[str, Any] | None = None
) -> Stats:
    """Index `paths` into `root/.contextpipe` (with settings `overrides`); the time and what
    the store holds.
    """
    pipeline = Pipeline.open(project_dir=root, overrides=overrides)
    try:
        started = time.perf_counter()
        summaries = pipeline.index(paths)
        seconds = time.perf_counter() - started
        return {
            "index_s": round(seconds, 2),
            "files": sum(s.indexed for s in summaries),
            "rows": pipeline.stats().fragments,
            "searchable": pipeline.stats().searchable,
        }
    finally:
        pipeline.close()
