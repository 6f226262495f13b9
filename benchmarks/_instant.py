"""Strategies that cost nothing: they hand back candidate lists computed beforehand, so
the time `assemble` spends with them is the framework's own (allocator, executor, fusion,
packing, rendering, result building).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import contextpipe
from contextpipe import Backends, Candidate, ContextRequest, RequestFilters, Settings

#: Candidate layouts: one strategy proposing 500, or five proposing 100 each from an
#: overlapping pool of 250 fragments (so that fusion has same-content items to merge).
LAYOUTS = {"1x500": (1, 500, 500), "5x100": (5, 100, 250)}
TOTAL_CANDIDATES = 500
#: A query matching most of the corpus, to draw 500 real fragments from the store.
BROAD_QUERY = "data value request token budget context result file function model index"


class InstantStrategy:
    """A sync strategy (like the built-in ones, run in a worker thread) that returns its
    precomputed list at once.
    """

    quality = 1.0
    required_backends: frozenset[str] = frozenset()

    def __init__(self, name: str, candidates: Sequence[Candidate]) -> None:
        self.name = name
        self._candidates = list(candidates)

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        return self._candidates

    def explain(self) -> str:
        return "Returns a precomputed candidate list (benchmarks only)."


class InstantPlugin:
    """A plugin object registering the given strategies."""

    def __init__(self, strategies: Sequence[InstantStrategy]) -> None:
        self._strategies = list(strategies)

    @contextpipe.hookimpl
    def contextpipe_strategies(self, settings: Settings) -> Sequence[InstantStrategy]:
        return list(self._strategies)


def candidate_lists(store: contextpipe.FragmentStore, layout: str) -> list[list[Candidate]]:
    """Real full-text fragments of `store`, arranged as `layout` (see LAYOUTS)."""
    strategies, per_strategy, pool_size = LAYOUTS[layout]
    search = getattr(store, "search")  # noqa: B009 - the embedded store is also the text backend
    hits = search(BROAD_QUERY, pool_size, RequestFilters())
    if len(hits) < pool_size:
        raise RuntimeError(f"the store has only {len(hits)} matches, need {pool_size}")
    pool = [hit.fragment for hit in hits]
    rng = random.Random(7)
    lists: list[list[Candidate]] = []
    for number in range(strategies):
        chosen = pool[:per_strategy] if strategies == 1 else rng.sample(pool, per_strategy)
        lists.append(
            [
                Candidate(fragment=fragment, score=1.0 / rank, reason=f"instant-{number} #{rank}")
                for rank, fragment in enumerate(chosen, start=1)
            ]
        )
    return lists


def register_instant(pipeline: contextpipe.Pipeline, lists: Sequence[Sequence[Candidate]]) -> None:
    """Register one instant strategy per list on `pipeline`."""
    strategies = [InstantStrategy(f"instant-{i}", c) for i, c in enumerate(lists)]
    pipeline.registry.register(InstantPlugin(strategies), "bench-instant")
