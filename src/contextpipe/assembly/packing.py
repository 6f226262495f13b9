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
4. Near-duplicates of a selected item are suppressed.
5. Packing stops once the room left is below both `stop_share` of the budget and
   `stop_tokens`: proving that nothing fits such a sliver means counting every item left
   at every depth, which took most of a request's packing time, to find a listing or a
   short text at most. The items left are dropped, saying so.

Token accounting uses the exact count of each rendered block followed by its separator.
The whole output is then counted exactly, and items are removed from the end of the
selection until it fits, so the output never exceeds the budget even when tokens merge
across separators. That count is the sum of its parts' counts when the tokenizer allows
it: a BPE tokenizer never merges across a line start that begins a new pre-tokenisation
piece (see `Tokenizer.additive_at_line_starts`), and every block starts a line. Otherwise
the whole output is counted. Counts and word sets are kept across requests
(`_packing_cache`).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

from ..config import PackingSettings
from ..core.errors import BudgetError
from ..core.models import ContextFragment, ContextRequest, DroppedRow, SourceRef
from ..text.tokens import Tokenizer
from ._packing_cache import PackingCache, Unit
from .fusion import FusedItem
from .rendering import Rendered, Renderer
from .variants import RequestVariants, VariantLookup, stored_shallower


@dataclass(frozen=True)
class PackingPolicy:
    """Packing knobs (see `[packing]` in config.toml)."""

    mmr_lambda: float = 1.0
    duplicate_threshold: float = 0.85
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


#: How many of the items about next in line have their variants read with those of an
#: item that needs its fallbacks. Few: once room runs short, packing soon stops (rule 5),
#: and at 100k fragments a request then looked up 3 items' fallbacks on average.
_READ_AHEAD = 8


class _Fallback:
    """A shallower depth of an item, rendered. Its cost is counted only as far as packing's
    decisions need: at the end of a selection most fallbacks are ruled out by their first
    lines, so the rest of their text is never encoded.
    """

    __slots__ = ("at_least", "block", "fragment", "option")

    def __init__(self, fragment: ContextFragment, block: str) -> None:
        self.fragment = fragment
        self.block = block
        self.at_least = 0  # a lower bound of its cost while `option` is None
        self.option: Selected | None = None  # with its exact cost, once counted


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


#: A fixed fragment the frame (what the output costs besides its blocks) is measured with,
#: so that the estimate depends on the renderer and the request only.
_PROBE = ContextFragment(
    id="probe",
    uko_uri="uko://probe",
    detail_depth=9,
    text="probe",
    token_count=1,
    source=SourceRef(uri="uko://probe", path="probe.txt", start_line=1, end_line=1, kind="text"),
    content_hash="probe",
)


def _splits_before(text: str) -> bool:
    """Whether `text` starts with a character that begins a new pre-tokenisation piece
    after a line break (not whitespace, not `/`): see `Tokenizer.additive_at_line_starts`.
    """
    return bool(text) and not text[0].isspace() and text[0] != "/"


#: Where a text may be cut into parts counted apart: a line start that begins a new piece
#: (see `Tokenizer.additive_at_line_starts`), and with `_WORD_CUTS` also a space after a
#: character other than whitespace (see `Tokenizer.additive_before_spaces`).
_LINE_CUTS = re.compile(r"(?<=\n)(?=[^\s/])")
_WORD_CUTS = re.compile(r"(?<=\n)(?=[^\s/])|(?<=\S)(?= )")

#: Characters counted at a time while a block's cost is only compared with the room left.
_CHUNK = 48


def _last_line_start(text: str) -> int:
    """Where the last line of `text` that starts a new piece begins (0: none but the
    first).
    """
    end = len(text)
    while (line_break := text.rfind("\n", 0, end)) >= 0:
        start = line_break + 1
        if start < len(text) and not text[start].isspace() and text[start] != "/":
            return start
        end = line_break
    return 0


def _last_space_start(text: str) -> int:
    """Where the last space of `text` after a character other than whitespace is (0:
    none).
    """
    space = text.rfind(" ")
    while space > 0:
        if not text[space - 1].isspace():
            return space
        space = text.rfind(" ", 0, space)
    return 0


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
        (acceptance counted it already), or None.
        """
        self._renderer = renderer
        self._tokenizer = tokenizer
        self._policy = policy
        self._cache = cache if cache is not None else PackingCache()
        self._text_tokens = text_tokens
        self._separator_tokens = self._count_small(renderer.separator)

    def _count_small(self, text: str) -> int:
        """Token count of a short text that comes back often (separators, frames)."""
        return self._cache.text_tokens.get(
            (self._tokenizer.name, text), lambda: self._tokenizer.count(text)
        )

    def _unit(self, block: str, fragment: ContextFragment | None = None) -> Unit:
        # Keyed by the block itself: whatever a renderer puts in it, the count is right.
        separator = self._renderer.separator
        return self._cache.units.get(
            (self._tokenizer.name, separator, block),
            lambda: Unit(self._block_tokens(block, fragment), _splits_before(block)),
        )

    def _block_tokens(self, block: str, fragment: ContextFragment | None) -> int:
        """The exact count of `block` and the separator after it. When the fragment's text
        is in the block at a line start, its count is known (acceptance counted it), and
        the tokenizer is additive at line starts (see `Tokenizer`), only the short parts
        around the text's ends are encoded: block + separator = prefix + head + middle +
        tail + rest, cut at line starts or, when the tokenizer is additive before spaces
        too, before a space (the text's first and last words then). Its count is
        count(prefix + head) + count(text) - count(head) - count(tail) + count(tail + rest)
        (the first and last counted as one when `rest` ends a line and `prefix` starts a
        piece); `head` is empty unless the text starts with whitespace, as indented code
        does, which is not cut from the header before it.
        """
        whole = block + self._renderer.separator
        known = None
        if fragment is not None and self._text_tokens and self._tokenizer.additive_at_line_starts:
            known = self._text_tokens(fragment)
        text = fragment.text if fragment is not None else ""
        start = block.find(text) if known is not None and text else -1
        if start < 0 or not (start == 0 or block[start - 1] == "\n"):
            return self._tokenizer.count(whole)
        assert known is not None
        cuts = self._cuts()
        if _splits_before(text):
            head = 0
        elif found := cuts.search(text):
            head = found.start()  # indented code: the text's first words go with the header
        else:
            return self._tokenizer.count(whole)
        cut = _last_line_start(text)
        if cuts is _WORD_CUTS:
            cut = max(cut, _last_space_start(text))
        if cut == 0:
            return self._tokenizer.count(whole)
        count = self._tokenizer.count
        tail, rest, prefix = text[cut:], whole[start + len(text) :], block[: start + head]
        inner = known - count(text[:head]) if head else known
        if rest.endswith("\n") and _splits_before(prefix):
            # One encoding for both ends: the separator ends a line, the header starts one.
            return inner - count(tail) + count(tail + rest + prefix)
        return (count(prefix) if prefix else 0) + inner - count(tail) + count(tail + rest)

    def _cuts(self) -> re.Pattern[str]:
        """Where texts may be cut into parts counted apart, for this tokenizer."""
        return _WORD_CUTS if self._tokenizer.additive_before_spaces else _LINE_CUTS

    def _option(self, item: FusedItem, fragment: ContextFragment) -> Selected:
        """`item` at the depth of `fragment`, rendered, with its cost."""
        block = self._renderer.block(fragment)
        return Selected(item, fragment, block, self._unit(block, fragment))

    def frame_tokens(self, request: ContextRequest) -> int:
        """Tokens the output costs besides its blocks (wrappers, system prompt, messages)."""
        one = self._count_small(self._renderer.render([_PROBE], request).counted)
        return max(0, one - self._unit(self._renderer.block(_PROBE)).tokens)

    def _output_tokens(
        self, selected: Sequence[Selected], rendered: Rendered, request: ContextRequest
    ) -> int:
        """The exact token count of `rendered`. When the tokenizer is additive at line starts
        (see `Tokenizer`) and every block begins a line, it is the sum of the parts' counts:
        the frame before, each block with its separator (cached), and the last block with
        the frame after. Otherwise the whole output is counted.
        """
        frame = self._renderer.frame(request)
        units = [option.unit for option in selected]
        if (
            not units
            or not self._tokenizer.additive_at_line_starts
            or not self._renderer.separator.endswith("\n")
            or not (frame.before == "" or frame.before.endswith("\n"))
            or not all(unit.splits_before for unit in (units if frame.before else units[1:]))
        ):
            return self._tokenizer.count(rendered.counted)
        last = self._tokenizer.count(selected[-1].block + frame.after)
        return self._count_small(frame.before) + sum(unit.tokens for unit in units[:-1]) + last

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
        chosen: list[tuple[int, Selected]] = []
        if eligible:
            remaining = request.budget - self.frame_tokens(request)
            stop = min(policy.stop_share * request.budget, policy.stop_tokens)
            chosen = self._select(items, eligible, remaining, stop, variants, dropped)
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
    ) -> list[tuple[int, Selected]]:
        policy = self._policy
        words = self._cache.word_bits()
        top = max(items[i].score for i in eligible) or 1.0
        relevance = {i: items[i].score / top for i in eligible}
        # Entries: (beyond the allocations, -value, fragment id, index, selected items seen,
        # fallback or None). Items within an allocation all come out before those beyond.
        heap: list[tuple[bool, float, str, int, int, Selected | None]] = [
            (items[i].beyond, -policy.mmr_lambda * relevance[i], items[i].fragment.id, i, 0, None)
            for i in eligible
        ]
        heapq.heapify(heap)
        max_similarity = dict.fromkeys(eligible, 0.0)
        most_similar: dict[int, int] = {}
        chosen: list[tuple[int, Selected]] = []
        chosen_bits: list[tuple[int, int, int]] = []  # index, word bitset, word count
        taken = _Taken()
        cheapest = 1 + self._separator_tokens
        shallower: dict[int, list[_Fallback]] = {}
        full_depth: dict[int, Selected | None] = {}
        read: set[int] = set()  # the items whose variants were read ahead

        def fallbacks(index: int) -> list[_Fallback]:
            """The item's shallower depths, deepest first (looked up once)."""
            if index not in shallower:
                if index not in read and isinstance(variants, RequestVariants):
                    # Fallbacks are needed once room runs short, and then by most of the
                    # items that come next: theirs are read with this one's, in one read.
                    # The heap's first entries: its top levels, near enough to what
                    # comes next for a read that only saves reads.
                    coming = [entry[3] for entry in heap[:_READ_AHEAD]]
                    read.update((index, *coming))
                    variants.read_ahead(items[i].fragment.uko_uri for i in (index, *coming))
                shallower[index] = self._shallower(items[index], variants)
            return shallower[index]

        while heap:
            beyond, _, fragment_id, index, seen, fallback = heapq.heappop(heap)
            if remaining < cheapest:
                dropped[index] = f"budget: no room left ({max(remaining, 0)} tokens)"
                continue
            if remaining < stop:
                dropped[index] = (
                    f"budget: packing stops with under {stop:g} tokens left ({remaining} left)"
                )
                continue
            if clash := taken.clash(items[index].fragment):
                dropped[index] = clash
                continue
            # Rule out what cannot fit at any depth before spending similarity work on it.
            if index not in full_depth:
                fragment = items[index].fragment
                full_depth[index] = (
                    None
                    if self._too_long(fragment, remaining)
                    else self._option(items[index], fragment)
                )
            option = full_depth[index]
            fits = option is not None and option.tokens <= remaining
            if (
                not fits
                and self._deepest_fitting(items[index], fallbacks(index), remaining) is None
            ):
                dropped[index] = self._no_fit(option, remaining)
                continue
            if seen < len(chosen):
                # The hot loop of packing: Jaccard on bitsets, inlined.
                bits, size = words.of(items[index].fragment)
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
                    fallback = self._deepest_fitting(items[index], fallbacks(index), remaining)
                value = self._value(relevance[index], max_similarity[index], fallback)
                heapq.heappush(heap, (beyond, -value, fragment_id, index, len(chosen), fallback))
                continue
            if max_similarity[index] >= policy.duplicate_threshold:
                twin = items[most_similar[index]].fragment.id
                dropped[index] = f"duplicate of {twin} (similarity {max_similarity[index]:.2f})"
                continue
            item = items[index]
            if fallback is None and option is not None and fits:
                fallback = option
            elif fallback is None:
                # Too big in full: a shallower depth competes again, at its lower value.
                fallback = self._deepest_fitting(item, fallbacks(index), remaining)
                if fallback is None:
                    dropped[index] = self._no_fit(option, remaining)
                    continue
                value = self._value(relevance[index], max_similarity[index], fallback)
                heapq.heappush(heap, (beyond, -value, fragment_id, index, len(chosen), fallback))
                continue
            if clash := taken.clash(fallback.fragment):
                dropped[index] = clash
                continue
            chosen.append((index, fallback))
            chosen_bits.append((index, *words.of(item.fragment)))
            taken.add(fallback.fragment)
            remaining -= fallback.tokens
        return chosen

    def _too_long(self, fragment: ContextFragment, remaining: int) -> bool:
        """Whether the fragment's text alone surely has more than `remaining` tokens, told
        from its length, so that a huge text is never counted.
        """
        chars_per_token = self._tokenizer.max_token_chars
        return chars_per_token is not None and len(fragment.text) > remaining * chars_per_token

    @staticmethod
    def _no_fit(option: Selected | None, remaining: int) -> str:
        if option is None:
            return f"budget: needs more than {remaining} tokens, {remaining} left"
        return f"budget: needs {option.tokens} tokens, {remaining} left"

    def _value(self, relevance: float, similarity: float, fallback: Selected | None) -> float:
        """MMR value, scaled by the worth of a shallower depth when the item is a fallback."""
        lam = self._policy.mmr_lambda
        worth = 1.0
        if fallback is not None:
            worth = self._policy.depth_values.get(fallback.fragment.detail_depth, 0.0)
        return (lam * relevance - (1 - lam) * similarity) * worth

    def _shallower(self, item: FusedItem, variants: VariantLookup) -> list[_Fallback]:
        """The node's shallower depths worth using, rendered, deepest first."""
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
            if fallback.option is None and fallback.at_least <= remaining:
                key = (self._tokenizer.name, self._renderer.separator, fallback.block)
                unit = self._cache.units.peek(key)
                if unit is None:
                    # A part counted by an earlier request may rule it out already.
                    fallback.at_least = self._cache.at_least.peek(key) or 0
                    if fallback.at_least > remaining:
                        continue
                    tokens, exact = self._tokens_within(fallback.block, remaining)
                    if not exact:
                        fallback.at_least = tokens
                        self._cache.at_least.put(key, tokens)
                        continue
                    unit = self._cache.units.get(
                        key, partial(Unit, tokens, _splits_before(fallback.block))
                    )
                fallback.option = Selected(item, fallback.fragment, fallback.block, unit)
            if fallback.option is not None and fallback.option.tokens <= remaining:
                return fallback.option
        return None

    def _tokens_within(self, block: str, limit: int) -> tuple[int, bool]:
        """The exact count of `block` and the separator after it, and True; or, once its
        first parts alone cost more than `limit`, their count and False. With a tokenizer
        additive at line starts (see `Tokenizer`), the count is the sum of the counts of
        the parts cut where a line starts a new piece (or before a space, see `_cuts`), each
        of them at least 0.
        """
        whole = block + self._renderer.separator
        if not self._tokenizer.additive_at_line_starts:
            return self._tokenizer.count(whole), True
        count, total, start = self._tokenizer.count, 0, 0
        for found in self._cuts().finditer(whole, _CHUNK):
            if found.start() - start < _CHUNK:
                continue
            total += count(whole[start : found.start()])
            start = found.start()
            if total > limit:
                return total, False
        return total + count(whole[start:]), True

    def _fit(
        self, chosen: list[tuple[int, Selected]], request: ContextRequest, dropped: dict[int, str]
    ) -> tuple[Rendered, int]:
        """Render, count exactly, and drop from the end until the output fits."""
        while True:
            selected = [option for _, option in chosen]
            rendered = self._renderer.render_blocks([option.block for option in selected], request)
            tokens = self._output_tokens(selected, rendered, request)
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
