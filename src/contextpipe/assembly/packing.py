"""Packing: choose what goes into the budget, at which depth, and never exceed it.

Selection is a lazy greedy over maximal marginal relevance (MMR): an item's value is
`lambda x relevance - (1 - lambda) x max similarity to every item already selected`, and
since that value only falls as the selection grows, an item is re-scored only when it
reaches the top of the heap. Rules, in order:

1. Items within their strategies' allocations are considered before any item beyond them
   (see `acceptance`): what lies beyond an allocation only fills the room left over.
2. No node enters twice (at any depth), and no two spans of one source overlap at one
   depth: a later item that would is dropped, naming what is already in the context.
3. Each node is taken at the deepest detail depth that still fits (full text, else a
   skeleton or a one-line listing from the store, when the item is the node's text as
   stored): the greedy approximation of the multiple-choice knapsack over depths. A text
   too long to fit is never counted: the tokenizer's `max_token_chars` tells from its
   length alone.
4. Near-duplicates of a selected item are suppressed: an item whose word set is alike
   (Jaccard >= `duplicate_threshold`), or, where both have vectors (`vectors`, read from
   the store a batch at a time as items reach this rule), whose vector is within
   `paraphrase_cosine` and which shares words and numbers (`claim_overlap` of their
   content words >= `paraphrase_overlap`): the same claim in other words. Near vectors
   alone mean the same topic, and other numbers another claim: both stay.
5. Packing stops once the room left is below both `stop_share` of the budget and
   `stop_tokens`: proving that nothing fits such a sliver means counting every item left
   at every depth, which took most of a request's packing time, to find a listing or a
   short text at most. The items left are dropped, saying so.

Token accounting uses the exact count of each rendered block followed by its separator.
The whole output is then counted exactly, and items are removed from the end of the
selection until it fits, so the output never exceeds the budget even when tokens merge
across separators. How a cost is counted no further than these decisions need is
`_block_costs`'s business; counts and word sets are kept across requests
(`_packing_cache`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ..config import PackingSettings
from ..core.errors import BudgetError
from ..core.models import ContextFragment, ContextRequest, DroppedRow
from ..text.tokens import Tokenizer
from ..text.words import claim_overlap, content_words
from ._block_costs import BlockCosts
from ._packing_cache import PackingCache, Unit, WordBits
from .fusion import FusedItem
from .rendering import Rendered, Renderer
from .variants import VariantLookup, stored_shallower

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: The stored vectors of fragments, None for one without (as `VectorSearch.vectors`).
VectorsOf = Callable[[Sequence[ContextFragment]], Sequence["NDArray[np.float32] | None"]]
#: Items whose vectors are read at a time (rule 4): more than most requests select.
_VECTOR_BATCH = 32


@dataclass(frozen=True)
class PackingPolicy:
    """Packing knobs (see `[packing]` in config.toml)."""

    mmr_lambda: float = 1.0
    duplicate_threshold: float = 0.85
    paraphrase_cosine: float = 0.9
    paraphrase_overlap: float = 0.5
    min_score: float = 0.0
    depth_values: dict[int, float] = field(default_factory=lambda: {9: 1.0, 4: 0.6, 0: 0.25})
    stop_share: float = 0.01
    stop_tokens: int = 64

    @classmethod
    def from_settings(cls, packing: PackingSettings) -> PackingPolicy:
        """The policy `[packing]` in config.toml describes."""
        return cls(
            mmr_lambda=packing.mmr_lambda,
            duplicate_threshold=packing.duplicate_threshold,
            paraphrase_cosine=packing.paraphrase_cosine,
            paraphrase_overlap=packing.paraphrase_overlap,
            min_score=packing.min_score,
            depth_values=packing.depth_values(),
            stop_share=packing.stop_share,
            stop_tokens=packing.stop_tokens,
        )


class Selected(NamedTuple):
    """An item in the packed context, at the depth chosen for it."""

    item: FusedItem
    fragment: ContextFragment
    block: str  # the fragment as rendered
    unit: Unit  # the block's cost, with one separator

    @property
    def tokens(self) -> int:
        """Tokens the item adds to the output."""
        return self.unit.tokens


@dataclass(frozen=True)
class Packed:
    """What the packer chose, what it left out, and the rendered output."""

    selected: tuple[Selected, ...]
    dropped: tuple[DroppedRow, ...]
    rendered: Rendered
    tokens_used: int


class _Taken:
    """The nodes and line spans already in the context. No node enters twice, at any
    depth, and no two spans of one source overlap at one depth: fusion keeps different
    texts of the same place apart, so the packer must not emit both.
    """

    def __init__(self) -> None:
        self._nodes: dict[str, str] = {}  # node URI -> the id of its selected fragment
        self._spans: dict[tuple[str, int], list[tuple[int, int, str]]] = {}

    def clash(self, fragment: ContextFragment) -> str:
        """Why `fragment` cannot join the context ('' when it can)."""
        taken = self._nodes.get(fragment.uko_uri)
        if taken is not None:
            return f"same node as {taken}, already in the context"
        source = fragment.source
        for start, end, other in self._spans.get((source.path, fragment.detail_depth), ()):
            if source.start_line <= end and start <= source.end_line:
                where = f"lines {start}-{end} of {source.path}"
                return f"overlaps {where} ({other}), already in the context"
        return ""

    def add(self, fragment: ContextFragment) -> None:
        """Record a selected fragment."""
        source = fragment.source
        self._nodes[fragment.uko_uri] = fragment.id
        spans = self._spans.setdefault((source.path, fragment.detail_depth), [])
        spans.append((source.start_line, source.end_line, fragment.id))


class _Fallback:
    """A shallower depth of an item, rendered; its cost is counted once packing asks."""

    __slots__ = ("block", "fragment", "option")

    def __init__(self, fragment: ContextFragment, block: str) -> None:
        self.fragment = fragment
        self.block = block
        self.option: Selected | None = None  # with its exact cost, once counted


class _Similarity:
    """Each item's greatest word-set similarity (Jaccard) to the items selected so far,
    brought up to date lazily: only when the item reaches the top of the heap.
    """

    def __init__(self, words: WordBits, items: Sequence[FusedItem]) -> None:
        self._words = words
        self._items = items
        self._selected: list[tuple[int, int, int]] = []  # index, word bitset, word count
        self.greatest: dict[int, float] = {}
        self.twin: dict[int, int] = {}  # index -> the selected item it is most like

    @property
    def selected(self) -> int:
        """How many selected items the similarities are kept against."""
        return len(self._selected)

    def catch_up(self, index: int, seen: int) -> float:
        """The item's greatest similarity, compared with the items selected after the
        first `seen` (the earlier ones were compared before).
        """
        bits, size = self._words.of(self._items[index].fragment)
        best, twin = self.greatest.get(index, 0.0), self.twin.get(index, -1)
        # The hot loop of packing: Jaccard on bitsets, inlined.
        for other, other_bits, other_size in self._selected[seen:]:
            shared = (bits & other_bits).bit_count()
            union = size + other_size - shared
            similarity = shared / union if union else 1.0
            if similarity > best:
                best, twin = similarity, other
        self.greatest[index] = best
        if twin >= 0:
            self.twin[index] = twin
        return best

    def add(self, index: int) -> None:
        """Record a selected item."""
        self._selected.append((index, *self._words.of(self._items[index].fragment)))


class _Paraphrases:
    """Rule 4's second half: which selected item an item says again in other words. The
    vectors are read as items reach the rule, a batch at a time: the item and the next
    ones in `items`' order, which come to the rule next.
    """

    def __init__(
        self, vectors_of: VectorsOf, items: Sequence[FusedItem], policy: PackingPolicy
    ) -> None:
        self._vectors_of = vectors_of
        self._content: dict[int, frozenset[str]] = {}
        self._items = items
        self._policy = policy
        self._vectors: dict[int, NDArray[np.float32] | None] = {}
        self._selected: list[tuple[int, NDArray[np.float32]]] = []

    def _vector(self, index: int) -> NDArray[np.float32] | None:
        if index not in self._vectors:
            ahead = range(index, min(index + _VECTOR_BATCH, len(self._items)))
            batch = [i for i in ahead if i not in self._vectors]
            found = self._vectors_of([self._items[i].fragment for i in batch])
            self._vectors.update(zip(batch, found, strict=True))
        return self._vectors[index]

    def of(self, index: int) -> tuple[int, float, float] | None:
        """The selected item `index` paraphrases, the cosine and the shared words' share."""
        if not self._selected or (mine := self._vector(index)) is None:
            return None
        for other, theirs in self._selected:
            cosine = float(mine @ theirs)
            if cosine < self._policy.paraphrase_cosine:
                continue
            overlap = claim_overlap(self._words(index), self._words(other))
            if overlap >= self._policy.paraphrase_overlap:
                return other, cosine, overlap
        return None

    def _words(self, index: int) -> frozenset[str]:
        """An item's content words (read only for pairs of near vectors: few)."""
        if index not in self._content:
            self._content[index] = content_words(self._items[index].fragment.text)
        return self._content[index]

    def add(self, index: int) -> None:
        """Record a selected item."""
        if (vector := self._vector(index)) is not None:
            self._selected.append((index, vector))


class Packer:
    """Packs fused items into a budget for one renderer and tokenizer."""

    def __init__(
        self,
        renderer: Renderer,
        tokenizer: Tokenizer,
        policy: PackingPolicy,
        cache: PackingCache | None = None,
        text_tokens: Callable[[ContextFragment], int | None] | None = None,
    ) -> None:
        """`text_tokens` gives the exact count of a fragment's text, when it is known
        (acceptance counted it), or None.
        """
        self._renderer = renderer
        self._policy = policy
        self._cache = cache if cache is not None else PackingCache()
        self._costs = BlockCosts(renderer, tokenizer, self._cache, text_tokens)

    def frame_tokens(self, request: ContextRequest) -> int:
        """Tokens the output costs besides its blocks (wrappers, system prompt, messages)."""
        return self._costs.frame(request)

    def pack(
        self,
        items: Sequence[FusedItem],
        request: ContextRequest,
        variants: VariantLookup,
        vectors: VectorsOf | None = None,
    ) -> Packed:
        """Choose items for `request.budget`; `items` are best first; `vectors` tells
        paraphrases apart (rule 4), when the store has vectors.
        """
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
        chosen: list[tuple[int, Selected]] = []
        if eligible:
            remaining = request.budget - self._costs.frame(request)
            stop = min(policy.stop_share * request.budget, policy.stop_tokens)
            chosen = self._select(items, eligible, remaining, stop, variants, dropped, vectors)
        rendered, tokens_used = self._fit(chosen, request, dropped)
        return Packed(
            selected=tuple(selected for _, selected in chosen),
            dropped=tuple(
                (items[i].fragment.id, items[i].fragment.uko_uri, reason)
                for i, reason in sorted(dropped.items())
            ),
            rendered=rendered,
            tokens_used=tokens_used,
        )

    def _select(
        self,
        items: Sequence[FusedItem],
        eligible: list[int],
        remaining: int,
        stop: float,
        variants: VariantLookup,
        dropped: dict[int, str],
        vectors: VectorsOf | None,
    ) -> list[tuple[int, Selected]]:
        """The lazy greedy over MMR of the module's docstring, its rules in order."""
        policy = self._policy
        top = max(items[i].score for i in eligible) or 1.0
        relevance = {i: items[i].score / top for i in eligible}
        # Entries: (beyond the allocations, -value, fragment id, index, selected items seen,
        # the depth it competes at, or None for its full text). Rule 1: items within an
        # allocation all come out before those beyond.
        heap: list[tuple[bool, float, str, int, int, Selected | None]] = [
            (items[i].beyond, -policy.mmr_lambda * relevance[i], items[i].fragment.id, i, 0, None)
            for i in eligible
        ]
        heapq.heapify(heap)
        similarity = _Similarity(self._cache.word_bits(), items)
        paraphrases = None if vectors is None else _Paraphrases(vectors, items, policy)
        chosen: list[tuple[int, Selected]] = []
        taken = _Taken()
        cheapest = 1 + self._costs.separator
        full_depth: dict[int, Selected | None] = {}  # None: too long to count (rule 3)
        shallower: dict[int, list[_Fallback]] = {}

        def fallbacks(index: int) -> list[_Fallback]:
            if index not in shallower:
                shallower[index] = self._shallower(items[index], variants)
            return shallower[index]

        while heap:
            beyond, _, fragment_id, index, seen, depth = heapq.heappop(heap)
            item = items[index]
            # Rule 5: stop once the room left is a sliver.
            if remaining < cheapest:
                dropped[index] = f"budget: no room left ({max(remaining, 0)} tokens)"
                continue
            if remaining < stop:
                dropped[index] = (
                    f"budget: packing stops with under {stop:g} tokens left ({remaining} left)"
                )
                continue
            # Rule 2: no node twice, no overlapping spans.
            if clash := taken.clash(item.fragment):
                dropped[index] = clash
                continue
            # Rule 3, first: rule out what fits at no depth before any similarity work.
            if index not in full_depth:
                full_depth[index] = self._full(item, remaining)
            option = full_depth[index]
            fits = option is not None and option.tokens <= remaining
            if not fits and self._deepest_fitting(item, fallbacks(index), remaining) is None:
                dropped[index] = self._no_fit(option, remaining)
                continue
            # MMR: an item compared with fewer than all selected items is re-scored and
            # goes back; its value only fell.
            if seen < similarity.selected:
                similarity.catch_up(index, seen)
                if depth is not None and depth.tokens > remaining:
                    depth = self._deepest_fitting(item, fallbacks(index), remaining)
                value = self._value(relevance[index], similarity.greatest[index], depth)
                heapq.heappush(
                    heap, (beyond, -value, fragment_id, index, similarity.selected, depth)
                )
                continue
            # Rule 4: near-duplicates of a selected item.
            if similarity.greatest.get(index, 0.0) >= policy.duplicate_threshold:
                twin = items[similarity.twin[index]].fragment.id
                dropped[index] = (
                    f"duplicate of {twin} (similarity {similarity.greatest[index]:.2f})"
                )
                continue
            if paraphrases is not None and (said := paraphrases.of(index)) is not None:
                other, cosine, overlap = said
                dropped[index] = (
                    f"paraphrase of {items[other].fragment.id}"
                    f" (cosine {cosine:.2f}, shared words {overlap:.2f})"
                )
                continue
            # Rule 3: the deepest depth that fits; a shallower one competes again, at its
            # lower value.
            if depth is None and option is not None and fits:
                depth = option
            elif depth is None:
                depth = self._deepest_fitting(item, fallbacks(index), remaining)
                if depth is None:
                    dropped[index] = self._no_fit(option, remaining)
                    continue
                value = self._value(relevance[index], similarity.greatest.get(index, 0.0), depth)
                heapq.heappush(
                    heap, (beyond, -value, fragment_id, index, similarity.selected, depth)
                )
                continue
            if clash := taken.clash(depth.fragment):
                dropped[index] = clash
                continue
            chosen.append((index, depth))
            similarity.add(index)
            if paraphrases is not None:
                paraphrases.add(index)
            taken.add(depth.fragment)
            remaining -= depth.tokens
        return chosen

    def _full(self, item: FusedItem, remaining: int) -> Selected | None:
        """The item in full, with its cost; None when its text is too long to count."""
        fragment = item.fragment
        if self._costs.surely_over(fragment, remaining):
            return None
        block = self._renderer.block(fragment)
        return Selected(item, fragment, block, self._costs.unit(block, fragment))

    @staticmethod
    def _no_fit(option: Selected | None, remaining: int) -> str:
        if option is None:
            return f"budget: needs more than {remaining} tokens, {remaining} left"
        return f"budget: needs {option.tokens} tokens, {remaining} left"

    def _value(self, relevance: float, similarity: float, depth: Selected | None) -> float:
        """MMR value, scaled by the worth of a shallower depth when the item is a fallback."""
        lam = self._policy.mmr_lambda
        worth = 1.0
        if depth is not None:
            worth = self._policy.depth_values.get(depth.fragment.detail_depth, 0.0)
        return (lam * relevance - (1 - lam) * similarity) * worth

    def _shallower(self, item: FusedItem, variants: VariantLookup) -> list[_Fallback]:
        """The item's shallower depths worth using, rendered, deepest first."""
        return [
            _Fallback(variant, self._renderer.block(variant))
            for variant in stored_shallower(item.fragment, variants)
            if self._policy.depth_values.get(variant.detail_depth, 0.0) > 0.0
        ]

    def _deepest_fitting(
        self, item: FusedItem, fallbacks: Sequence[_Fallback], remaining: int
    ) -> Selected | None:
        """The deepest fallback that fits `remaining`, with its exact cost. Room only
        shrinks during a selection, so a cost above it rules a fallback out for good.
        """
        for fallback in fallbacks:
            if fallback.option is None:
                unit = self._costs.within(fallback.block, remaining)
                if unit is None:
                    continue
                fallback.option = Selected(item, fallback.fragment, fallback.block, unit)
            if fallback.option.tokens <= remaining:
                return fallback.option
        return None

    def _fit(
        self, chosen: list[tuple[int, Selected]], request: ContextRequest, dropped: dict[int, str]
    ) -> tuple[Rendered, int]:
        """Render, count exactly, and drop from the end until the output fits."""
        while True:
            blocks = [(option.block, option.unit) for _, option in chosen]
            rendered = self._renderer.render_blocks([block for block, _ in blocks], request)
            tokens = self._costs.output(blocks, rendered, request)
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
