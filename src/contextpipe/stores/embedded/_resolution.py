"""The embedded store keeps its graph resolved: each row of `edges` holds in `resolved`
the node URI its target resolves to ('' for none; NULL until resolved), so that a process
reading the graph reads the answer instead of resolving hundreds of thousands of targets.

A write session resolves, before its last commit, only what its changes can have
changed (what a target resolves to depends on every file's root node and on the
definitions of the name it uses; see `contextpipe.stores.graph`):

1. Every group written since the last resolution (`resolved` is NULL).
2. Every group naming a definition (`symbol`, `local`, `member`) whose name a file defined
   before or after a change (the names are noted in `graph_changes` as files are removed
   and written).
3. When the set of files changed (their root nodes), every group with a file target
   (`member` groups too: their module is a file), and then every `symbol` and `local`
   group of a file whose imports now resolve differently.

The session then records the generation it resolved (`resolved_at`) and the set of files
it resolved against (`resolved_roots`). A reader uses the stored targets only when
`resolved_at` is the generation it reads; otherwise (a run still going, or one that was
killed) it resolves everything itself. A resolution by these rules equals one of
everything: a property test holds it to that.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ...contract.records import DeclaredEdges, EdgeTarget, NodeRecord, TargetForm
from ..graph import ResolvedEdges, resolve_targets

#: An edge target's alternative names, one per line in the `target` column.
NAMES_SEPARATOR = "\n"
#: The sources of a row of `edges`, sorted, between unit separators (a URI holds a path,
#: and a path may hold a line break).
SOURCES_SEPARATOR = "\x1f"
_FORMS = {form.value: form for form in TargetForm}
#: Targets resolved with the files the source file imports.
_WITH_IMPORTS = (TargetForm.SYMBOL, TargetForm.LOCAL)
#: Targets naming a definition (rule 2).
_NAMED = (*_WITH_IMPORTS, TargetForm.MEMBER)
#: Targets that depend on the set of files (rule 3).
_FILE_FORMS = tuple(f.value for f in TargetForm if f not in (*_WITH_IMPORTS, TargetForm.NODE))


def _form_in(forms: Iterable[TargetForm]) -> str:
    """The SQL condition that selects the groups of these forms."""
    return f"form IN ({', '.join(repr(form.value) for form in forms)})"


_NAMED_SQL = _form_in(_NAMED)

#: Layout 10: the stored targets, the names a change touched, and what finds them.
LAYOUT_10 = f"""
CREATE TABLE IF NOT EXISTS graph_changes (name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nodes_by_definition ON nodes(defines) WHERE defines IS NOT NULL;
CREATE INDEX IF NOT EXISTS file_nodes ON nodes(path, start_line, uri) WHERE parent IS NULL;
CREATE INDEX IF NOT EXISTS edges_by_name ON edges(target) WHERE {_NAMED_SQL};
CREATE INDEX IF NOT EXISTS edges_unresolved ON edges(path) WHERE resolved IS NULL;
"""

#: The columns of `edges` a `DeclaredEdges` is read from, and of `nodes` a `NodeRecord`.
DECLARED_COLUMNS = "sources, type, form, target, near, path"
NODE_COLUMNS = "uri, kind, name, path, start_line, end_line, parent"
_NODE_ORDER = "ORDER BY path, start_line, uri"


def declared_edges(rows: Iterable[tuple[str, str, str, str, str, str]]) -> list[DeclaredEdges]:
    """Rows of `edges` (`sources, type, form, target, near, path`) as declared groups."""
    # A large store holds hundreds of thousands: look forms up rather than parse them.
    forms, names_separator, sources_separator = _FORMS, NAMES_SEPARATOR, SOURCES_SEPARATOR
    return [
        DeclaredEdges(
            tuple(sources.split(sources_separator)),
            kind,
            EdgeTarget(
                forms[form],
                tuple(target.split(names_separator)) if names_separator in target else (target,),
                near,
            ),
            path,
        )
        for sources, kind, form, target, near, path in rows
    ]


def stored_resolution(connection: sqlite3.Connection) -> list[ResolvedEdges] | None:
    """The resolved groups as the last resolution stored them, or None when they do not
    describe the store as it is (read inside one snapshot of it).
    """
    row = connection.execute(
        "SELECT (SELECT value FROM meta WHERE key = 'resolved_at'),"
        " (SELECT value FROM meta WHERE key = 'generation')"
    ).fetchone()
    if row is None or row[0] is None or row[0] != row[1]:
        return None
    separator = SOURCES_SEPARATOR
    return [
        ResolvedEdges(tuple(sources.split(separator)), kind, target, path)
        for sources, kind, target, path in connection.execute(
            "SELECT sources, type, resolved, path FROM edges WHERE resolved != ''"
        )
    ]


def note_definitions(connection: sqlite3.Connection, path: str) -> None:
    """Note the names `path` defines now: groups that use them resolve again (rule 2)."""
    connection.execute(
        "INSERT OR IGNORE INTO graph_changes(name)"
        " SELECT defines FROM nodes WHERE path = ? AND defines IS NOT NULL",
        (path,),
    )


def resolve_changes(connection: sqlite3.Connection) -> None:
    """Resolve what changed since the last resolution (see the module docstring), inside
    the caller's transaction.
    """
    meta = dict(
        connection.execute(
            "SELECT key, value FROM meta"
            " WHERE key IN ('generation', 'resolved_at', 'resolved_roots')"
        ).fetchall()
    )
    if meta.get("resolved_at") == meta.get("generation"):
        return
    roots = [
        NodeRecord._make(row)
        for row in connection.execute(
            f"SELECT {NODE_COLUMNS} FROM nodes WHERE parent IS NULL {_NODE_ORDER}"
        )
    ]
    roots_key = hashlib.sha256(
        json.dumps([(root.path, root.uri) for root in roots]).encode()
    ).hexdigest()
    names = [str(name) for (name,) in connection.execute("SELECT name FROM graph_changes")]
    groups = _groups(connection, "resolved IS NULL")  # rule 1
    groups.update(
        _groups(connection, f"{_NAMED_SQL} AND target IN (SELECT value FROM json_each(?))", names)
    )  # rule 2
    if roots_key != meta.get("resolved_roots"):  # rule 3
        groups.update(_refiled(connection, roots))
    importing = sorted({g.path for g in groups.values() if g.target.form in _WITH_IMPORTS})
    imports = _groups(
        connection,
        "type = 'imports' AND path IN (SELECT value FROM json_each(?))",
        importing,
    )
    context = [group for rowid, group in imports.items() if rowid not in groups]
    used = sorted({g.target.names[0] for g in groups.values() if g.target.form in _NAMED})
    definitions = [
        NodeRecord._make(row)
        for row in connection.execute(
            f"SELECT {NODE_COLUMNS} FROM nodes WHERE defines IN (SELECT value FROM json_each(?))"
            f" {_NODE_ORDER}",
            (json.dumps(used),),
        )
    ]
    targets = resolve_targets([*roots, *definitions], [*groups.values(), *context])
    connection.executemany(
        "UPDATE edges SET resolved = ? WHERE rowid = ?",
        [
            (target or "", rowid)
            for rowid, target in zip(groups, targets[: len(groups)], strict=True)
        ],
    )
    connection.execute("DELETE FROM graph_changes")
    connection.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [("resolved_at", meta.get("generation", "0")), ("resolved_roots", roots_key)],
    )


def _groups(
    connection: sqlite3.Connection, where: str, values: Sequence[str] | None = None
) -> dict[int, DeclaredEdges]:
    """The declared groups `where` selects, by row id, in row order."""
    params = () if values is None else (json.dumps(list(values)),)
    rows = connection.execute(
        f"SELECT rowid, {DECLARED_COLUMNS} FROM edges WHERE {where} ORDER BY rowid", params
    ).fetchall()
    return _by_rowid(rows, 1)


def _by_rowid(rows: Sequence[Sequence[Any]], start: int) -> dict[int, DeclaredEdges]:
    """Rows of a row id and, from `start` on, the declared columns, as groups by row id."""
    groups = declared_edges(tuple(row[start:]) for row in rows)
    return dict(zip((int(row[0]) for row in rows), groups, strict=True))


def _refiled(connection: sqlite3.Connection, roots: list[NodeRecord]) -> dict[int, DeclaredEdges]:
    """Rule 3: the groups with a file target, and the `symbol` and `local` groups of every
    file whose imports resolve differently against `roots` than they did.
    """
    placeholders = ", ".join("?" * len(_FILE_FORMS))
    rows = connection.execute(
        f"SELECT rowid, resolved, {DECLARED_COLUMNS} FROM edges WHERE form IN ({placeholders})"
        " ORDER BY rowid",
        _FILE_FORMS,
    ).fetchall()
    filed = _by_rowid(rows, 2)
    before: defaultdict[str, set[str]] = defaultdict(set)
    after: defaultdict[str, set[str]] = defaultdict(set)
    targets = resolve_targets(roots, list(filed.values()))
    for row, group, target in zip(rows, filed.values(), targets, strict=True):
        if group.type == "imports":
            before[group.path].add(row[1] or "")
            after[group.path].add(target or "")
    moved = sorted(path for path in {*before, *after} if before[path] != after[path])
    filed.update(
        _groups(
            connection,
            f"{_form_in(_WITH_IMPORTS)} AND path IN (SELECT value FROM json_each(?))",
            moved,
        )
    )
    return filed
