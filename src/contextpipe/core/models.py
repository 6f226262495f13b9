"""The values that flow through the pipeline: requests, fragments, candidates and results.

Values are frozen pydantic models so that a strategy cannot change a fragment another
strategy (or the store's cache) also holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    field_validator,
    model_validator,
)

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
    echo: bool = Field(
        default=False,
        description="Its place only repeats a text or vector search that other strategies"
        " run too (tiered's cold tier): fusion counts it only for an item no other"
        " strategy proposed in its own right.",
    )


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


def _utc(moment: datetime) -> datetime:
    """A time comparable with any other: a naive one is taken as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def in_utc_range(moment: datetime) -> datetime:
    """`moment`, checked to be a time of years 1-9999 in UTC, as the store keeps times
    (9999-12-31T23:00-05:00 is not: every comparison with it overflowed).
    """
    try:
        _utc(moment).astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{moment.isoformat()} is outside years 1-9999 in UTC") from None
    return moment


#: A time of a request's filters or scope (see `in_utc_range`).
Moment = Annotated[datetime, AfterValidator(in_utc_range)]


class RequestFilters(BaseModel):
    """Restrictions on which fragments may be proposed."""

    model_config = _FROZEN

    paths: tuple[str, ...] = Field(default=(), description="Glob patterns over source paths.")
    kinds: tuple[str, ...] = Field(default=(), description="Allowed source kinds.")
    session: str | None = Field(
        default=None,
        description="Memory of this session may be proposed (global memory always may).",
    )
    user: str | None = Field(
        default=None,
        description="Memory of this user may be proposed (global memory always may).",
    )
    as_of: Moment | None = Field(
        default=None,
        description="Only what was modified (or said) at or before this time may be proposed.",
    )


class RequestScope(BaseModel):
    """Who a request serves, and so whose memory its reads may see: files and global
    memory always; one session's memory when it names that session, one user's when it
    names that user; and, with `as_of`, only what was there at that time. The pipeline
    fixes it when it opens the request's read views (`Store.backends`); the store applies
    it to every read, and a strategy's filters can only narrow it (`narrow`).
    """

    model_config = _FROZEN

    session: str | None = None
    user: str | None = None
    as_of: Moment | None = None

    def narrow(self, filters: RequestFilters | None) -> RequestFilters:
        """`filters` within this scope: a session or user they name stays only when it is
        this scope's own, any other is dropped (its memory is not seen); their `as_of`
        only when it is earlier than the scope's; None is the scope's own filters.
        """
        if filters is None:
            return RequestFilters(session=self.session, user=self.user, as_of=self.as_of)
        session = filters.session if filters.session == self.session else None
        user = filters.user if filters.user == self.user else None
        as_of = self.as_of
        if filters.as_of is not None and (as_of is None or _utc(filters.as_of) < _utc(as_of)):
            as_of = filters.as_of
        if (session, user, as_of) == (filters.session, filters.user, filters.as_of):
            return filters
        return filters.model_copy(update={"session": session, "user": user, "as_of": as_of})


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
    session: str | None = Field(
        default=None,
        min_length=1,
        description="Who asks: the session whose memory and recent use the request may see.",
    )
    user: str | None = Field(
        default=None, min_length=1, description="Who asks: the user whose memory it may see."
    )
    as_of: Moment | None = Field(
        default=None,
        description="Reference time (now when None): what was modified or said later is "
        "left out of every read of the request, so that results are reproducible.",
    )

    @model_validator(mode="before")
    @classmethod
    def _scope_in_filters(cls, data: Any) -> Any:
        """A request's session, user and `as_of` travel in its filters too, which every
        strategy passes on to the store.
        """
        if not isinstance(data, Mapping):
            return data
        fields = dict(cast(Mapping[str, Any], data))
        raw = fields.get("filters")
        if raw is not None and not isinstance(raw, RequestFilters | Mapping):
            return fields  # not filters at all: field validation names it
        filters: dict[str, Any] = (
            raw.model_dump()
            if isinstance(raw, RequestFilters)
            else dict(cast(Mapping[str, Any], raw or {}))
        )
        for key in ("session", "user", "as_of"):
            mine, theirs = fields.get(key), filters.get(key)
            if mine is not None and theirs is not None and _differ(key, mine, theirs):
                raise ValueError(f"{key} {mine!r} differs from filters.{key} {theirs!r}")
            fields[key] = filters[key] = mine if mine is not None else theirs
        fields["filters"] = filters
        return fields

    exclude: tuple[str, ...] = Field(
        default=(),
        description="Fragment ids to leave out: what the caller was given already (an"
        " earlier page).",
    )
    mmr_lambda: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Packing's MMR trade-off for this request (1 = relevance only, 0 ="
        " diversity only); default `[packing] mmr_lambda`.",
    )
    prefer_source: bool = Field(
        default=False,
        description=(
            "A code question: strategies that honour it rank source files before tests, "
            "docs, changelogs and CI files (`source_role`)."
        ),
    )

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain some text")
        return value

    @property
    def scope(self) -> RequestScope:
        """Who asks, and as of when: the scope the store holds every read of this request
        to.
        """
        return RequestScope(session=self.session, user=self.user, as_of=self.as_of)


def _differ(key: str, mine: object, theirs: object) -> bool:
    """Whether a request's own value and its filters' differ (times compared as times)."""
    if key != "as_of":
        return mine != theirs
    return _utc(_TIME.validate_python(mine)) != _utc(_TIME.validate_python(theirs))


_TIME = TypeAdapter(datetime)

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


#: A dropped candidate as the pipeline records it: fragment id, node URI, reason.
DroppedRow = tuple[str, str, str]


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
    dropped: tuple[DroppedFragment, ...]
    elapsed_ms: float
    timings_ms: Annotated[dict[str, float], Field(default_factory=dict[str, float])]

    def to_json(self) -> str:
        """The serialised form `--format json` prints."""
        return self.model_dump_json(indent=2)


def json_schema() -> dict[str, Any]:
    """The JSON schema of `AssembledContext`, as published in docs/."""
    return AssembledContext.model_json_schema()
