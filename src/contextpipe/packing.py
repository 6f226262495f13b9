"""Packing: choose what goes into the budget, at which depth, and never exceed it.

Selection is a lazy greedy over maximal marginal relevance (MMR): an item's value is
`lambda x relevance - (1 - lambda) x max similarity to every item already selected`, and
since that value only falls as the selection grows, an item is re-scored only when it
reaches the top of the heap. Each node is taken at most once, at the deepest detail depth
that still fits (full text, else a skeleton or a one-line listing from the store): the
greedy approximation of the multiple-choice knapsack over depths. Near-duplicates of a
selected item are suppressed.

Token accounting uses the exact count of each rendered block; the whole rendered output
is then counted once more and items are removed from the end of the selection until it
fits, so the output never exceeds the budget even when tokens merge across separators.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .errors import BudgetError
from .fusion import FusedItem
from .models import ContextFragment, ContextRequest, DroppedFragment, dropped_fragments
from .rendering import Rendered, Renderer
from .tokenizers import Tokenizer

VariantLookup = Callable[[str], Sequence[ContextFragment]]

_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class PackingPolicy:
    """Packing knobs (see `[packing]` in config.toml)."""

    mmr_lambda: float = 0.75
    duplicate_threshold: float = 0.85
    min_score: float = 0.0
    depth_values: dict[int, float] = field(default_factory=lambda: {9: 1.0, 4: 0.6, 0: 0.25})


@dataclass(frozen=True)
class Selected:
    """An item in the packed context, at the depth chosen for it."""

    item: FusedItem
    fragment: ContextFragment
    tokens: int


@dataclass(frozen=True)
class Packed:
    """What the packer chose, what it left out, and the rendered output."""

    selected: tuple[Selected, ...]
    dropped: tuple[DroppedFragment, ...]
    rendered: Rendered
    tokens_used: int


class BlockTokenCache:
    """Token counts of rendered blocks, kept across assemblies: the same fragments come
    back request after request. The final exact count of the whole output still decides.
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self._capacity = capacity
        self._counts: dict[tuple[str, str, str, str], int] = {}

    def get(self, key: tuple[str, str, str, str]) -> int | None:
        """The cached count, if any."""
        return self._counts.get(key)

    def put(self, key: tuple[str, str, str, str], tokens: int) -> None:
        """Remember a count; the oldest entries go first when full."""
        if len(self._counts) >= self._capacity:
            del self._counts[next(iter(self._counts))]
        self._counts[key] = tokens


def _deepest_fitting(options: Sequence[Selected], remaining: int) -> Selected | None:
    return next((option for option in options if option.tokens <= remaining), None)


@lru_cache(maxsize=65_536)
def _word_set(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.lower()))


class _Pool:
    """Items being considered. Word sets become integer bitsets over this pool's
    vocabulary, so a Jaccard index is two `&`/`bit_count` operations.
    """

    def __init__(self, items: Sequence[FusedItem]) -> None:
        self.items = items
        self._bits: dict[int, tuple[int, int]] = {}
        self._vocabulary: dict[str, int] = {}

    def bitset(self, index: int) -> tuple[int, int]:
        """The item's word bitset and its number of words."""
        found = self._bits.get(index)
        if found is None:
            vocabulary = self._vocabulary
            bits = 0
            for word in _word_set(self.items[index].fragment.text):
                bits |= 1 << vocabulary.setdefault(word, len(vocabulary))
            found = (bits, bits.bit_count())
            self._bits[index] = found
        return found


class Packer:
    """Packs fused items into a budget for one renderer and tokenizer."""

    def __init__(
        self,
        renderer: Renderer,
        tokenizer: Tokenizer,
        policy: PackingPolicy,
        block_tokens: BlockTokenCache | None = None,
    ) -> None:
        self._renderer = renderer
        self._tokenizer = tokenizer
        self._policy = policy
        self._separator_tokens = tokenizer.count(renderer.separator)
        self._block_tokens = block_tokens if block_tokens is not None else BlockTokenCache()

    def _cost(self, fragment: ContextFragment) -> int:
        key = (
            type(self._renderer).__name__,
            self._tokenizer.name,
            fragment.id,
            fragment.content_hash,
        )
        tokens = self._block_tokens.get(key)
        if tokens is None:
            tokens = self._tokenizer.count(self._renderer.block(fragment))
            self._block_tokens.put(key, tokens)
        return tokens + self._separator_tokens

    def _frame_tokens(self, request: ContextRequest, sample: ContextFragment) -> int:
        """Tokens the output costs besides its blocks (wrappers, system prompt, messages)."""
        one = self._tokenizer.count(self._renderer.render([sample], request).counted)
        return max(0, one - self._tokenizer.count(self._renderer.block(sample)))

    def pack(
        self,
        items: Sequence[FusedItem],
        request: ContextRequest,
        variants: VariantLookup,
    ) -> Packed:
        """Choose items for `request.budget`; `items` are best first."""
        policy = self._policy
        dropped: dict[int, str] = {}
        eligible: list[int] = []
        for index, item in enumerate(items):
            if item.score < policy.min_score:
                dropped[index] = (
                    f"below threshold: fused score {item.score:.4f} < min_score {policy.min_score}"
                )
            else:
                eligible.append(index)
        pool = _Pool(items)
        chosen: list[tuple[int, Selected]] = []
        if eligible:
            remaining = request.budget - self._frame_tokens(request, items[eligible[0]].fragment)
            chosen = self._select(pool, eligible, remaining, variants, dropped)
        rendered, tokens_used = self._fit(chosen, request, dropped)
        return Packed(
            selected=tuple(selected for _, selected in chosen),
            dropped=dropped_fragments(
                {"id": items[i].fragment.id, "uko_uri": items[i].fragment.uko_uri, "reason": reason}
                for i, reason in sorted(dropped.items())
            ),
            rendered=rendered,
            tokens_used=tokens_used,
        )

    def _select(
        self,
        pool: _Pool,
        eligible: list[int],
        remaining: int,
        variants: VariantLookup,
        dropped: dict[int, str],
    ) -> list[tuple[int, Selected]]:
        policy = self._policy
        top = max(pool.items[i].score for i in eligible) or 1.0
        relevance = {i: pool.items[i].score / top for i in eligible}
        # Entries: (-value, fragment id, index, selected items seen, fallback or None).
        heap: list[tuple[float, str, int, int, Selected | None]] = [
            (-policy.mmr_lambda * relevance[i], pool.items[i].fragment.id, i, 0, None)
            for i in eligible
        ]
        heapq.heapify(heap)
        max_similarity = dict.fromkeys(eligible, 0.0)
        most_similar: dict[int, int] = {}
        chosen: list[tuple[int, Selected]] = []
        chosen_bits: list[tuple[int, int, int]] = []  # index, word bitset, word count
        cheapest = 1 + self._separator_tokens
        shallower: dict[int, list[Selected]] = {}

        def fallbacks(index: int) -> list[Selected]:
            """The item's shallower depths with their costs, deepest first (looked up once)."""
            if index not in shallower:
                shallower[index] = self._shallower(pool.items[index], variants)
            return shallower[index]

        while heap:
            _, fragment_id, index, seen, fallback = heapq.heappop(heap)
            if remaining < cheapest:
                dropped[index] = f"budget: no room left ({max(remaining, 0)} tokens)"
                continue
            # Rule out what cannot fit at any depth before spending similarity work on it.
            full = self._cost(pool.items[index].fragment)
            if full > remaining and all(f.tokens > remaining for f in fallbacks(index)):
                dropped[index] = f"budget: needs {full} tokens, {remaining} left"
                continue
            if seen < len(chosen):
                # The hot loop of packing: Jaccard on bitsets, inlined.
                bits, size = pool.bitset(index)
                best, best_other = max_similarity[index], most_similar.get(index, -1)
                for other, other_bits, other_size in chosen_bits[seen:]:
                    shared = (bits & other_bits).bit_count()
                    union = size + other_size - shared
                    similarity = shared / union if union else 1.0
                    if similarity > best:
                        best, best_other = similarity, other
                max_similarity[index] = best
                if best_other >= 0:
                    most_similar[index] = best_other
                if fallback is not None and fallback.tokens > remaining:
                    fallback = _deepest_fitting(fallbacks(index), remaining)
                value = self._value(relevance[index], max_similarity[index], fallback)
                heapq.heappush(heap, (-value, fragment_id, index, len(chosen), fallback))
                continue
            if max_similarity[index] >= policy.duplicate_threshold:
                twin = pool.items[most_similar[index]].fragment.id
                dropped[index] = f"duplicate of {twin} (similarity {max_similarity[index]:.2f})"
                continue
            item = pool.items[index]
            if fallback is None and full <= remaining:
                fallback = Selected(item, item.fragment, full)
            elif fallback is None:
                # Too big in full: a shallower depth competes again, at its lower value.
                fallback = _deepest_fitting(fallbacks(index), remaining)
                if fallback is None:
                    dropped[index] = f"budget: needs {full} tokens, {remaining} left"
                    continue
                value = self._value(relevance[index], max_similarity[index], fallback)
                heapq.heappush(heap, (-value, fragment_id, index, len(chosen), fallback))
                continue
            chosen.append((index, fallback))
            chosen_bits.append((index, *pool.bitset(index)))
            remaining -= fallback.tokens
        return chosen

    def _value(self, relevance: float, similarity: float, fallback: Selected | None) -> float:
        """MMR value, scaled by the worth of a shallower depth when the item is a fallback."""
        lam = self._policy.mmr_lambda
        worth = 1.0
        if fallback is not None:
            worth = self._policy.depth_values.get(fallback.fragment.detail_depth, 0.0)
        return (lam * relevance - (1 - lam) * similarity) * worth

    def _shallower(self, item: FusedItem, variants: VariantLookup) -> list[Selected]:
        """The node's shallower depths worth using, with their costs, deepest first."""
        return [
            Selected(item, variant, self._cost(variant))
            for variant in variants(item.fragment.uko_uri)
            if variant.detail_depth < item.fragment.detail_depth
            and self._policy.depth_values.get(variant.detail_depth, 0.0) > 0.0
        ]

    def _fit(
        self, chosen: list[tuple[int, Selected]], request: ContextRequest, dropped: dict[int, str]
    ) -> tuple[Rendered, int]:
        """Render, count exactly, and drop from the end until the output fits."""
        while True:
            rendered = self._renderer.render([s.fragment for _, s in chosen], request)
            tokens = self._tokenizer.count(rendered.counted)
            if tokens <= request.budget:
                return rendered, tokens
            if not chosen:
                raise BudgetError(
                    f"budget of {request.budget} tokens is smaller than the {tokens} tokens the "
                    f"{request.output.value} output needs before any context"
                )
            index, _ = chosen.pop()
            dropped[index] = (
                f"budget: rendered output was {tokens} tokens, over the budget of {request.budget}"
            )
