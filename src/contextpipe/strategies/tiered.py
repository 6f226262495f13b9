"""`tiered`: memory tiers, filled in order while its budget lasts.

Rules, in order:

1. **hot**: the pinned items (`[memory] pinned` and `contextpipe pin`), then the
   request's working set: the nodes and files its `focus` names.
2. **warm**: what matches the request well (among the best `warm_rank` of long-term
   search, 3) and is recent in the request's session: the nodes its recent assemblies
   delivered (the store's access log, latest first; an item used lately but beside the
   point of this request is not given again), then those of the `warm_memory` newest
   memory items of the session itself (session scope) from before its `as_of`, in search
   order. A user's or everyone's memory, however new, was not said in this session: it is
   long-term memory, and cold.
3. **cold**: long-term search over everything else: the best `cold_results` text-search
   hits and, where vectors exist, as many nearest texts, merged by reciprocal rank. These
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
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    AT_LEAST,
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
    strategy_options,
)

from ._follow_ups import glob_literal

NAME = "tiered"

#: Reciprocal-rank constant of the cold tier's merge.
_RRF_K = 60
_TIER_BASE = {"hot": 3.0, "warm": 2.0, "cold": 1.0}


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
        default=100, ge=0, le=2000, description="Hits of long-term search weighed (0-2000)."
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
        cold = self._cold(request, backends)
        tiers = (
            ("hot", self._hot(request, sessions)),
            ("warm", self._warm(request, sessions, cold)),
            ("cold", cold),
        )
        wanted, held = REACH * budget, 0
        seen: set[str] = set()
        candidates: list[Candidate] = []
        for tier, found in tiers:
            entries = [(fragment, why) for fragment, why in found if fragment.id not in seen]
            for rank, (fragment, why) in enumerate(entries):
                if held >= wanted and len(candidates) >= AT_LEAST:
                    return candidates
                seen.add(fragment.id)
                held += fragment.token_count
                score = _TIER_BASE[tier] + 0.5 * (1 - rank / len(entries))
                candidates.append(
                    Candidate(
                        fragment=fragment,
                        score=score,
                        reason=f"{tier}: {why}",
                        echo=tier == "cold",
                    )
                )
        return candidates

    def _hot(
        self, request: ContextRequest, sessions: SessionTiers
    ) -> list[tuple[ContextFragment, str]]:
        limit, filters = self.options.hot_items, request.filters
        found = [(fragment, "pinned") for fragment in sessions.pinned(limit, filters)]
        if request.focus:
            named = sessions.named(list(request.focus), limit, filters)
            found += [(fragment, "in the request's focus") for fragment in named]
        return found

    def _warm(
        self,
        request: ContextRequest,
        sessions: SessionTiers,
        cold: Sequence[tuple[ContextFragment, str]],
    ) -> list[tuple[ContextFragment, str]]:
        found: list[tuple[ContextFragment, str]] = []
        # Only what long-term search finds is warm: an item used lately but beside the
        # point of this request is not given again (and so not logged again, for ever).
        best = cold[: self.options.warm_rank]
        rank = {fragment.id: number for number, (fragment, _) in enumerate(best, start=1)}
        if request.session:
            used = sessions.recently_used(request.session, self.options.warm_used, request.filters)
            found += [(f, "used lately by this session") for f in used if f.id in rank]
        recent = _session_memory(sessions, request, self.options.warm_memory)
        for fragment in sorted((f for f in recent if f.id in rank), key=lambda f: rank[f.id]):
            found.append(
                (
                    fragment,
                    f"recent memory ({_when(fragment)}), long-term search rank {rank[fragment.id]}",
                )
            )
        return found

    def _cold(
        self, request: ContextRequest, backends: Backends
    ) -> list[tuple[ContextFragment, str]]:
        limit, filters = self.options.cold_results, request.filters
        lists: list[list[tuple[ContextFragment, str]]] = []
        if backends.text is not None and limit:
            hits = backends.text.search(request.query, limit, filters)
            lists.append([(h.fragment, f"BM25 matched {', '.join(h.matched_terms)}") for h in hits])
        if backends.vectors is not None and limit:
            nearest = backends.vectors.nearest(request.query, limit, filters)
            lists.append([(h.fragment, f"similarity {h.similarity:.3f}") for h in nearest])
        return _merged(lists)

    def explain(self) -> str:
        return (
            "Fills memory tiers in order: hot (pinned items, [memory] pinned and `contextpipe "
            "pin`, and the files or nodes the request's focus names), warm (among the best "
            "matches of long-term search: what this session's recent assemblies delivered, "
            "and this session's recent memory), cold (long-term text and vector search, counted "
            "in a mix only for what the other strategies did not propose). Each reason "
            "names its tier. Declines without a session, focus or pins. Options: "
            "hot_items (50), warm_used "
            "(20), warm_memory (50), warm_rank (10), cold_results (100)."
        )


def _merged(
    lists: Iterable[list[tuple[ContextFragment, str]]],
) -> list[tuple[ContextFragment, str]]:
    """Reciprocal-rank merge of ranked lists, each fragment once, ties by id."""
    scores: dict[str, float] = {}
    entries: dict[str, tuple[ContextFragment, list[str]]] = {}
    for ranked in lists:
        for rank, (fragment, why) in enumerate(ranked, start=1):
            scores[fragment.id] = scores.get(fragment.id, 0.0) + 1 / (_RRF_K + rank)
            entries.setdefault(fragment.id, (fragment, []))[1].append(why)
    order = sorted(scores, key=lambda fid: (-scores[fid], fid))
    return [(entries[fid][0], "long-term search, " + "; ".join(entries[fid][1])) for fid in order]


def _session_memory(
    sessions: SessionTiers, request: ContextRequest, limit: int
) -> Sequence[ContextFragment]:
    """The `limit` newest memory items of the request's own session from before its
    `as_of` (rule 2); none without a session.
    """
    if request.session is None or not limit:
        return ()
    scope = MemoryScope.SESSION.value
    # Read within the session's stored paths, unless the request filters paths itself.
    paths = request.filters.paths or (glob_literal(f"memory:{scope}/{request.session}/") + "*",)
    found = sessions.recent_memory(
        limit, request.filters.model_copy(update={"paths": paths}), until=request.as_of
    )
    # The node URI quotes the owner: an owner that only starts the same way is told apart.
    node = f"uko://memory/{scope}/{quote(request.session, safe='')}/"
    return [fragment for fragment in found if fragment.uko_uri.startswith(node)]


def _when(fragment: ContextFragment) -> str:
    modified = fragment.source.modified_at
    if modified is None:
        return "time unknown"
    aware = modified if modified.tzinfo is not None else modified.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `tiered`, configured from `[strategies.tiered.options]`."""
    return [TieredStrategy(strategy_options(settings, NAME, TieredOptions))]
