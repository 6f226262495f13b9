"""Fragment rows of the embedded store: the columns read, a row as a `ContextFragment`,
times as stored, and the SQL of a request's filters, memory scope included.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

from ..models import ContextFragment, DetailDepth, RequestFilters, SourceRef

FRAGMENT_COLUMNS = (
    "id, uri, depth, path, start_line, end_line, kind, title, language, text, token_count,"
    " content_hash, modified_at, read_at"
)

#: The stored paths of the memory items a request may not see, given its session and user
#: as parameters (`owner IS NOT NULL` when it names none: then all of that scope are hidden).
HIDDEN_MEMORY = (
    "SELECT path FROM memory WHERE scope = 'session' AND owner IS NOT ?"
    " OR scope = 'user' AND owner IS NOT ?"
)


def utc(moment: datetime) -> str:
    """How `modified_at` is stored: ISO 8601 in UTC (a naive time is taken as UTC)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat()


def filter_sql(filters: RequestFilters) -> tuple[str, list[str | None]]:
    """`AND ...` clauses over `fragments` for the paths, kinds and memory scope of a
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
    clauses.append(f"fragments.path NOT IN ({HIDDEN_MEMORY})")
    params.extend((filters.session, filters.user))
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
    return ContextFragment(
        id=str(id_),
        uko_uri=str(uri),
        detail_depth=cast(DetailDepth, int(str(depth))),
        text=str(text),
        token_count=int(str(tokens)),
        source=SourceRef(
            uri=str(uri),
            path=str(path),
            start_line=int(str(start)),
            end_line=int(str(end)),
            kind=str(kind),
            modified_at=datetime.fromisoformat(str(modified)),
        ),
        content_hash=str(digest),
        metadata={"title": str(title), "language": str(language), "read_at": str(read_at)},
    )
