"""The values that flow through the pipeline: requests, fragments, candidates and results.

Values are frozen pydantic models so that a strategy cannot change a fragment another
strategy (or the store's cache) also holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    TypeAdapter,
    field_validator,
)
from pydantic_core import core_schema

from .formats import OutputFormat

#: Detail depths a node can be rendered at: listing, skeleton, full text.
DetailDepth = Literal[0, 4, 9]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def content_hash(text: str) -> str:
    """The hash used to recognise equal content across strategies and sources."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fragment_id(uko_uri: str, detail_depth: int) -> str:
    """A short, stable id for one node at one depth."""
    return hashlib.sha1(f"{uko_uri}|{detail_depth}".encode()).hexdigest()[:12]


class SourceRef(BaseModel):
    """Where a fragment's text comes from."""

    model_config = _FROZEN

    uri: str = Field(description="UKO URI of the node the text belongs to.")
    path: str = Field(description="Path relative to the indexed root, with '/' separators.")
    start_line: int = Field(ge=1, description="First line, 1-based, inclusive.")
    end_line: int = Field(ge=1, description="Last line, 1-based, inclusive.")
    kind: str = Field(description="Node kind: function, class, section, paragraph, module...")
    modified_at: datetime | None = Field(default=None, description="When the source changed.")


class ContextFragment(BaseModel):
    """One renderable piece of text for one node at one detail depth."""

    model_config = _FROZEN

    id: str
    uko_uri: str
    detail_depth: DetailDepth
    text: str
    token_count: int = Field(ge=0, description="Tokens of `text` under the store's tokenizer.")
    source: SourceRef
    content_hash: str
    metadata: dict[str, str] = Field(default_factory=dict[str, str])


class Candidate(BaseModel):
    """A fragment one strategy proposes, with its own score and reason."""

    model_config = _FROZEN

    fragment: ContextFragment
    score: float = Field(description="The strategy's own score; higher is better.")
    reason: str = Field(description="Why the strategy proposes it, in human words.")


class Provenance(BaseModel):
    """One strategy's vote for a fragment in the result."""

    model_config = _FROZEN

    strategy: str
    plugin: str = Field(description="Distribution and version that registered the strategy.")
    rank: int = Field(ge=1, description="1-based rank in that strategy's own list.")
    score: float
    reason: str


class ResultFragment(ContextFragment):
    """A fragment as it appears in an assembled context: fused score and provenance."""

    score: float = Field(description="Fused (weighted reciprocal-rank) score.")
    provenance: tuple[Provenance, ...]


_RESULT_FRAGMENTS = TypeAdapter(tuple[ResultFragment, ...])


def result_fragments(rows: Iterable[Mapping[str, Any]]) -> tuple[ResultFragment, ...]:
    """Many `ResultFragment`s from field mappings, validated in one call."""
    return _RESULT_FRAGMENTS.validate_python(list(rows))


class ChatMessage(BaseModel):
    """One chat message, for the `messages` output format."""

    model_config = _FROZEN

    role: Literal["system", "user", "assistant"]
    content: str


class StrategySelection(BaseModel):
    """A request's override for one strategy."""

    model_config = _FROZEN

    weight: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class RequestFilters(BaseModel):
    """Restrictions on which fragments may be proposed."""

    model_config = _FROZEN

    paths: tuple[str, ...] = Field(default=(), description="Glob patterns over source paths.")
    kinds: tuple[str, ...] = Field(default=(), description="Allowed source kinds.")


class ContextRequest(BaseModel):
    """What the caller asks for."""

    model_config = _FROZEN

    query: str = Field(min_length=1)
    focus: tuple[str, ...] = Field(default=(), description="URIs, paths or symbol names.")
    budget: int = Field(description="Hard limit on the rendered output, in tokens.")
    tokenizer: str | None = Field(default=None, description="Defaults to the configured one.")
    strategies: dict[str, StrategySelection] | None = Field(
        default=None, description="Subset of strategies to run, with optional weight overrides."
    )
    filters: RequestFilters = Field(default_factory=RequestFilters)
    deadline_ms: int | None = Field(default=None, gt=0)
    output: OutputFormat = OutputFormat.MARKDOWN
    messages: tuple[ChatMessage, ...] = Field(
        default=(), description="Conversation for the `messages` format; defaults to the query."
    )

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain some text")
        return value


StrategyStatus = Literal["ok", "timeout", "skipped", "error"]


class StrategyReport(BaseModel):
    """What one strategy did during one assembly."""

    model_config = _FROZEN

    name: str
    plugin: str
    status: StrategyStatus
    reason: str = ""
    confidence: float = 0.0
    allocated_tokens: int = 0
    used_tokens: int = 0
    proposed: int = 0
    rejected: int = Field(default=0, description="Candidates that broke the contract.")
    accepted: int = 0
    elapsed_ms: float = 0.0


class DroppedFragment(BaseModel):
    """A candidate that was proposed but left out of the context, and why."""

    model_config = _FROZEN

    id: str
    uko_uri: str
    reason: str


_DROPPED_ENTRIES = TypeAdapter(tuple[DroppedFragment, ...])

#: A dropped candidate as the pipeline records it: fragment id, node URI, reason.
DroppedRow = tuple[str, str, str]


class DroppedList(Sequence[DroppedFragment]):
    """`AssembledContext.dropped`: reads as a tuple of `DroppedFragment`, compares equal to
    one, and serialises as a list of them. Hundreds of candidates can be left out of one
    assembly, so each entry is built only when the list is first read (`len` reads none).
    """

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
            self._entries = _DROPPED_ENTRIES.validate_python(
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


class AssembledContext(BaseModel):
    """The result of one assembly: rendered output, fragments with provenance, reports."""

    model_config = _FROZEN

    query: str
    budget: int
    tokens_used: int
    tokenizer: str
    output: OutputFormat
    text: str = Field(description="The rendered context (for `messages`, the system message).")
    messages: tuple[ChatMessage, ...] = ()
    fragments: tuple[ResultFragment, ...]
    strategies: tuple[StrategyReport, ...]
    dropped: DroppedList
    elapsed_ms: float
    timings_ms: Annotated[dict[str, float], Field(default_factory=dict[str, float])]

    def to_json(self) -> str:
        """The serialised form `--format json` prints."""
        return self.model_dump_json(indent=2)


def json_schema() -> dict[str, Any]:
    """The JSON schema of `AssembledContext`, as published in docs/."""
    return AssembledContext.model_json_schema()
