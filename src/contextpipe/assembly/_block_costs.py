"""What a rendered block costs in tokens, counted no further than packing's decisions need
(see `packing`). Rules, in order:

1. A block's cost is the exact count of the block followed by the renderer's separator,
   kept across requests (`PackingCache`), keyed by the tokenizer, the separator and the
   block itself, so whatever a renderer puts in a block, the count is right.
2. When the fragment's text is in the block at a line start, its count is known
   (acceptance counted it), and the tokenizer is additive at line starts (see
   `Tokenizer.additive_at_line_starts`), only the short parts around the text's ends are
   encoded (`_known_text`).
3. A cost only compared with the room left is counted in parts, cut where the tokenizer
   is additive, and counting stops once the parts alone exceed the room: their count is a
   lower bound, kept too, so a later request rules the block out without encoding it.
4. A text longer than the room times the tokenizer's `max_token_chars` is never counted.
5. The output's count is the sum of its parts' counts when every block begins a new
   piece at a line start; otherwise the whole output is counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial

from ..core.models import ContextFragment, ContextRequest, SourceRef
from ..text.tokens import Tokenizer
from ._packing_cache import PackingCache, Unit
from .rendering import Rendered, Renderer

#: Where a text may be cut into parts counted apart: a line start that begins a new piece
#: (see `Tokenizer.additive_at_line_starts`), and with `_WORD_CUTS` also a space after a
#: character other than whitespace (see `Tokenizer.additive_before_spaces`).
_LINE_CUTS = re.compile(r"(?<=\n)(?=[^\s/])")
_WORD_CUTS = re.compile(r"(?<=\n)(?=[^\s/])|(?<=\S)(?= )")

#: Characters counted at a time while a block's cost is only compared with the room left.
_CHUNK = 48

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


class BlockCosts:
    """Token costs of one renderer's blocks under one tokenizer."""

    def __init__(
        self,
        renderer: Renderer,
        tokenizer: Tokenizer,
        cache: PackingCache,
        text_tokens: Callable[[ContextFragment], int | None] | None,
    ) -> None:
        """`text_tokens` gives the exact count of a fragment's text, when it is known
        (acceptance counted it), or None.
        """
        self._renderer = renderer
        self._tokenizer = tokenizer
        self._cache = cache
        self._text_tokens = text_tokens if tokenizer.additive_at_line_starts else None
        self._cuts = _WORD_CUTS if tokenizer.additive_before_spaces else _LINE_CUTS
        self.separator = self.small(renderer.separator)

    def small(self, text: str) -> int:
        """Token count of a short text that comes back often (separators, frames)."""
        return self._cache.text_tokens.get(
            (self._tokenizer.name, text), lambda: self._tokenizer.count(text)
        )

    def _key(self, block: str) -> tuple[str, str, str]:
        return (self._tokenizer.name, self._renderer.separator, block)

    def unit(self, block: str, fragment: ContextFragment | None = None) -> Unit:
        """The exact cost of `block` and the separator after it (rules 1 and 2)."""
        return self._cache.units.get(
            self._key(block),
            lambda: Unit(self._block_tokens(block, fragment), _splits_before(block)),
        )

    def within(self, block: str, limit: int) -> Unit | None:
        """The exact cost of `block` and the separator after it; or None once a part of it
        alone is known to cost more than `limit` (rule 3).
        """
        key = self._key(block)
        if (unit := self._cache.units.peek(key)) is not None:
            return unit
        if (self._cache.at_least.peek(key) or 0) > limit:
            return None
        tokens, exact = self._count_within(block + self._renderer.separator, limit)
        if not exact:
            self._cache.at_least.put(key, tokens)
            return None
        return self._cache.units.get(key, partial(Unit, tokens, _splits_before(block)))

    def surely_over(self, fragment: ContextFragment, limit: int) -> bool:
        """Whether the fragment's text alone surely has more than `limit` tokens, told
        from its length (rule 4).
        """
        chars_per_token = self._tokenizer.max_token_chars
        return chars_per_token is not None and len(fragment.text) > limit * chars_per_token

    def frame(self, request: ContextRequest) -> int:
        """Tokens the output costs besides its blocks (wrappers, system prompt, messages)."""
        one = self.small(self._renderer.render([_PROBE], request).counted)
        return max(0, one - self.unit(self._renderer.block(_PROBE)).tokens)

    def output(
        self, blocks: Sequence[tuple[str, Unit]], rendered: Rendered, request: ContextRequest
    ) -> int:
        """The exact token count of `rendered`, made of `blocks` in order (rule 5): the
        frame before, each block with its separator, and the last block with the frame
        after.
        """
        frame = self._renderer.frame(request)
        units = [unit for _, unit in blocks]
        if (
            not units
            or not self._tokenizer.additive_at_line_starts
            or not self._renderer.separator.endswith("\n")
            or not (frame.before == "" or frame.before.endswith("\n"))
            or not all(unit.splits_before for unit in (units if frame.before else units[1:]))
        ):
            return self._tokenizer.count(rendered.counted)
        last = self._tokenizer.count(blocks[-1][0] + frame.after)
        return self.small(frame.before) + sum(unit.tokens for unit in units[:-1]) + last

    def _block_tokens(self, block: str, fragment: ContextFragment | None) -> int:
        """Rule 2: block + separator = prefix + head + middle + tail + rest, cut at line
        starts or, when the tokenizer is additive before spaces too, before a space (the
        text's first and last words then). Its count is count(prefix + head) + count(text)
        - count(head) - count(tail) + count(tail + rest) (the first and last counted as
        one when `rest` ends a line and `prefix` starts a piece); `head` is empty unless
        the text starts with whitespace, as indented code does, which is not cut from the
        header before it.
        """
        whole = block + self._renderer.separator
        known = None
        if fragment is not None and self._text_tokens is not None:
            known = self._text_tokens(fragment)
        text = fragment.text if fragment is not None else ""
        start = block.find(text) if known is not None and text else -1
        if known is None or start < 0 or not (start == 0 or block[start - 1] == "\n"):
            return self._tokenizer.count(whole)
        if _splits_before(text):
            head = 0
        elif found := self._cuts.search(text):
            head = found.start()  # indented code: the text's first words go with the header
        else:
            return self._tokenizer.count(whole)
        cut = _last_line_start(text)
        if self._cuts is _WORD_CUTS:
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

    def _count_within(self, whole: str, limit: int) -> tuple[int, bool]:
        """Rule 3: the exact count of `whole` and True; or, once its first parts alone cost
        more than `limit`, their count and False. Parts are cut where the tokenizer is
        additive; without that, the whole is counted at once.
        """
        if not self._tokenizer.additive_at_line_starts:
            return self._tokenizer.count(whole), True
        count, total, start = self._tokenizer.count, 0, 0
        for found in self._cuts.finditer(whole, _CHUNK):
            if found.start() - start < _CHUNK:
                continue
            total += count(whole[start : found.start()])
            start = found.start()
            if total > limit:
                return total, False
        return total + count(whole[start:]), True
