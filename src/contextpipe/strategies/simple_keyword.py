"""`simple-keyword`: BM25 keyword and phrase search over the text index; the universal
fallback that works on any store with a text backend.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..backends import TEXT, Backends
from ..config import Settings, strategy_options
from ..hookspecs import hookimpl
from ..models import Candidate, ContextRequest
from ..store.embedded import query_terms
from ..strategy import ContextStrategy

NAME = "simple-keyword"


class KeywordOptions(BaseModel):
    """`[strategies.simple-keyword.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_results: int = Field(
        default=40, ge=1, le=1000, description="Most keyword hits proposed per request (1-1000)."
    )


class SimpleKeywordStrategy:
    """Keyword search: quoted phrases and words of the query, ranked by BM25."""

    name = NAME
    quality = 0.3
    required_backends = frozenset({TEXT})

    def __init__(self, options: KeywordOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0 if query_terms(request.query) else 0.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        if backends.text is None:
            return []
        # Best first; the executor keeps what fits the allocation and lists the rest as dropped.
        hits = backends.text.search(request.query, self.options.max_results, request.filters)
        return [
            Candidate(
                fragment=hit.fragment,
                score=hit.score,
                reason=f"BM25 matched {', '.join(hit.matched_terms) or 'query terms'}",
            )
            for hit in hits
        ]

    def explain(self) -> str:
        return (
            "Searches the full-text index (SQLite FTS5, Porter stemming, identifiers split into "
            "words) for the query's words and quoted phrases, ranked by BM25. User text is "
            "always quoted, never read as search syntax. Options: max_results (default 40)."
        )


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `simple-keyword`, configured from `[strategies.simple-keyword.options]`."""
    return [SimpleKeywordStrategy(strategy_options(settings, NAME, KeywordOptions))]
