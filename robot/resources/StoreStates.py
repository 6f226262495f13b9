"""Robot keywords that look inside stores and at processes, for the crash-safety suite.

A file's state in a store is everything the store holds for it: its row in `files` (size
aside: the content hash or skip marker, and the tokenizer), its nodes, its declared edges,
its fragments (id and content hash) and how many full-text entries they have.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

FileState = tuple[Any, ...]


def file_states(store: str) -> dict[str, FileState]:
    """Every file's state in the store folder `store`, by stored path."""
    parts: defaultdict[str, list[Any]] = defaultdict(lambda: [None, [], [], [], 0])
    database = Path(store) / "index.sqlite3"
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        for path, digest, tokenizer in connection.execute(
            "SELECT path, sha256, tokenizer FROM files"
        ):
            parts[path][0] = (digest, tokenizer)
        for path, uri in connection.execute("SELECT path, uri FROM nodes"):
            parts[path][1].append(uri)
        for path, source, kind, target in connection.execute(
            "SELECT path, sources, type, target FROM edges"
        ):
            parts[path][2].append((source, kind, target))
        for path, id_, digest in connection.execute("SELECT path, id, content_hash FROM fragments"):
            parts[path][3].append((id_, digest))
        for path, count in connection.execute(
            "SELECT fragments.path, count(*) FROM fts"
            " JOIN fragments ON fragments.rowid = fts.rowid GROUP BY fragments.path"
        ):
            parts[path][4] = count
        (orphans,) = connection.execute(
            "SELECT count(*) FROM fts WHERE rowid NOT IN (SELECT rowid FROM fragments)"
        ).fetchone()
    if orphans:
        raise AssertionError(f"{store}: {orphans} full-text entries belong to no fragment")
    return {
        path: (row, tuple(sorted(nodes)), tuple(sorted(edges)), tuple(sorted(frags)), fts)
        for path, (row, nodes, edges, frags, fts) in parts.items()
    }


def files_should_be_at_old_or_new_state(store: str, old: str, new: str) -> dict[str, int]:
    """Fail unless every file in `store` (or missing from it) is exactly as in the store
    `old` or as in the store `new`. Returns how many files are at the old state only
    (`old`), the new state only (`new`), either (`same`), and how many of the old-only ones
    are text files the new state indexes (`pending_text`) or files it no longer has
    (`pending_removal`): the work a run from here still has to do.
    """
    found, before, after = file_states(store), file_states(old), file_states(new)
    counts = {"old": 0, "new": 0, "same": 0, "pending_text": 0, "pending_removal": 0}
    broken: list[str] = []
    for path in sorted(set(found) | set(before) | set(after)):
        state = found.get(path)
        at_old, at_new = state == before.get(path), state == after.get(path)
        if at_old and at_new:
            counts["same"] += 1
        elif at_old:
            counts["old"] += 1
            target = after.get(path)
            if target is None:
                counts["pending_removal"] += 1
            elif target[3]:
                counts["pending_text"] += 1
        elif at_new:
            counts["new"] += 1
        else:
            broken.append(path)
    if broken:
        raise AssertionError(f"{len(broken)} files at neither state, e.g. {broken[:5]}")
    return counts


def processes_in_group(group: int) -> list[str]:
    """The live processes (zombies aside) of process group `group`, as `ps` lists them."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,pgid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    return [
        line.strip()
        for line in listing.splitlines()
        if int(line.split()[1]) == group and not line.split()[2].startswith("Z")
    ]
