"""`DroppedList`, the type of `AssembledContext.dropped`: speed machinery for a plain value.

Hundreds of candidates can be left out of one assembly, and most callers never read why.
So the pipeline records each as a row of three strings (`DroppedRow`), and the list builds
its `DroppedFragment` entries only when it is first read, all in one validation call.
Rules: it reads as a tuple of `DroppedFragment` (`len` builds none), compares equal to
one, and validates and serialises as a list of them, so no caller can tell it from one.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, TypeAdapter
from pydantic_core import core_schema


class DroppedFragment(BaseModel):
    """A candidate that was proposed but left out of the context, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    uko_uri: str
    reason: str


#: A dropped candidate as the pipeline records it: fragment id, node URI, reason.
DroppedRow = tuple[str, str, str]


@functools.cache
def _adapter() -> TypeAdapter[tuple[DroppedFragment, ...]]:
    return TypeAdapter(tuple[DroppedFragment, ...])


class DroppedList(Sequence[DroppedFragment]):
    """A tuple of `DroppedFragment` to every reader, kept as rows until first read."""

    __slots__ = ("_entries", "_rows")

    def __init__(self, rows: Iterable[DroppedRow] = ()) -> None:
        self._rows: tuple[DroppedRow, ...] = tuple(rows)
        self._entries: tuple[DroppedFragment, ...] | None = None

    @classmethod
    def of(cls, entries: Iterable[DroppedFragment]) -> DroppedList:
        """A list of these entries."""
        return cls((entry.id, entry.uko_uri, entry.reason) for entry in entries)

    def entries(self) -> tuple[DroppedFragment, ...]:
        """Every entry, built (once) in one validation call."""
        if self._entries is None:
            self._entries = _adapter().validate_python(
                [{"id": id_, "uko_uri": uri, "reason": why} for id_, uri, why in self._rows]
            )
        return self._entries

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> DroppedFragment: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[DroppedFragment, ...]: ...

    def __getitem__(self, index: int | slice) -> DroppedFragment | tuple[DroppedFragment, ...]:
        return self.entries()[index]

    def __iter__(self) -> Iterator[DroppedFragment]:
        return iter(self.entries())

    def __add__(self, other: DroppedList) -> DroppedList:
        return DroppedList(self._rows + other._rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DroppedList):
            return self._rows == other._rows
        if isinstance(other, tuple):
            return self.entries() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._rows)

    def __repr__(self) -> str:
        return f"DroppedList({list(self.entries())!r})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        entries = handler.generate_schema(tuple[DroppedFragment, ...])
        from_entries = core_schema.no_info_after_validator_function(cls.of, entries)
        return core_schema.json_or_python_schema(
            json_schema=from_entries,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_entries]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                cls.entries, return_schema=entries
            ),
        )
