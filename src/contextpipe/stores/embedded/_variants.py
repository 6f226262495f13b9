"""A reader thread's memory of node variants, valid until some connection commits.

Packing asks for the same nodes request after request; the answers stay valid until an
index run commits, which changes SQLite's `data_version` for every other connection. Each
thread keeps its own table (readers are per thread), at most `LIMIT` nodes and scopes,
the oldest forgotten (see `BoundedMemo`). A node's variants are remembered per memory
scope (session and user) and time, since memory of one session is no answer to another's
request.
They are remembered as the rows read, made fragments only when a node's are asked for
(a caller of `variants_many` may read more nodes than it uses): plain tuples of strings
and numbers, which the cyclic collector stops tracking, where a fragment is six objects it
walks at every full collection (thousands of remembered fragments made those take 0.1-0.3 s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from ...core._memo import BoundedMemo
from ...core.models import ContextFragment
from ._rows import ScopeSql, as_fragment

LIMIT = 4_096

#: The memory scope and time a read was made for (`_rows.scope_sql`).
Scope = ScopeSql

#: A row of `FRAGMENT_COLUMNS`.
Row = tuple[object, ...]

#: Reads the variant rows of these nodes in one scope, by URI (a node with none left out).
Read = Callable[[Sequence[str], Scope], dict[str, list[Row]]]


class VariantsMemo:
    """One thread's variants by node URI and scope, for one `data_version` of its
    connection.
    """

    def __init__(self) -> None:
        self._start(None)

    def _start(self, version: object) -> None:
        self._version = version
        self._found = BoundedMemo[tuple[str, Scope], tuple[Row, ...]](LIMIT)

    def get(
        self, uko_uris: Sequence[str], scope: Scope, version: object, read: Read
    ) -> Mapping[str, list[ContextFragment]]:
        """The nodes' variants (a node with none left out): those remembered at this
        `version`, the rest `read` at once and remembered.
        """
        if version != self._version:
            self._start(version)
        rows: dict[str, tuple[Row, ...]] = {}
        missing: list[str] = []
        for uri in uko_uris:
            known = self._found.peek((uri, scope))
            if known is None:
                missing.append(uri)
            elif known:
                rows[uri] = known
        if missing:
            fresh = read(missing, scope)
            for uri in missing:
                variants = tuple(fresh.get(uri, ()))
                self._found.put((uri, scope), variants)
                if variants:
                    rows[uri] = variants
        return _Fragments(rows)


class _Fragments(Mapping[str, list[ContextFragment]]):
    """Variant rows by node URI, made fragments when a node's are first asked for."""

    def __init__(self, rows: dict[str, tuple[Row, ...]]) -> None:
        self._rows = rows
        self._made: dict[str, list[ContextFragment]] = {}

    def __getitem__(self, uko_uri: str) -> list[ContextFragment]:
        made = self._made.get(uko_uri)
        if made is None:
            made = self._made[uko_uri] = [as_fragment(row) for row in self._rows[uko_uri]]
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
