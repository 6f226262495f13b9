"""`simple-keyword`: BM25 keyword and phrase search over the text index; the universal
fallback that works on any store with a text backend.

With the option `prefer_source` every request is a code question: hits in source files
come first, hits in tests, docs, changelogs and CI files after them, each group best first
(a request's own `prefer_source` does the same to every strategy's list; see
`contextpipe.assembly.code_questions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    FIRST_PAGE,
    REACH,
    Backends,
    Candidate,
    ContextRequest,
    ContextStrategy,
    Settings,
    hookimpl,
    next_page,
    query_terms,
    source_role,
    strategy_options,
    within_reach,
)

NAME = "simple-keyword"


class KeywordOptions(BaseModel):
    """`[strategies.simple-keyword.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_results: int = Field(
        default=500,
        ge=1,
        le=5000,
        description=(
            "Most keyword hits proposed per request (1-5000); fewer when they already hold "
            "twice the strategy's allocation."
        ),
    )
    prefer_source: bool = Field(
        default=False,
        description=(
            "Treat every request as a code question: hits in source files before hits in "
            "tests, docs, changelogs and CI files (a request's prefer_source does the same "
            "to every strategy)."
        ),
    )


class SimpleKeywordStrategy:
    """Keyword search: quoted phrases and words of the query, ranked by BM25."""

    name = NAME
    quality = 0.3
    required_backends = frozenset({"text"})

    def __init__(self, options: KeywordOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0 if query_terms(request.query) else 0.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        if backends.text is None:
            return []
        # Best first, enough to hold twice the allocation: what lies beyond it fills the
        # room other strategies leave, and the packer skips duplicates and overlaps.
        wanted, most = REACH * budget, self.options.max_results
        limit = min(most, FIRST_PAGE)
        hits = backends.text.search(request.query, limit, request.filters)
        more = next_page(hits, limit, most, wanted)
        if more is not None:
            hits = backends.text.search(request.query, more, request.filters)
        if self.options.prefer_source:
            # A stable sort: each group keeps its BM25 order.
            hits = sorted(hits, key=lambda hit: source_role(hit.fragment.source.path) != "source")
        # Candidates (and their reasons) are made only for what acceptance reads: the
        # first page is shared with relevance's pool and often holds far more.
        return [
            Candidate(
                fragment=hit.fragment,
                score=hit.score,
                reason=f"BM25 matched {', '.join(hit.matched_terms) or 'query terms'}"
                + _role_note(hit.fragment.source.path, self.options),
            )
            for hit in within_reach(hits, budget)
        ]

    def explain(self) -> str:
        return (
            "Searches the full-text index (SQLite FTS5, Porter stemming, identifiers split into "
            "words) for the query's words and quoted phrases, ranked by BM25. User text is "
            "always quoted, never read as search syntax. Proposes enough hits to hold twice "
            "its allocation, so that the budget can be filled. For a code question "
            "(prefer_source), hits in source files come before tests, docs, changelogs and "
            "CI files. Options: max_results (default 500), prefer_source (default false)."
        )


def _role_note(path: str, options: KeywordOptions) -> str:
    """For a code question, why a hit outside the source comes after the source hits."""
    if not options.prefer_source:
        return ""
    role = source_role(path)
    return "" if role == "source" else f" (in {role} files: after source files)"


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `simple-keyword`, configured from `[strategies.simple-keyword.options]`."""
    return [SimpleKeywordStrategy(strategy_options(settings, NAME, KeywordOptions))]
