"""`relevance`: hybrid lexical and semantic scoring of a pool drawn from both indexes.

Rules, in order:

1. The pool is the best `pool_size` text-search hits and the `pool_size` nearest vector
   hits, each fragment once. When those text hits hold fewer tokens than twice the
   strategy's allocation (short fragments, such as the turns of a conversation), both
   indexes are asked once more, for as many hits as the first ones suggest are needed (at
   least twice as many), at most `max_pool_size` (at `pool_size`, the default, never).
2. Every pooled fragment gets both raw scores: its BM25 score (as text search scores it,
   also when only the vector search found it: 0 only when it matches no query term) and
   its cosine similarity to the query (0 when it has no vector yet).
3. Each kind of score is normalised over the pool, by min-max (to 0-1; all equal: 1 when
   positive, else 0) or by z-score (mean 0, deviation 1; all equal: 0), as `normalise`
   says. Scores, not only ranks, so that a clear winner stays clear.
4. The hybrid score is `lexical_weight * lexical + semantic_weight * semantic`, plus
   `title_bonus` times the share of query terms in the fragment's title (a heading or
   definition name) and `path_bonus` times the share in its source path, plus
   `speaker_bonus` for a memory item whose speaker the query names (a question about
   John is mostly answered by what John said, not by "Thanks, John!").
5. Candidates come best hybrid score first, ties by fragment id, enough to hold twice
   the strategy's allocation and at least 20; each reason shows every component.
6. Each of the best `follow_up_hits` that is a memory item brings the `follow_ups` turns
   of its conversation said right after it (within `follow_up_seconds`: the reply, the
   speaker's next turn; read from the timeline when the store has one), right behind it
   and with its score, each once; the reason names the hit they follow. With
   `follow_named_speaker`, when the query names the speaker of the hit or of a turn that
   follows it, only turns said by a speaker it names follow.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    AT_LEAST,
    REACH,
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    ContextStrategy,
    Settings,
    hookimpl,
    name_words,
    query_terms,
    strategy_options,
)

from ._follow_ups import MEMORY, following

NAME = "relevance"


class RelevanceOptions(BaseModel):
    """`[strategies.relevance.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pool_size: int = Field(
        default=50, ge=1, le=2000, description="Hits drawn from each index (1-2000)."
    )
    max_pool_size: int = Field(
        default=50,
        ge=1,
        le=2000,
        description="Hits drawn from each index at most, when pool_size hits hold fewer"
        " tokens than twice the allocation (short fragments such as memory turns); at"
        " pool_size or below, the pool never grows.",
    )
    normalise: Literal["minmax", "zscore"] = Field(
        default="minmax",
        description="How each kind of score is normalised over the pool: minmax or zscore.",
    )
    lexical_weight: float = Field(
        default=0.55, ge=0.0, description="Weight of the normalised BM25 score."
    )
    semantic_weight: float = Field(
        default=0.45, ge=0.0, description="Weight of the normalised cosine similarity."
    )
    title_bonus: float = Field(
        default=0.1, ge=0.0, description="Added times the share of query terms in the title."
    )
    path_bonus: float = Field(
        default=0.05, ge=0.0, description="Added times the share of query terms in the path."
    )
    follow_ups: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Turns said right after each of the best memory hits (the reply, the"
        " speaker's next turn) proposed right behind it (0-10; 0: none).",
    )
    follow_up_hits: int = Field(
        default=2, ge=0, le=50, description="How many of the best hits bring their follow-ups."
    )
    follow_up_seconds: float = Field(
        default=600.0,
        gt=0.0,
        description="A turn follows a hit when said within this many seconds after it.",
    )
    follow_named_speaker: bool = Field(
        default=True,
        description="When the query names a speaker, only turns that speaker said follow a hit.",
    )
    speaker_bonus: float = Field(
        default=0.0,
        ge=0.0,
        description="Added to a memory item whose speaker the query names by name.",
    )


@dataclass
class _Pooled:
    fragment: ContextFragment
    bm25: float = 0.0
    cosine: float = 0.0


def normalised(values: Sequence[float], method: str) -> list[float]:
    """Rule 3 for one kind of score over the pool."""
    if not values:
        return []
    if method == "zscore":
        mean = statistics.fmean(values)
        deviation = statistics.pstdev(values)
        return [(v - mean) / deviation if deviation else 0.0 for v in values]
    low, high = min(values), max(values)
    if high == low:
        return [1.0 if high > 0 else 0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


def _share(lowered_terms: Sequence[str], text: str) -> float:
    """The share of query terms (lower-cased) that are words of `text` (identifiers split
    into words).
    """
    if not lowered_terms:
        return 0.0
    if text.isascii():
        # Each word of an ASCII name, and each word of its identifiers, is a piece of the
        # name lower-cased: a term that is no piece is no word, and most names hold none.
        lowered = text.lower()
        if not any(term in lowered for term in lowered_terms):
            return 0.0
    words = name_words(text)
    return sum(1 for term in lowered_terms if term in words) / len(lowered_terms)


def _speaker_named(terms: Sequence[str], fragment: ContextFragment) -> float:
    """1 when `fragment` is a memory item (its title is its speaker) whose speaker's name
    is among the query's terms, else 0.
    """
    if fragment.source.kind != MEMORY or not terms:
        return 0.0
    speaker = str(fragment.metadata.get("title", "")).lower().split()
    return 1.0 if speaker and any(word in terms for word in speaker) else 0.0


class RelevanceStrategy:
    """Lexical and semantic scores, normalised and combined, with title and path bonuses."""

    name = NAME
    quality = 0.8
    required_backends = frozenset({"text", "vectors"})
    #: It already fuses what keyword and vector search find, with scores, not ranks: the
    #: mix should follow its ranking and let the others fill in (SciFact train: weight 1
    #: loses 0.03 nDCG@10 against relevance alone; see docs/evaluation.md).
    default_weight = 8.0

    def __init__(self, options: RelevanceOptions) -> None:
        self.options = options

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 0.9 if query_terms(request.query) else 0.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        text, vectors = backends.text, backends.vectors
        if text is None or vectors is None:
            return []
        options, query = self.options, request.query
        wanted = REACH * budget
        # Vectors first: semantic-embedding, which starts a moment later, asks for fewer
        # nearest hits and takes them from this search (the searches of a request are
        # shared), and by the time this asks the text index simple-keyword has asked it.
        size = options.pool_size
        nearest = vectors.nearest(query, size, request.filters)
        found = text.search(query, size, request.filters)
        held = sum({hit.fragment.content_hash: hit.fragment.token_count for hit in found}.values())
        if len(found) == size < options.max_pool_size and held < wanted:
            # Rule 1: short fragments (memory turns) cannot fill the allocation from this
            # pool; ask once more, for as many as the first hits suggest are needed.
            per_hit = max(1.0, held / size)
            size = min(options.max_pool_size, max(2 * size, math.ceil(1.25 * wanted / per_hit)))
            nearest = vectors.nearest(query, size, request.filters)
            found = text.search(query, size, request.filters)
        pool: dict[str, _Pooled] = {}
        for hit in nearest:
            pool.setdefault(hit.fragment.id, _Pooled(hit.fragment)).cosine = hit.similarity
        unscored: list[ContextFragment] = []
        lexical_ids = {hit.fragment.id for hit in found}
        for hit in found:
            pooled = pool.get(hit.fragment.id)
            if pooled is None:
                pooled = pool[hit.fragment.id] = _Pooled(hit.fragment)
                unscored.append(hit.fragment)
            pooled.bm25 = hit.score
        for fragment, similarity in zip(
            unscored, vectors.similarities(query, unscored), strict=True
        ):
            pool[fragment.id].cosine = similarity or 0.0
        # Rule 2 both ways: what only the vector search found is scored for its words too.
        unmatched = [item.fragment for item in pool.values() if item.fragment.id not in lexical_ids]
        for fragment, score in zip(unmatched, text.scores(query, unmatched), strict=True):
            pool[fragment.id].bm25 = score
        items = sorted(pool.values(), key=lambda item: item.fragment.id)
        lexical = normalised([item.bm25 for item in items], options.normalise)
        semantic = normalised([item.cosine for item in items], options.normalise)
        terms = query_terms(query)
        lowered_terms = [term.lower() for term in terms]
        scored: list[tuple[float, str, _Pooled, float, float, float, float]] = []
        for item, lex, sem in zip(items, lexical, semantic, strict=True):
            fragment = item.fragment
            title = _share(lowered_terms, str(fragment.metadata.get("title", "")))
            path = _share(lowered_terms, fragment.source.path)
            speaker = _speaker_named(terms, fragment)
            score = (
                options.lexical_weight * lex
                + options.semantic_weight * sem
                + options.title_bonus * title
                + options.path_bonus * path
                + options.speaker_bonus * speaker
            )
            scored.append((score, fragment.id, item, lex, sem, title, path))
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        # Candidates (and their reasons) are made only for what is proposed.
        note = vectors.coverage().remark()
        held = 0
        candidates: list[Candidate] = []
        proposed: set[str] = set()
        for place, (score, _, item, lex, sem, title, path) in enumerate(scored):
            if held >= wanted and len(candidates) >= AT_LEAST:
                break
            if item.fragment.id in proposed:
                continue
            reason = (
                f"hybrid {score:.3f}: lexical {lex:.2f} (BM25 {item.bm25:.2f}), semantic"
                f" {sem:.2f} (cosine {item.cosine:.3f}), title terms {title:.0%}, path terms"
                f" {path:.0%}{note}"
            )
            candidates.append(Candidate(fragment=item.fragment, score=score, reason=reason))
            proposed.add(item.fragment.id)
            held += item.fragment.token_count
            if place < options.follow_up_hits and backends.timeline is not None:
                # Rule 6: the hit's reply and its speaker's next turn, right behind it.
                window = timedelta(seconds=options.follow_up_seconds)
                turns = following(
                    backends.timeline, item.fragment, options.follow_ups, window, request.filters
                )
                if options.follow_named_speaker and any(
                    _speaker_named(terms, said) for said in (item.fragment, *turns)
                ):
                    turns = [turn for turn in turns if _speaker_named(terms, turn)]
                for turn in turns:
                    if turn.id not in proposed:
                        candidates.append(
                            Candidate(
                                fragment=turn,
                                score=score,
                                reason=f"said right after {item.fragment.uko_uri}, which"
                                f" scored hybrid {score:.3f}",
                            )
                        )
                        proposed.add(turn.id)
                        held += turn.token_count
        return candidates

    def explain(self) -> str:
        return (
            "Pools the best text-search hits and the nearest vector hits, normalises BM25 "
            "scores and cosine similarities over the pool (min-max or z-score), combines "
            "them with weights and adds bonuses for query terms in titles and paths and for "
            "memory said by a speaker the query names; the best memory hits bring the turns "
            "said right after them. Needs text search and vectors. Options: pool_size, "
            "max_pool_size, normalise, lexical_weight, semantic_weight, title_bonus, path_bonus, "
            "speaker_bonus, follow_ups, follow_up_hits, follow_up_seconds, follow_named_speaker."
        )


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `relevance`, configured from its options table."""
    return [RelevanceStrategy(strategy_options(settings, NAME, RelevanceOptions))]
