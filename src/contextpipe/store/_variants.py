"""A reader thread's memory of node variants, valid until some connection commits.

Packing asks for the same nodes request after request; the answers stay valid until an
index run commits, which changes SQLite's `data_version` for every other connection. Each
thread keeps its own table (readers are per thread), at most `LIMIT` nodes, oldest out.
"""

from __future__ import annotations

from collections.abc import Callable

from ..models import ContextFragment

LIMIT = 4_096


class VariantsMemo:
    """One thread's variants by node URI, for one `data_version` of its connection."""

    def __init__(self) -> None:
        self._version: object = None
        self._found: dict[str, list[ContextFragment]] = {}

    def get(
        self, uko_uri: str, version: object, read: Callable[[str], list[ContextFragment]]
    ) -> list[ContextFragment]:
        """The node's variants: remembered at this `version`, else `read` and remembered."""
        if version != self._version:
            self._found, self._version = {}, version
        found = self._found.get(uko_uri)
        if found is None:
            if len(self._found) >= LIMIT:
                del self._found[next(iter(self._found))]
            found = self._found[uko_uri] = read(uko_uri)
        return list(found)
