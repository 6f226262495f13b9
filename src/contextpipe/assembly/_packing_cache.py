"""What packing remembers across assemblies (see `packing`): the same fragments come back
request after request, so their blocks' token counts and their word sets are kept.

Rules: every entry is a pure function of its key (a count is keyed by the tokenizer and the
exact text counted), so the cache never changes an output; every table is bounded, to stay
within ~30 MB in a long-running process; threads may share it (see `_memo`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

from ..core._memo import BoundedMemo
from ..core.models import ContextFragment
from ..text.words import words_in

# A request touches tens of fragments, so these sizes cover hundreds of recent requests.
#: Fragments whose word bitsets are kept (each an int up to `_VOCABULARY_CAP` bits wide).
_BITSETS_CAPACITY = 10_000
#: Blocks whose token counts are kept (the keys hold the blocks' text).
_UNITS_CAPACITY = 10_000
#: Short texts (separators, frames) whose token counts are kept.
_TEXTS_CAPACITY = 1024
#: Words in one bitset vocabulary before a fresh one starts.
_VOCABULARY_CAP = 1 << 14


class Unit(NamedTuple):
    """A fragment's block followed by the renderer's separator."""

    tokens: int
    #: The block starts with a character that begins a new pre-tokenisation piece after a
    #: line break (not whitespace, not `/`): see `Tokenizer.additive_at_line_starts`.
    splits_before: bool


class WordBits:
    """Word sets as integer bitsets over one growing vocabulary, so a Jaccard index is
    two `&`/`bit_count` operations. Bitsets are only comparable within one vocabulary.
    """

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self._bits = BoundedMemo[str, tuple[int, int]](_BITSETS_CAPACITY)
        self._lock = threading.Lock()  # one bit per word, even with threads adding words

    def of(self, fragment: ContextFragment) -> tuple[int, int]:
        """The fragment's word bitset and its number of words."""
        return self._bits.get(fragment.content_hash, lambda: self._compute(fragment.text))

    def _compute(self, text: str) -> tuple[int, int]:
        vocabulary = self.vocabulary
        words = frozenset(words_in(text.lower()))
        if not words:
            return 0, 0
        if new := words.difference(vocabulary):
            with self._lock:
                for word in new:
                    vocabulary.setdefault(word, len(vocabulary))
        # Words are only ever added, so every word has its position by now.
        positions = list(map(vocabulary.__getitem__, words))
        # Bits set in a byte array, then one int: `bits |= 1 << position` copies the whole
        # int (up to 2 KB) once per word.
        field = bytearray(max(positions) // 8 + 1)
        for position in positions:
            field[position >> 3] |= 1 << (position & 7)
        return int.from_bytes(field, "little"), len(positions)


class _Units:
    """Units by key, kept as plain tuples: the cyclic collector never stops tracking a
    named tuple, and thousands kept made every full collection longer.
    """

    def __init__(self, capacity: int) -> None:
        self._kept = BoundedMemo[tuple[str, str, str], tuple[int, bool]](capacity)

    def get(self, key: tuple[str, str, str], compute: Callable[[], Unit]) -> Unit:
        """The unit kept for `key`, computed (and kept) when missing."""

        def kept() -> tuple[int, bool]:
            unit = compute()
            return unit.tokens, unit.splits_before

        return Unit(*self._kept.get(key, kept))

    def peek(self, key: tuple[str, str, str]) -> Unit | None:
        """The unit kept for `key`, or None: nothing is computed."""
        found = self._kept.peek(key)
        return None if found is None else Unit(*found)


class PackingCache:
    """Token counts of rendered blocks (by tokenizer, separator and block) and of short
    texts (by tokenizer and text), and word bitsets, kept across assemblies; and for blocks
    only partly counted, the count of the part (a lower bound of the whole).
    """

    def __init__(self) -> None:
        self.units = _Units(_UNITS_CAPACITY)
        self.at_least = BoundedMemo[tuple[str, str, str], int](_UNITS_CAPACITY)
        self.text_tokens = BoundedMemo[tuple[str, str], int](_TEXTS_CAPACITY)
        self._word_bits = WordBits()

    def word_bits(self) -> WordBits:
        """The current vocabulary; a fresh one once it has grown past its cap, so that
        bitsets stay small. A packing run keeps the one it started with.
        """
        if len(self._word_bits.vocabulary) > _VOCABULARY_CAP:
            self._word_bits = WordBits()
        return self._word_bits
