"""`tiered`: memory tiers, filled in order while its budget lasts.

Rules, in order:

1. **hot**: the pinned items (`[memory] pinned` and `contextpipe pin`), then the
   request's working set: the nodes and files its `focus` names.
2. **warm**: what matches the request well (among the best `warm_rank` of the first page
   of long-term search, 3) and is recent in the request's session: the nodes its recent
   assemblies delivered (the store's access log, latest first; an item used lately but
   beside the point of this request is not given again), then those of the `warm_memory`
   newest memory items of the session itself (session scope) from before its `as_of`, in
   search order. A user's or everyone's memory, however new, was not said in this session:
   it is long-term memory, and cold.
3. **cold**: long-term search over everything else: the best text-search hits and, where
   vectors exist, as many nearest texts, merged by reciprocal rank. The first page is
   `FIRST_PAGE` hits of each (or `warm_rank`, if more), the page the other strategies of a
   mix ask for too, so that one search serves them all; when the tiers then hold less than
   wanted (rule 4) and a search came back full, they are searched once more, for as many
   as the first page suggests are needed, up to `cold_results` each (`next_page`). These
   are the searches other strategies run too, so cold candidates are echoes
   (`Candidate.echo`): in a mix, fusion counts them only for what no other strategy
   proposed, and the cold tier adds what the others lack rather than voting twice.
4. Tiers are filled in that order, each fragment once (in its first tier), until the
   proposals hold twice its allocation (and at least 20); a later tier only gets what the
   earlier ones leave. Scores fall strictly from tier to tier; each reason names its tier.
5. With no session, no focus and nothing pinned, there is nothing hot or warm: it declines
   (`can_handle` 0), leaving long-term search to the other strategies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC
from typing import NamedTuple
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    AT_LEAST,
    FIRST_PAGE,
    REACH,
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    ContextStrategy,
    MemoryScope,
    SessionTiers,
    Settings,
    hookimpl,
    next_page,
    strategy_options,
)

from ._follow_ups import glob_literal

NAME = "tiered"

#: Reciprocal-rank constant of the cold tier's merge.
_RRF_K = 60
_TIER_BASE = {"hot": 3.0, "warm": 2.0, "cold": 1.0}


class _Found(NamedTuple):
    """A fragment a tier found, and why."""

    fragment: ContextFragment
    why: str


class TieredOptions(BaseModel):
    """`[strategies.tiered.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hot_items: int = Field(
        default=50, ge=0, le=1000, description="Most pinned and focus fragments (0-1000)."
    )
    warm_used: int = Field(
        default=20,
        ge=0,
        le=1000,
        description="Most fragments from the session's recent assemblies (0-1000).",
    )
    warm_memory: int = Field(
        default=50,
        ge=0,
        le=1000,
        description="Newest memory items of the request's session weighed for the warm tier"
        " (0-1000).",
    )
    warm_rank: int = Field(
        default=10,
        ge=0,
        le=2000,
        description="Warm items must be among this many best of long-term search (0-2000).",
    )
    cold_results: int = Field(
        default=100,
        ge=0,
        le=2000,
        description="Most hits of each long-term search weighed, after a first page of 50,"
        " when the tiers need more (0-2000).",
    )


class TieredStrategy:
    """Hot, then warm, then cold memory."""

    name = NAME
    quality = 0.7
    required_backends = frozenset({"sessions"})

    def __init__(self, options: TieredOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        sessions = backends.sessions
        if sessions is None:
            return 0.0
        if request.session or request.focus or sessions.pinned(1, request.filters):
            return 0.8
        return 0.0  # rule 5

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        sessions = backends.sessions
        if sessions is None:
            return []
        wanted, most = REACH * budget, self.options.cold_results
        limit = min(most, max(FIRST_PAGE, self.options.warm_rank))
        cold, full = self._cold(request, backends, limit)
        hot, warm = self._hot(request, sessions), self._warm(request, sessions, cold)
        candidates, held = _filled(hot, warm, cold, wanted)
        more = next_page(cold, limit, most, wanted) if full and held < wanted else None
        if more is not None:
            cold, _ = self._cold(request, backends, more)
            candidates, _ = _filled(hot, warm, cold, wanted)
        return candidates

    def _hot(self, request: ContextRequest, sessions: SessionTiers) -> list[_Found]:
        limit, filters = self.options.hot_items, request.filters
        found = [_Found(fragment, "pinned") for fragment in sessions.pinned(limit, filters)]
        if request.focus:
            named = sessions.named(list(request.focus), limit, filters)
            found += [_Found(fragment, "in the request's focus") for fragment in named]
        return found

    def _warm(
        self,
        request: ContextRequest,
        sessions: SessionTiers,
        cold: Sequence[_Found],
    ) -> list[_Found]:
        found: list[_Found] = []
        # Only what long-term search finds is warm: an item used lately but beside the
        # point of this request is not given again (and so not logged again, for ever).
        best = cold[: self.options.warm_rank]
        rank = {fragment.id: number for number, (fragment, _) in enumerate(best, start=1)}
        if request.session:
            used = sessions.recently_used(self.options.warm_used, request.filters)
            found += [_Found(f, "used lately by this session") for f in used if f.id in rank]
        recent = _session_memory(sessions, request, self.options.warm_memory)
        for fragment in sorted((f for f in recent if f.id in rank), key=lambda f: rank[f.id]):
            when = f"recent memory ({_when(fragment)})"
            found.append(_Found(fragment, f"{when}, long-term search rank {rank[fragment.id]}"))
        return found

    def _cold(
        self, request: ContextRequest, backends: Backends, limit: int
    ) -> tuple[list[_Found], bool]:
        """The best `limit` of each long-term search, merged, and whether a search had as
        many (there may be more).
        """
        lists: list[list[_Found]] = []
        if backends.text is not None and limit:
            hits = backends.text.search(request.query, limit, request.filters)
            lists.append(
                [_Found(h.fragment, f"BM25 matched {', '.join(h.matched_terms)}") for h in hits]
            )
        if backends.vectors is not None and limit:
            nearest = backends.vectors.nearest(request.query, limit, request.filters)
            lists.append([_Found(h.fragment, f"similarity {h.similarity:.3f}") for h in nearest])
        return _merged(lists), any(len(found) == limit for found in lists)

    def explain(self) -> str:
        return (
            "Fills memory tiers in order: hot (pinned items, [memory] pinned and `contextpipe "
            "pin`, and the files or nodes the request's focus names), warm (among the best "
            "matches of long-term search: what this session's recent assemblies delivered, "
            "and this session's recent memory), cold (long-term text and vector search, a first "
            "page of 50 hits shared with the other strategies and more when needed, counted "
            "in a mix only for what the other strategies did not propose). Each reason "
            "names its tier. Declines without a session, focus or pins. Options: "
            "hot_items (50), warm_used "
            "(20), warm_memory (50), warm_rank (10), cold_results (100)."
        )


def _filled(
    hot: Sequence[_Found], warm: Sequence[_Found], cold: Sequence[_Found], wanted: int
) -> tuple[list[Candidate], int]:
    """The tiers' candidates in order, each fragment once, until they hold `wanted` tokens
    and at least `AT_LEAST` (rule 4); and the tokens they hold.
    """
    held = 0
    seen: set[str] = set()
    candidates: list[Candidate] = []
    for tier, found in (("hot", hot), ("warm", warm), ("cold", cold)):
        entries = [entry for entry in found if entry.fragment.id not in seen]
        for rank, (fragment, why) in enumerate(entries):
            if held >= wanted and len(candidates) >= AT_LEAST:
                return candidates, held
            seen.add(fragment.id)
            held += fragment.token_count
            score = _TIER_BASE[tier] + 0.5 * (1 - rank / len(entries))
            candidates.append(
                Candidate(
                    fragment=fragment, score=score, reason=f"{tier}: {why}", echo=tier == "cold"
                )
            )
    return candidates, held


def _merged(
    lists: Iterable[list[_Found]],
) -> list[_Found]:
    """Reciprocal-rank merge of ranked lists, each fragment once, ties by id."""
    scores: dict[str, float] = {}
    entries: dict[str, tuple[ContextFragment, list[str]]] = {}
    for ranked in lists:
        for rank, (fragment, why) in enumerate(ranked, start=1):
            scores[fragment.id] = scores.get(fragment.id, 0.0) + 1 / (_RRF_K + rank)
            entries.setdefault(fragment.id, (fragment, []))[1].append(why)
    order = sorted(scores, key=lambda fid: (-scores[fid], fid))
    return [
        _Found(entries[fid][0], "long-term search, " + "; ".join(entries[fid][1])) for fid in order
    ]


def _session_memory(
    sessions: SessionTiers, request: ContextRequest, limit: int
) -> Sequence[ContextFragment]:
    """The `limit` newest memory items of the request's own session from before its
    `as_of` (rule 2); none without a session.
    """
    if request.session is None or not limit:
        return ()
    # A memory item's stored path is its node URI, where the owner is quoted.
    node = f"uko://memory/{MemoryScope.SESSION.value}/{quote(request.session, safe='')}/"
    # Read within the session's stored paths, unless the request filters paths itself.
    paths = request.filters.paths or (glob_literal(node) + "*",)
    found = sessions.recent_memory(
        limit, request.filters.model_copy(update={"paths": paths}), until=request.as_of
    )
    return [fragment for fragment in found if fragment.uko_uri.startswith(node)]


def _when(fragment: ContextFragment) -> str:
    modified = fragment.source.modified_at
    if modified is None:
        return "time unknown"
    aware = modified if modified.tzinfo is not None else modified.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "minutes")


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `tiered`, configured from `[strategies.tiered.options]`."""
    return [TieredStrategy(strategy_options(settings, NAME, TieredOptions))]
