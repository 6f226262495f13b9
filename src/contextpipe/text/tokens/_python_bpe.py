"""Exact BPE token counts of Latin-1 text in pure Python (speed machinery for `tokenizers`).

Building tiktoken's encoder for o200k takes about 0.15 s of CPU, all of it holding the GIL:
a third of a command-line query. A query counts only tens of kilobytes, nearly all of it
Latin-1 (code, English, the `·` of markdown headers), so this module counts that without
the encoder, with tiktoken's own algorithm:

- The text is cut into pieces by the encoding's pre-tokenisation pattern, with the `regex`
  package (which tiktoken depends on and uses for its reference implementation). On
  characters up to U+00FF it cuts as tiktoken's Rust engine does: the classes the patterns
  use (letters by case, marks, digits, whitespace) agree there, as the tokenizer scenarios
  check on random text.
- A piece that is a token is one token; otherwise its UTF-8 bytes are merged pairwise,
  always the adjacent pair with the lowest rank (the leftmost among equals), until no pair
  is a token: tiktoken's `byte_pair_merge`. The count is the number of parts left.
- Only the ranks of tokens made of the bytes Latin-1 text encodes to are needed
  (`LATIN1_BYTES`): merging such bytes only ever forms, and looks up, such byte strings,
  and one that is not among those tokens is no token at all. That is 137k of o200k's 200k
  tokens, read from the rank cache in about 35 ms.

Counts of pieces are remembered per counter: code repeats its identifiers. Python counts
about three times slower than tiktoken, so a counter declines (and `tokenizers` hands bulk
counting, as in indexing, to the encoder) once it has counted `PYTHON_CHARS` characters.
"""

from __future__ import annotations

import re

import regex

#: Characters a process counts in pure Python before building tiktoken's encoder pays for
#: itself (the build costs about what counting 1.5 MB more slowly does).
PYTHON_CHARS = 1_000_000
#: Every byte of the UTF-8 form of a text of characters U+0000 to U+00FF.
LATIN1_BYTES = frozenset([*range(0x80), *range(0x80, 0xC0), 0xC2, 0xC3])

_BEYOND_LATIN1 = re.compile("[^\x00-\xff]")


def latin1_ranks(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """The ranks of the tokens made only of `LATIN1_BYTES`."""
    return {token: rank for token, rank in ranks.items() if LATIN1_BYTES.issuperset(token)}


class Latin1Counter:
    """Counts the tokens of Latin-1 texts with one encoding's pattern and `latin1_ranks`."""

    def __init__(self, pattern: str, ranks: dict[bytes, int]) -> None:
        self._pieces = regex.compile(pattern)
        self._ranks = ranks
        self._memo: dict[str, int] = {}  # bounded: at most PYTHON_CHARS characters pass here
        self._counted = 0  # characters so far (a race between threads only shifts the end)

    def count(self, text: str) -> int | None:
        """Tokens of `text`; None when it holds a character beyond U+00FF, or when this
        counter has counted `PYTHON_CHARS` characters already.
        """
        if self._counted >= PYTHON_CHARS or not (
            text.isascii() or _BEYOND_LATIN1.search(text) is None
        ):
            return None
        self._counted += len(text)
        memo = self._memo
        total = 0
        for piece in self._pieces.findall(text):
            tokens = memo.get(piece)
            if tokens is None:
                tokens = memo[piece] = self._piece_tokens(piece.encode("utf-8"))
            total += tokens
        return total

    def _piece_tokens(self, piece: bytes) -> int:
        rank = self._ranks.get
        if rank(piece) is not None:
            return 1
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            lowest, at = None, -1
            for i in range(len(parts) - 1):
                found = rank(parts[i] + parts[i + 1])
                if found is not None and (lowest is None or found < lowest):
                    lowest, at = found, i
            if lowest is None:
                break
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        return len(parts)
