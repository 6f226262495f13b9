"""Chunks a caller already retrieved, in; the ones worth their tokens, out
(`Pipeline.optimize`, `POST /v1/optimize`, `contextpipe optimize`). The rules are in
`assembly.optimizing`.

The request also takes the field names SlimContext users send (`enable_mmr`,
`representative_strategy`, `dedup_threshold`), so that they can switch without rewriting
their calls.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from .formats import OutputFormat

#: A vector: finite numbers only.
Vector = tuple[Annotated[float, Field(allow_inf_nan=False)], ...]

#: The source kind of a caller's chunk, as the packer and renderers see it.
CHUNK_KIND = "chunk"


class Linkage(StrEnum):
    """How far apart two clusters are: their nearest, farthest or average members."""

    SINGLE = "single"
    COMPLETE = "complete"
    AVERAGE = "average"


class Representative(StrEnum):
    """Which chunk speaks for its cluster."""

    AUTO = "auto"  # the most relevant
    CENTROID = "centroid"  # the nearest to the cluster's mean vector
    QUERY = "query"  # the nearest to the query's vector
    LONGEST = "longest"  # the one with the most tokens


class Chunk(BaseModel):
    """One retrieved chunk, as the caller's retriever gave it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    score: float | None = Field(
        default=None, allow_inf_nan=False, description="The retriever's score; higher is better."
    )
    embedding: Vector | None = Field(
        default=None, min_length=1, description="The chunk's vector; embedded here when absent."
    )
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class OptimizeRequest(BaseModel):
    """Chunks to deduplicate, cluster, diversify and pack into a token budget."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Every pair is compared: 1,000 chunks are 500,000 pairs (8 MB of cosines); more are a
    # corpus to index, not an over-fetch to optimise.
    chunks: tuple[Chunk, ...] = Field(min_length=1, max_length=1000)
    query: str | None = Field(default=None, min_length=1)
    query_embedding: Vector | None = Field(default=None, min_length=1)
    namespace: str = Field(
        default="default", min_length=1, description="Exact duplicates are per namespace."
    )
    target_k: int | None = Field(default=None, gt=0, description="Most chunks kept (None: any).")
    token_budget: int = Field(gt=0, description="Hard limit on the rendered output, in tokens.")
    tokenizer: str | None = Field(default=None, description="Defaults to the configured one.")
    semantic_dedup_threshold: float = Field(
        default=0.9, ge=0, le=1, description="Cosine at which two chunks may say the same."
    )
    paraphrase_overlap: float = Field(
        default=0.5,
        ge=0,
        le=1,
        validation_alias=AliasChoices("paraphrase_overlap", "dedup_threshold"),
        description="Share of the smaller set of content words the other text must hold, for"
        " a paraphrase: near vectors alone mean the same topic, not the same claim.",
    )
    # At 0.8 (and MMR at 0.7) recall inside 2,000 tokens fell from 0.83 to 0.70 on SciFact's
    # first 30 queries: abstracts on one subject are that near (benchmarks/optimize_report).
    cluster_threshold: float = Field(
        default=0.9, ge=0, le=1, description="Cosine at which chunks share a topic cluster."
    )
    cluster_linkage: Linkage = Linkage.AVERAGE
    representative: Representative = Field(
        default=Representative.AUTO,
        validation_alias=AliasChoices("representative", "representative_strategy"),
    )
    mmr: bool = Field(default=True, validation_alias=AliasChoices("mmr", "enable_mmr"))
    mmr_lambda: float = Field(
        default=0.9, ge=0, le=1, description="MMR: 1 = relevance only, 0 = diversity only."
    )
    compress: bool = False
    output: OutputFormat = OutputFormat.MARKDOWN

    def problem(self) -> str:
        """What is wrong across the fields ('' when nothing): a repeated id, a vector of
        zeros or of another dimension than the rest; a choice that needs a query without
        one. (A value that is not a finite number is a validation error of its own.)
        """
        asks = self.query is not None or self.query_embedding is not None
        if self.representative is Representative.QUERY and not asks:
            return "representative: query needs a query or a query_embedding"
        if self.output is OutputFormat.MESSAGES and self.query is None:
            return "output: messages needs a query to ask"
        seen: set[str] = set()
        dimension, first = None, ""
        for chunk in self.chunks:
            if chunk.id in seen:
                return f"chunk {chunk.id!r} id: repeats an earlier chunk's; ids must be unique"
            seen.add(chunk.id)
        vectors = [(f"chunk {c.id!r} embedding", c.embedding) for c in self.chunks]
        for where, vector in [*vectors, ("query_embedding", self.query_embedding)]:
            if vector is None:
                continue
            if not any(vector):
                return f"{where}: all zeros, it points nowhere"
            if dimension is None:
                dimension, first = len(vector), where
            elif len(vector) != dimension:
                return f"{where}: {len(vector)} values, but {first} has {dimension}"
        return ""


class Removal(StrEnum):
    """Why a chunk was left out."""

    EXACT_DUPLICATE = "exact_duplicate"
    PARAPHRASE = "paraphrase"
    CLUSTER = "cluster"
    MMR = "mmr"
    TARGET_K = "target_k"  # beyond target_k, with MMR off
    BUDGET = "budget"


class KeptChunk(BaseModel):
    """A chunk in the optimised context, in its order there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str = Field(description="As given, or shorter when compressed.")
    score: float | None
    tokens: int = Field(description="Tokens of `text` under the request's tokenizer.")
    cluster: int = Field(description="Its topic cluster, numbered from 1 in order of relevance.")
    compressed: bool
    metadata: dict[str, Any]


class RemovedChunk(BaseModel):
    """A chunk left out, why, and the kept or earlier chunk it gave way to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    reason: Removal
    by: str | None = Field(description="The chunk it duplicates, or that represents it.")
    cluster: int | None
    detail: str = Field(description="The reason in words, with the figures behind it.")


class OptimizeStats(BaseModel):
    """What the optimisation did, in counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_chunks: int
    output_chunks: int
    exact_duplicates: int
    semantic_duplicates: int
    clusters: int
    represented: int = Field(description="Chunks left out for their cluster's representative.")
    mmr_removed: int
    budget_skipped: int
    embedded: int = Field(description="Vectors made here (chunks and query without one).")
    tokens_in: int = Field(description="Tokens of every chunk's text as given.")
    tokens_out: int = Field(description="Tokens of the rendered output.")
    reduction_pct: float
    embedding_ms: float
    latency_ms: float


class OptimizedContext(BaseModel):
    """The kept chunks rendered within the budget, every removed chunk, and the stats."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    tokens_used: int
    budget: int
    tokenizer: str
    output: OutputFormat
    chunks: tuple[KeptChunk, ...]
    removed: tuple[RemovedChunk, ...]
    stats: OptimizeStats
