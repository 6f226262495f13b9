"""Fragment rows of the embedded store: the columns read, a row as a `ContextFragment`,
times as stored, and the SQL of a request's filters, memory scope included.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ...core.models import ContextFragment, RequestFilters

FRAGMENT_COLUMNS = (
    "id, uri, depth, path, start_line, end_line, kind, title, language, text, token_count,"
    " content_hash, modified_at, read_at"
)

#: The rows of `memory` a request may not see, given its session and user as parameters
#: (`owner IS NOT NULL` when it names none: then all of that scope are hidden).
HIDDEN_MEMORY = (
    "(memory.scope = 'session' AND memory.owner IS NOT ?"
    " OR memory.scope = 'user' AND memory.owner IS NOT ?)"
)
#: The rows of `fragments` that are not such memory, with the same parameters. A lookup per
#: row by path: reading every hidden path first costs milliseconds once memory grows.
SEEN_FRAGMENTS = (
    f"NOT EXISTS (SELECT 1 FROM memory WHERE memory.path = fragments.path AND {HIDDEN_MEMORY})"
)


def utc(moment: datetime) -> str:
    """How `modified_at` is stored: ISO 8601 in UTC (a naive time is taken as UTC)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat()


#: A clause keeping to the memory scope and time of a request, and its parameters.
ScopeSql = tuple[str, tuple[str | None, ...]]


def scope_sql(filters: RequestFilters | None) -> ScopeSql:
    """The clause over `fragments` that keeps to the memory scope and the time of a
    request's filters (None: no session, no user, any time), with its parameters.
    """
    if filters is None:
        return SEEN_FRAGMENTS, (None, None)
    if filters.as_of is None:
        return SEEN_FRAGMENTS, (filters.session, filters.user)
    return (
        f"fragments.modified_at <= ? AND {SEEN_FRAGMENTS}",
        (utc(filters.as_of), filters.session, filters.user),
    )


def narrows(filters: RequestFilters) -> bool:
    """Whether the filters leave out more than memory and what came after their `as_of`:
    paths or kinds, which only their SQL tells.
    """
    return bool(filters.paths or filters.kinds)


def filter_sql(filters: RequestFilters) -> tuple[str, list[str | None]]:
    """`AND ...` clauses over `fragments` for the paths, kinds, time and memory scope of a
    request, with their parameters.
    """
    clauses: list[str] = []
    params: list[str | None] = []
    if filters.paths:
        clauses.append("(" + " OR ".join("fragments.path GLOB ?" for _ in filters.paths) + ")")
        params.extend(filters.paths)
    if filters.kinds:
        clauses.append("fragments.kind IN (" + ", ".join("?" for _ in filters.kinds) + ")")
        params.extend(filters.kinds)
    scope, scope_params = scope_sql(filters)
    clauses.append(scope)
    params.extend(scope_params)
    return "".join(f" AND {clause}" for clause in clauses), params


def as_fragment(row: Sequence[object]) -> ContextFragment:
    """A row of `FRAGMENT_COLUMNS` as a fragment."""
    (
        id_,
        uri,
        depth,
        path,
        start,
        end,
        kind,
        title,
        language,
        text,
        tokens,
        digest,
        modified,
        read_at,
    ) = row
    # One validation of plain values: a third faster than building the source apart, and
    # searches and walks turn hundreds of rows into fragments per request.
    return ContextFragment.model_validate(
        {
            "id": id_,
            "uko_uri": uri,
            "detail_depth": depth,
            "text": text,
            "token_count": tokens,
            "source": {
                "uri": uri,
                "path": path,
                "start_line": start,
                "end_line": end,
                "kind": kind,
                "modified_at": modified,
            },
            "content_hash": digest,
            "metadata": {"title": title, "language": language, "read_at": read_at},
        }
    )
