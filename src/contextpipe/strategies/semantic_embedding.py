"""`semantic-embedding`: the fragments nearest to the query in the embedder's vector space.

Rules:

1. It needs the `vectors` capability: an installed embedding model and vectors of its
   space in the store (the planner skips it, with the reason, otherwise).
2. Candidates are the nearest full-text fragments whose cosine similarity to the query
   reaches `min_similarity`, most similar first, ties by id; enough of them to hold
   twice the strategy's allocation and at least 20, at most `max_results`. Each hit is a
   fragment read from the store, so it asks for 32 first, and once more, for as many as
   that page suggests are needed, only when those do not hold twice the allocation.
3. Each reason gives the similarity, and the share of the store that has vectors when
   that is not all of it (vectors are computed after the text; a query never waits).
4. `can_handle` is high for questions in words, low for a bare identifier or path.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    REACH,
    Backends,
    Candidate,
    ContextRequest,
    ContextStrategy,
    Settings,
    VectorHit,
    hookimpl,
    next_page,
    strategy_options,
    within_reach,
)

NAME = "semantic-embedding"

#: Hits asked for first: the least proposed, and a margin for copies and the threshold.
_FIRST_PAGE = 32
_WORD = re.compile(r"[^\W\d_]{2,}")
_CODE_LIKE = re.compile(r"[_./\\()\[\]{}<>:=]|[a-z][A-Z]")


class SemanticOptions(BaseModel):
    """`[strategies.semantic-embedding.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_similarity: float = Field(
        default=0.2,
        ge=-1.0,
        le=1.0,
        description="Least cosine similarity to the query a proposed fragment has (-1 to 1).",
    )
    max_results: int = Field(
        default=200,
        ge=1,
        le=5000,
        description=(
            "Most fragments proposed per request (1-5000); fewer when they already hold "
            "twice the strategy's allocation."
        ),
    )


def prose_score(query: str) -> float:
    """How much `query` reads as words rather than code: 0 (none) to 1 (a sentence)."""
    tokens = query.split()
    if not tokens:
        return 0.0
    words = sum(1 for token in tokens if _WORD.fullmatch(token.strip("?!.,;:'\"")))
    code = sum(1 for token in tokens if _CODE_LIKE.search(token))
    return max(0.0, min(1.0, (words - code) / max(len(tokens), 3)))


class SemanticEmbeddingStrategy:
    """Nearest neighbours of the query embedding."""

    name = NAME
    quality = 0.6
    required_backends = frozenset({"vectors"})

    def __init__(self, options: SemanticOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 0.3 + 0.6 * prose_score(request.query) if request.query.strip() else 0.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        vectors = backends.vectors
        if vectors is None:
            return []
        wanted, most = REACH * budget, self.options.max_results
        threshold = self.options.min_similarity

        def similar(limit: int) -> list[VectorHit]:
            """The nearest `limit` hits down to the threshold (most similar first)."""
            nearest = vectors.nearest(request.query, limit, request.filters)
            return list(itertools.takewhile(lambda hit: hit.similarity >= threshold, nearest))

        # Each hit is a fragment read from the store: ask for what the allocation needs,
        # then once more when the first page, all above the threshold, does not hold it.
        limit = min(most, _FIRST_PAGE)
        hits = similar(limit)
        more = next_page(hits, limit, most, wanted)
        if more is not None:
            hits = similar(more)
        source = f"to the query ({vectors.embedder}){vectors.coverage().remark()}"
        return [
            Candidate(
                fragment=hit.fragment,
                score=hit.similarity,
                reason=f"similarity {hit.similarity:.3f} {source}",
            )
            for hit in within_reach(hits, budget)
        ]

    def explain(self) -> str:
        return (
            "Embeds the query with the configured embedder ([embedding] model) and proposes "
            "the full-text fragments nearest to it by cosine similarity, down to "
            "min_similarity, enough to hold twice its allocation. Needs vectors: `contextpipe "
            "index` computes them after the text. Options: min_similarity (default 0.2), "
            "max_results (default 200)."
        )


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `semantic-embedding`, configured from its options table."""
    return [SemanticEmbeddingStrategy(strategy_options(settings, NAME, SemanticOptions))]
