"""`recency`: recently modified or added fragments that match the request, newest weighing
most.

Rules, in order:

0. It runs for queries that ask for what is new ("latest", "recent", "recently",
   "newest", "lately", "changed", "updated", "today", "yesterday"). For any other, time
   would only reorder what the other strategies find by topic (on LoCoMo's questions about
   a months-long conversation it cut the default mix's recall@10), so it declines; `as_of`
   alone says when the request stands, not that it wants what is new.
1. The reference time is the request's `as_of`, else now; fragments from after it are left
   out, so that a request with `as_of` gives the same answer whenever it is asked. A
   fragment's time is its source's `modified_at`: a file's last commit time (else its
   mtime), a memory item's own timestamp.
2. The pool is what matches the request: the best `pool_size` text-search hits, the
   `pool_size` nearest vector hits when the store has vectors, and, when the query asks
   for what is new ("latest", "recent", "changed", ...), the `pool_size` newest fragments
   that share a word with it.
3. A fragment's match is its BM25 score over the pool's best (0 to 1) and, where vectors
   exist, its cosine similarity (below 0 counts 0), averaged; a newest fragment found by
   neither search counts half the share of query terms it holds. Only fragments whose
   match reaches `min_match` times the best match of the pool are recent *matches*: time
   orders what matches the request well, it does not promote what barely does.
4. Its score is its match times `0.5 ** (age / half_life_days)`, the age counted from the
   newest fragment of the pool: a fragment a half-life older than the newest weighs half
   as much. (Counting from the newest rather than from the reference time changes every
   score by one factor, so not the order; and so a request without `as_of` gives the
   same scores and reasons whenever it is asked, until the store changes.)
5. When the pooled fragments (two or more) differ in age by less than `same_age_share`
   of the half-life, time tells them apart too little to add anything to the other
   strategies: it proposes nothing.
6. Candidates come best score first, ties by fragment id, enough to hold twice its
   allocation and at least 20; each reason gives the time, the age against the newest
   match, the weight and the match.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    ContextStrategy,
    Settings,
    hookimpl,
    matched_terms,
    query_terms,
    strategy_options,
    within_reach,
)

NAME = "recency"

_DAY_SECONDS = 86_400.0
#: Words that ask for what is new (rule 0). Not "new", "change", "current" or "last": in
#: "changes in gene expression" or "last year" they name a topic or a time, not a wish for
#: what is newest (four of SciFact's first 200 claims would have asked for it).
_NEW_WORDS = frozenset(
    "latest recent recently newest lately changed updated today yesterday".split()
)


class RecencyOptions(BaseModel):
    """`[strategies.recency.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    half_life_days: float = Field(
        default=30.0,
        gt=0.0,
        le=36_500.0,
        description="Age, in days, at which a fragment's weight has halved.",
    )
    pool_size: int = Field(
        default=100, ge=1, le=2000, description="Matches drawn from each source (1-2000)."
    )
    min_match: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Least match, as a share of the pool's best, of a fragment proposed.",
    )
    same_age_share: float = Field(
        default=0.01,
        ge=0.0,
        le=1.0,
        description="Propose nothing when the matches' ages differ by less than this share"
        " of the half-life (time would not tell them apart).",
    )


class RecencyStrategy:
    """Matches of the request, weighted by exponential decay over their age."""

    name = NAME
    quality = 0.6
    required_backends = frozenset({"timeline"})

    def __init__(self, options: RecencyOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        if not query_terms(request.query):
            return 0.0
        return 0.9 if _asks_new(request.query) else 0.0  # rule 0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        reference = _aware(request.as_of or datetime.now(UTC))
        pool = self._pool(request, backends, reference)
        best = max((match for _, match, _ in pool.values()), default=0.0)
        pool = {
            fid: entry
            for fid, entry in pool.items()
            if entry[1] > 0 and entry[1] >= self.options.min_match * best
        }
        if not pool:
            return []
        ages = {fid: _age_days(fragment, reference) for fid, (fragment, _, _) in pool.items()}
        half_life, newest = self.options.half_life_days, min(ages.values())
        if len(ages) > 1 and max(ages.values()) - newest < self.options.same_age_share * half_life:
            return []  # rule 5
        scored: list[tuple[float, str, Candidate]] = []
        for fid, (fragment, match, how) in pool.items():
            older = ages[fid] - newest
            decay = 0.5 ** (older / half_life)
            score = match * decay
            weight = f"weight {decay:.3f}, half-life {half_life:g} d"
            reason = f"{_time_words(fragment, older)} ({weight}); {how}"
            scored.append((score, fid, Candidate(fragment=fragment, score=score, reason=reason)))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return list(within_reach((candidate for _, _, candidate in scored), budget))

    def _pool(
        self, request: ContextRequest, backends: Backends, reference: datetime
    ) -> dict[str, tuple[ContextFragment, float, str]]:
        """Fragment id -> (fragment, match 0-1, how it matched), from before `reference`."""
        size, filters = self.options.pool_size, request.filters
        lexical: dict[str, tuple[ContextFragment, float, str]] = {}
        if backends.text is not None:
            hits = backends.text.search(request.query, size, filters)
            best = max((hit.score for hit in hits), default=0.0)
            for hit in hits:
                share = hit.score / best if best > 0 else 0.0
                words = ", ".join(hit.matched_terms) or "query terms"
                lexical[hit.fragment.id] = (hit.fragment, share, f"BM25 matched {words}")
        semantic: dict[str, tuple[ContextFragment, float]] = {}
        if backends.vectors is not None:
            for hit in backends.vectors.nearest(request.query, size, filters):
                semantic[hit.fragment.id] = (hit.fragment, max(0.0, hit.similarity))
        pool: dict[str, tuple[ContextFragment, float, str]] = {}
        for fid in sorted({*lexical, *semantic}):
            fragment = (lexical.get(fid) or semantic[fid])[0]
            if not _before(fragment, reference):
                continue
            share, how = lexical[fid][1:] if fid in lexical else (0.0, "")
            if backends.vectors is None:
                pool[fid] = (fragment, share, how)
                continue
            similarity = semantic[fid][1] if fid in semantic else 0.0
            how = "; ".join(filter(None, (how, f"similarity {similarity:.3f}")))
            pool[fid] = (fragment, (share + similarity) / 2, how)
        if backends.timeline is not None and _asks_new(request.query):
            terms = query_terms(request.query)
            for fragment in backends.timeline.recent(size, filters, until=reference):
                held = matched_terms(terms, fragment.text)
                if fragment.id in pool or not held:
                    continue
                share = len(held) / len(terms) / 2
                pool[fragment.id] = (fragment, share, f"newest, holds {', '.join(held)}")
        return pool

    def explain(self) -> str:
        return (
            "Proposes fragments that match the request (BM25 and, where vectors exist, "
            "cosine similarity), weighted by exponential decay over their age: a file's "
            "last commit or modification time, a memory item's own timestamp. Ages are "
            "counted from the request's as_of (else now), and later fragments are left out. "
            "Runs when the query asks for what is new (latest, recent, changed, ...); "
            "proposes nothing when all matches are of about one age. Options: half_life_days "
            "(default 30), pool_size (default 100), min_match (default 0.5: least share of "
            "the best match), same_age_share (default 0.01)."
        )


def _asks_new(query: str) -> bool:
    return any(word.strip("?!.,;:'\"") in _NEW_WORDS for word in query.lower().split())


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _before(fragment: ContextFragment, reference: datetime) -> bool:
    modified = fragment.source.modified_at
    return modified is None or _aware(modified) <= reference


def _age_days(fragment: ContextFragment, reference: datetime) -> float:
    modified = fragment.source.modified_at
    if modified is None:
        return float("inf")
    return max(0.0, (reference - _aware(modified)).total_seconds() / _DAY_SECONDS)


def _time_words(fragment: ContextFragment, older: float) -> str:
    """'from 2024-05-29 10:00, 2.0 days before the newest match' (UTC)."""
    modified = fragment.source.modified_at
    if modified is None:
        return "time unknown"
    stamp = _aware(modified).astimezone(UTC).replace(tzinfo=None).isoformat(" ", "minutes")
    if older == 0:
        return f"from {stamp}, the newest match"
    span = f"{older * 24:.1f} hours" if older < 1 else f"{older:.1f} days"
    return f"from {stamp}, {span} before the newest match"


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `recency`, configured from `[strategies.recency.options]`."""
    return [RecencyStrategy(strategy_options(settings, NAME, RecencyOptions))]
