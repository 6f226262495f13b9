"""The embedded store's keyword index: BM25 top-k over the full-text fragments in a few
milliseconds at 100k fragments, scored as SQLite FTS5's `bm25()` scores the same OR query
on the FTS5 table beside it.

Why it exists: FTS5 scores every row an OR query matches before `LIMIT` applies, and a
query of common words matches nearly every row (0.1-0.25 s at 100k fragments). Here the
postings of a query's words are read as arrays and scored with numpy.

Scoring (FTS5's `bm25()` with column weights, k1 = 1.2, b = 0.75): a fragment scores
`sum over query terms t of idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avglen))`,
where `f` is the term's occurrences weighted by column (title 3, text 1, identifier words
0.5), `len` the fragment's tokens in all columns, `idf(t) = ln((N - n + 0.5) / (n + 0.5))`
(at least 1e-6) over the N searchable fragments, n of which hold `t`. A query term that is
several tokens (a quoted phrase) is a phrase: FTS5 finds and scores it. A snake_case
identifier is not: the columns hold it joined as well (`search_columns`), one token.

The statistics (N, each n, `avglen`) are those of the fragments the request may see: memory
hidden from it counts nowhere, so that another scope's memory changes no score a request
is given (with none hidden, they are FTS5's). A phrase's FTS5 score is taken apart into its
weighted count and scored again with them.

Tokens are FTS5's own: text is split into words where FTS5's `unicode61` tokenizer splits
it, and each distinct word is handed once to an in-memory FTS5 table with the store's
tokenizer, whose stems are then the index's terms.

Layout (tables of the store's database, so that a file's postings commit with the file):

- `text_terms`: term -> id.
- `text_snapshot`, `text_postings`: the snapshot, an immutable inverted index: the rowids
  (ascending) and token counts of its fragments, and per term the positions of the
  fragments holding it (int32) with the weighted counts (uint32, in half occurrences).
- `text_segments`: fragments written since the snapshot, one row per batch the writer
  flushed: their rowids, token counts and (term id, weighted count) pairs.
- `text_removed`: rowids of fragments removed since the snapshot. Rowids are never given
  twice (new fragments get rowids above `text_floor` in meta, the highest the index has
  held), so a removed rowid never hides a later fragment.

The writer folds the changes into a new snapshot when they outgrow `_FOLD_BASE` plus
`1/_FOLD_SHARE` of the snapshot, in a transaction of its own, so that a query reads a few
pending rows at most; an interrupted fold leaves the index as it was.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from unicodedata import category

import numpy as np

from ._text_layout import TOKENIZE, fts_expression, query_token

#: Column weights in half occurrences: title 3, text 1, identifier words 0.5 (a heading or
#: definition name that matches says more than a word in the body).
COLUMN_WEIGHTS = (6, 2, 1)
_K1 = 1.2
_B = 0.75
#: FTS5's floor for the idf of a term most fragments hold.
_MIN_IDF = 1e-6
#: Bytes of postings a view remembers for later queries, at most.
_CACHE_BYTES = 64 * 1024 * 1024
#: Words whose tokens a process remembers, at most.
_KNOWN_WORDS = 1_000_000
#: Fragments written at once.
_BATCH = 2_000
#: Fragments ranked past the limit, to see whether score ties run past the cut.
_TIE_MARGIN = 8
#: Relative room left for rounding when a bound decides that a fragment cannot catch up.
_SLACK = 1e-9
#: Pruning is given up once the fragments found so far are more than 1/_PRUNED_SHARE of all.
_PRUNED_SHARE = 8
#: Candidates fewer than 1/_LOOKUP_SHARE of a term's postings are looked up in them.
_LOOKUP_SHARE = 8
#: Pending changes that never trigger a fold, and the share of the snapshot that does.
_FOLD_BASE = 2_000
_FOLD_SHARE = 20

_POSITIONS = np.dtype("<i4")
_COUNTS = np.dtype("<u4")
_ROWIDS = np.dtype("<i8")
# A batch's columns are split in one pass, joined by a separator that is a word of its own.
_COLUMN_END = "\x00"
# In ASCII, FTS5's unicode61 keeps letters and digits in tokens and folds case as lower().
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|\x00")

if TYPE_CHECKING:  # numpy.typing costs a tenth of numpy's import
    import numpy.typing as npt

    Int = npt.NDArray[np.int64]
    Float = npt.NDArray[np.float64]


class TextIndexError(Exception):
    """The keyword index's tables do not hold what they must; says what is wrong."""


class _Stems:
    """FTS5's tokens of single words, from an in-memory FTS5 table with the index's
    tokenizer; each word is asked once per process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str, ...]] = {}
        self._memory: sqlite3.Connection | None = None

    def __call__(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Each word's tokens (most words have one; some none, some several)."""
        wanted = set(words)
        known = self._known
        new = [word for word in wanted if word not in known]
        if new:
            with self._lock:
                if len(known) + len(new) > _KNOWN_WORDS:
                    known.clear()  # a long-running service sees ever more words
                self._learn([word for word in wanted if word not in known])
        return {word: known[word] for word in wanted}

    def _learn(self, words: list[str]) -> None:
        if self._memory is None:
            memory = sqlite3.connect(":memory:", check_same_thread=False)
            memory.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '{TOKENIZE}')")
            memory.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")
            self._memory = memory
        memory = self._memory
        memory.execute("BEGIN")
        memory.executemany(
            "INSERT INTO words(rowid, word) VALUES (?, ?)", enumerate(words, start=1)
        )
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in memory.execute("SELECT term, doc, offset FROM tokens"):
            found.setdefault(int(doc), []).append((int(offset), str(term)))
        memory.execute("ROLLBACK")
        for number, word in enumerate(words, start=1):
            self._known[word] = tuple(term for _, term in sorted(found.get(number, ())))


tokens_of = _Stems()


def split_words(text: str) -> list[str]:
    """The words of a text, split where FTS5's `unicode61` tokenizer splits it (a column
    separator is a word of its own); FTS5 then makes each word's tokens (`tokens_of`).
    """
    if text.isascii():
        return _ASCII_WORDS.findall(text.lower())
    # Elsewhere FTS5 folds case itself (lower() would split a dotted capital I in two).
    return _unicode_words().findall(text.replace("_", " "))


@functools.cache
def _unicode_words() -> re.Pattern[str]:
    """Runs of what unicode61 keeps in tokens: letters and numbers (`\\w` without the
    underscore), nonspacing marks and private-use characters; built on the first text
    that is not ASCII. The marks of the supplementary planes (historic scripts, musical
    notation) are left out: a class holding any is matched three times slower.
    """
    codes = {code for code in range(0x80, 0x10000) if category(chr(code)) == "Mn"}
    # As ranges: a class of single characters this long is matched slowly.
    starts = sorted(code for code in codes if code - 1 not in codes)
    ends = sorted(code for code in codes if code + 1 not in codes)
    marks = "".join(f"{chr(a)}-{chr(b)}" for a, b in zip(starts, ends, strict=True))
    # Variation selectors (marks beyond the loop), then the private-use areas.
    beyond = "\U000e0100-\U000e01ef\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
    return re.compile(f"[\\w{marks}{beyond}]+|\\x00")


def query_tokens(term: str) -> tuple[str, ...]:
    """The index terms a query term is made of (one: a word; several: a phrase)."""
    words = split_words(term)
    stems = tokens_of(words)
    return tuple(token for word in words for token in stems[word])


class TextIndexWriter:
    """Keeps the keyword index in step with the fragments, inside the writer's transactions.
    Added fragments wait to be written as one segment (a statement per file costs more
    than the work): `flush` before every commit.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        # Every word seen, numbered, and the term ids of each number (a table of offsets
        # into one flat array). Term ids never change once written: this outlives commits.
        # The column separator is word 0, of no term.
        self._words: dict[str, int] = {_COLUMN_END: 0}
        self._starts: Int = np.zeros(2, np.int64)
        self._terms: Int = np.zeros(0, np.int64)
        self._waiting: dict[int, Sequence[str]] = {}

    def add(self, fragments: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index fragments: (rowid, (title, text, words)) each, rowids above the floor."""
        self._waiting.update(fragments)
        if len(self._waiting) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the fragments added since the last flush as one segment."""
        fragments, self._waiting = list(self._waiting.items()), {}
        if not fragments:
            return
        words = split_words(
            _COLUMN_END.join(
                text.replace(_COLUMN_END, " ") if _COLUMN_END in text else text
                for _, columns in fragments
                for text in columns
            )
        )
        numbers = self._numbers(words)
        # Each word is as many terms as FTS5 makes of it (almost always one).
        per_word = self._starts[numbers + 1] - self._starts[numbers]
        word_of = np.repeat(np.arange(len(words)), per_word)
        shift = np.repeat(self._starts[numbers] - (np.cumsum(per_word) - per_word), per_word)
        terms = self._terms[shift + np.arange(len(word_of))]
        # A word's column: how many separators come before it.
        column = np.cumsum(numbers == 0)[word_of]
        documents = column // len(COLUMN_WEIGHTS)
        weights = np.asarray(COLUMN_WEIGHTS, np.int64)[column % len(COLUMN_WEIGHTS)]
        count = len(fragments)
        # Term-major, so that merging segments merges sorted runs.
        pairs, inverse = np.unique(terms * count + documents, return_inverse=True)
        rowids = np.fromiter((rowid for rowid, _ in fragments), np.int64, count)
        self._connection.execute(
            "INSERT INTO text_segments(documents, rowids, lengths, docs, terms, counts)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                count,
                rowids.astype(_ROWIDS).tobytes(),
                np.bincount(documents, minlength=count).astype(_COUNTS).tobytes(),
                (pairs % count).astype(_POSITIONS).tobytes(),
                (pairs // count).astype(_POSITIONS).tobytes(),
                # Sums of small integers: exact in float64.
                np.bincount(inverse, weights=weights).astype(_COUNTS).tobytes(),
            ),
        )
        self._raise_floor(int(rowids.max()))

    def _numbers(self, words: list[str]) -> Int:
        """Each word's number; words not seen before are learnt first."""
        numbers = np.fromiter(map(self._words.get, words, itertools.repeat(-1)), np.int64)
        unknown = np.flatnonzero(numbers < 0)
        if len(unknown):
            self._learn(sorted({words[at] for at in unknown.tolist()}))
            numbers[unknown] = [self._words[words[at]] for at in unknown.tolist()]
        return numbers

    def _learn(self, new: list[str]) -> None:
        """Number these new words, with their term ids (new terms are written)."""
        stems = tokens_of(new)
        terms = sorted({term for word in new for term in stems[word]})
        ids = self._lookup(terms)
        missing = [term for term in terms if term not in ids]
        if missing:
            self._connection.executemany(
                "INSERT INTO text_terms(term) VALUES (?)", [(term,) for term in missing]
            )
            ids.update(self._lookup(missing))
        first = len(self._words)
        self._words.update(zip(new, range(first, first + len(new)), strict=True))
        sizes = np.fromiter((len(stems[word]) for word in new), np.int64, len(new))
        flat = np.fromiter((ids[t] for word in new for t in stems[word]), np.int64)
        self._starts = np.concatenate([self._starts, self._starts[-1] + np.cumsum(sizes)])
        self._terms = np.concatenate([self._terms, flat])

    def _lookup(self, terms: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for start in range(0, len(terms), 500):
            chunk = terms[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for term, term_id in self._connection.execute(
                f"SELECT term, id FROM text_terms WHERE term IN ({marks})", chunk
            ):
                found[str(term)] = int(term_id)
        return found

    def remove(self, rowids: Sequence[int]) -> None:
        """Forget fragments: those not written yet are dropped, the others marked removed
        (a rowid is never given again, so a mark never hides a later fragment).
        """
        waiting = self._waiting
        written = [(rowid,) for rowid in rowids if waiting.pop(rowid, None) is None]
        if not written:
            return
        floor = self.floor()
        self._connection.executemany(
            "INSERT OR IGNORE INTO text_removed(rowid) VALUES (?)",
            [row for row in written if row[0] <= floor],
        )

    def floor(self) -> int:
        """The highest rowid the index has held; new fragments get higher ones."""
        row = self._connection.execute("SELECT value FROM meta WHERE key = 'text_floor'").fetchone()
        return int(row[0]) if row else 0

    def _raise_floor(self, rowid: int) -> None:
        self._connection.execute(
            "UPDATE meta SET value = max(CAST(value AS INTEGER), ?) WHERE key = 'text_floor'",
            (rowid,),
        )

    def index_existing(self) -> None:
        """Index every row of the FTS5 table (an upgrade from a layout without this index)."""
        cursor = self._connection.execute("SELECT rowid, title, text, words FROM fts")
        while batch := cursor.fetchmany(_BATCH):
            self.add([(int(row[0]), (str(row[1]), str(row[2]), str(row[3]))) for row in batch])
        self.flush()

    def fold_due(self) -> bool:
        """Whether the pending changes have outgrown what a query should read."""
        pending, snapshot = self._connection.execute(
            "SELECT (SELECT coalesce(sum(documents), 0) FROM text_segments)"
            " + (SELECT count(*) FROM text_removed),"
            " (SELECT length(value) FROM text_snapshot WHERE key = 'rowids')"
        ).fetchone()
        documents = int(snapshot or 0) // _ROWIDS.itemsize
        return int(pending) > _FOLD_BASE + documents // _FOLD_SHARE

    def fold(self) -> None:
        """Merge the pending changes into a new snapshot (in the caller's transaction)."""
        connection = self._connection
        documents = read_documents(connection, by_term=False)
        live = documents.live
        # Old position -> new position of each live fragment (-1: removed).
        moved = np.cumsum(live) - 1
        moved[~live] = -1
        terms: list[Int] = []
        positions: list[Int] = []
        counts: list[Int] = []
        postings = connection.execute("SELECT id, docs, counts FROM text_postings")
        for term_id, docs, weights in postings:
            old, weight = _postings_arrays(docs, weights, documents.snapshot)
            terms.append(np.full(len(old), int(term_id), np.int64))
            positions.append(old)
            counts.append(weight)
        pending = documents.pending
        terms.append(pending.terms)
        positions.append(pending.positions)
        counts.append(pending.counts)
        all_positions = moved[np.concatenate(positions)]
        alive = all_positions >= 0
        all_terms = np.concatenate(terms)[alive]
        all_positions = all_positions[alive]
        all_counts = np.concatenate(counts)[alive]
        # Sorted runs (the snapshot's postings, each segment's): a stable sort merges them.
        order = np.argsort(all_terms * max(len(live), 1) + all_positions, kind="stable")
        all_terms = all_terms[order]
        all_positions = all_positions[order].astype(_POSITIONS)
        all_counts = all_counts[order].astype(_COUNTS)
        starts = np.flatnonzero(np.r_[True, all_terms[1:] != all_terms[:-1]])
        bounds = [*(int(start) for start in starts[: len(order)]), len(order)]
        connection.execute("DELETE FROM text_postings")
        connection.executemany(
            "INSERT INTO text_postings(id, docs, counts) VALUES (?, ?, ?)",
            (
                (
                    int(all_terms[start]),
                    all_positions[start:end].tobytes(),
                    all_counts[start:end].tobytes(),
                )
                for start, end in itertools.pairwise(bounds)
            ),
        )
        connection.executemany(
            "INSERT OR REPLACE INTO text_snapshot(key, value) VALUES (?, ?)",
            [
                ("rowids", documents.rowids[live].astype(_ROWIDS).tobytes()),
                ("lengths", documents.lengths[live].astype(_COUNTS).tobytes()),
            ],
        )
        connection.execute("DELETE FROM text_segments")
        connection.execute("DELETE FROM text_removed")
        connection.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'text_snapshot'"
        )


def _array(blob: object, dtype: np.dtype[Any], what: str) -> npt.NDArray[Any]:
    """The array a blob holds (read-only, no copy)."""
    if not isinstance(blob, bytes) or len(blob) % dtype.itemsize:
        raise TextIndexError(f"keyword index: {what} cut short")
    return np.frombuffer(blob, dtype)


def _postings_arrays(docs: object, counts: object, size: int) -> tuple[Int, Int]:
    """A snapshot term's positions (ascending) and weighted counts, checked against the
    snapshot at their ends (a query reads them: the check must cost nothing).
    """
    positions = _array(docs, _POSITIONS, "postings")
    weights = _array(counts, _COUNTS, "postings")
    if len(positions) != len(weights) or (
        len(positions) and (int(positions[0]) < 0 or int(positions[-1]) >= size)
    ):
        raise TextIndexError("keyword index: postings do not add up")
    return positions, weights


@dataclass(frozen=True)
class Pending:
    """The postings of the fragments written since the snapshot, sorted by term."""

    terms: Int
    positions: Int
    counts: Int


@dataclass(frozen=True)
class Documents:
    """Every fragment the index holds, in rowid order: the snapshot's, then those written
    since (`pending` holds their postings); `live` is False for removed ones.
    """

    rowids: Int
    lengths: Int
    live: npt.NDArray[np.bool_]
    snapshot: int
    pending: Pending


def read_documents(connection: sqlite3.Connection, by_term: bool = True) -> Documents:
    """The index's fragments and the postings of the pending ones (sorted by term unless
    `by_term` is False).
    """
    found = dict(connection.execute("SELECT key, value FROM text_snapshot").fetchall())
    rowids = [_array(found.get("rowids", b""), _ROWIDS, "snapshot")]
    lengths = [_array(found.get("lengths", b""), _COUNTS, "snapshot")]
    if len(rowids[0]) != len(lengths[0]):
        raise TextIndexError("keyword index: snapshot does not add up")
    snapshot = len(rowids[0])
    positions: list[Int] = []
    terms: list[Int] = []
    counts: list[Int] = []
    first = snapshot
    for row in connection.execute(
        "SELECT documents, rowids, lengths, docs, terms, counts FROM text_segments ORDER BY id"
    ):
        parts = [
            _array(blob, dtype, "pending segment")
            for blob, dtype in zip(
                row[1:], (_ROWIDS, _COUNTS, _POSITIONS, _POSITIONS, _COUNTS), strict=True
            )
        ]
        documents = int(row[0])
        if not (
            len(parts[0]) == len(parts[1]) == documents
            and len(parts[2]) == len(parts[3]) == len(parts[4])
            and (not len(parts[2]) or 0 <= int(parts[2].min()) <= int(parts[2].max()) < documents)
        ):
            raise TextIndexError("keyword index: pending segment does not add up")
        rowids.append(parts[0])
        lengths.append(parts[1])
        positions.append(parts[2] + first)
        terms.append(parts[3])
        counts.append(parts[4])
        first += documents
    all_rowids = np.concatenate(rowids).astype(np.int64)
    if np.any(all_rowids[1:] <= all_rowids[:-1]):
        raise TextIndexError("keyword index: fragments out of order")
    live = np.ones(len(all_rowids), np.bool_)
    removed = np.fromiter(
        (row[0] for row in connection.execute("SELECT rowid FROM text_removed")), np.int64
    )
    at = np.clip(np.searchsorted(all_rowids, removed), 0, max(len(all_rowids) - 1, 0))
    if len(all_rowids):
        live[at[all_rowids[at] == removed]] = False
    empty = np.zeros(0, np.int64)
    pending_terms = np.concatenate(terms).astype(np.int64) if terms else empty
    pending_positions = np.concatenate(positions).astype(np.int64) if positions else empty
    pending_counts = np.concatenate(counts) if counts else empty
    # Each segment is sorted by term: a stable sort merges them, positions in order.
    order = np.argsort(pending_terms, kind="stable") if by_term else slice(None)
    return Documents(
        all_rowids,
        np.concatenate(lengths).astype(np.int64),
        live,
        snapshot,
        Pending(pending_terms[order], pending_positions[order], pending_counts[order]),
    )


def verify(connection: sqlite3.Connection) -> int:
    """Check the whole index (for the store's full check): the snapshot and the pending
    segments add up (`read_documents`), every snapshot term's postings add up and are in
    order, every pending term is a known term, and the live fragments are exactly the
    searchable ones (the FTS5 table's rows). How many there are; a `TextIndexError` else.
    """
    found = read_documents(connection, by_term=False)
    for docs, counts in connection.execute("SELECT docs, counts FROM text_postings"):
        positions, _ = _postings_arrays(docs, counts, found.snapshot)
        if np.any(positions[1:] <= positions[:-1]):
            raise TextIndexError("keyword index: postings out of order")
    known = np.fromiter(
        (row[0] for row in connection.execute("SELECT id FROM text_terms")), np.int64
    )
    if not np.isin(found.pending.terms, known).all():
        raise TextIndexError("keyword index: a pending term is not a known term")
    live = found.rowids[found.live]
    searchable = np.fromiter(
        (row[0] for row in connection.execute("SELECT rowid FROM fts ORDER BY rowid")), np.int64
    )
    if not np.array_equal(live, searchable):
        raise TextIndexError(
            f"keyword index: holds {len(live):,} fragments, the store {len(searchable):,}"
            " searchable ones"
        )
    return len(live)


@dataclass(frozen=True)
class Phrase:
    """A query term of several tokens, left to FTS5."""

    text: str


class TextView:
    """The keyword index at one state of the store: every searchable fragment (the
    snapshot's live ones and the pending ones), their lengths and the BM25 statistics.
    Immutable; shared by every thread that reads this state.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        found = read_documents(connection)
        self._size = found.snapshot
        self._pending = found.pending
        self.rowids = found.rowids
        self.live = found.live
        self._lengths = found.lengths.astype(np.float64)
        documents = int(self.live.sum())
        self._all_live = documents == len(self.live)
        self.documents = documents
        # Token counts are whole numbers: their sums are exact, whatever is left out.
        self._length_sum = float(self._lengths[self.live].sum())
        self._everything = self._made_statistics(documents, self._length_sum, None)
        # The live postings of the terms searched lately: they never change in a view, and
        # a process that answers many requests (a service) asks for the same words again.
        self._cache: OrderedDict[str, tuple[Int, Int] | None] = OrderedDict()
        # What each of those terms adds to the score of each fragment holding it: fixed in a
        # view too, so worked out once, not per query.
        self._contributions: dict[str, Float] = {}
        self._cached_bytes = 0
        self._cache_lock = threading.Lock()

    def _made_statistics(
        self, documents: int, length_sum: float, unseen: npt.NDArray[np.bool_] | None
    ) -> _Statistics:
        average = length_sum / documents if documents else 1.0
        norm: Float = _K1 * (1 - _B + _B * self._lengths / average)
        return _Statistics(documents, norm, unseen)

    def _statistics(self, hidden: Int) -> _Statistics:
        """BM25's statistics without the fragments at these positions (module docstring).
        Made for each search that leaves some out: keeping them saved 0.2-0.3 ms of a
        20 ms request at 100k fragments.
        """
        if not len(hidden):
            return self._everything
        gone = hidden[self.live[hidden]]
        unseen = np.zeros(len(self.rowids), np.bool_)
        unseen[gone] = True
        return self._made_statistics(
            self.documents - len(gone),
            self._length_sum - float(self._lengths[gone].sum()),
            unseen,
        )

    def best(
        self,
        connection: sqlite3.Connection,
        terms: Sequence[str | Phrase],
        limit: int,
        filtered: bool,
        unseen: Sequence[int] | Int = (),
    ) -> tuple[Int, Float]:
        """The rowids of the fragments matching any query term, with their BM25 scores
        under the statistics of what the request may see, except the `unseen` rowids
        (memory it may not see, and what came after its `as_of`). Unless `filtered` (then
        the best that fit may lie anywhere), only those that may be among the best `limit`
        (and a margin): every fragment left out scores below each of those.

        Pruning (MaxScore): terms are taken in order of the most they can add to a score
        (idf * (k1 + 1)); once the `need`-th best score so far beats what all the terms left
        could add together, no fragment that none of the terms so far holds can catch up, and
        the rest are scored only at the fragments found so far. Scores are then summed in
        query-term order, as a full evaluation sums them, so both give the same numbers.
        """
        hidden = self._positions(unseen)
        statistics = self._statistics(hidden)
        found = self._terms(connection, terms, statistics)
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        norm = statistics.norm
        candidates = None if filtered else self._pruned(found, limit + _TIE_MARGIN, hidden, norm)
        if candidates is None:
            scores = np.zeros(len(self.rowids), np.float64)
            for term in found:
                term.add_to(scores, norm)
            scores[hidden] = 0.0
            positions = np.flatnonzero(scores > 0)
            return self.rowids[positions], scores[positions]
        values = np.zeros(len(candidates), np.float64)
        for term in found:
            values += term.at(candidates, norm)
        return self.rowids[candidates], values

    def scores_of(
        self,
        connection: sqlite3.Connection,
        terms: Sequence[str | Phrase],
        rowids: Sequence[int],
        unseen: Sequence[int] | Int = (),
    ) -> Float:
        """The BM25 scores `best` gives these fragments, in their order, whatever their
        rank, for a request that may not see the `unseen` rowids (0 for one that holds no
        query term, or that this view does not hold).
        """
        statistics = self._statistics(self._positions(unseen))
        at, held = self._located(rowids)
        scores = np.zeros(len(at), np.float64)
        if not held.any():
            return scores
        held &= self.live[at]
        positions = np.unique(at[held])  # ascending, as `_Term.at` reads them
        if not len(positions):
            return scores
        values = np.zeros(len(positions), np.float64)
        for term in self._terms(connection, terms, statistics):
            values += term.at(positions, statistics.norm)
        scores[held] = values[np.searchsorted(positions, at[held])]
        return scores

    def _located(self, rowids: Sequence[int] | Int) -> tuple[Int, npt.NDArray[np.bool_]]:
        """Where each of these rowids would be in this view, and whether it is there."""
        wanted = np.asarray(rowids, np.int64)
        if not len(self.rowids):
            return np.zeros(len(wanted), np.int64), np.zeros(len(wanted), np.bool_)
        at = np.clip(np.searchsorted(self.rowids, wanted), 0, len(self.rowids) - 1)
        return at, self.rowids[at] == wanted

    def _positions(self, rowids: Sequence[int] | Int) -> Int:
        """Where these rowids are in this view (those it does not hold are left out)."""
        at, held = self._located(rowids)
        return at[held]

    def _pruned(self, found: Sequence[_Term], need: int, hidden: Int, norm: Float) -> Int | None:
        """The fragments other than `hidden` (positions) that may be among the `need`
        best, or None when pruning saves nothing (every term had to be taken whole, or the
        fragments found are too many). A hidden fragment never takes a place among those
        `need`, so it never holds back the cut.
        """
        size = len(self.rowids)
        ordered = sorted(found, key=lambda t: -t.bound)
        if len(ordered[0].positions) * _PRUNED_SHARE > size:
            return None  # even the rarest term is common
        held = np.zeros(size, np.bool_)
        partial = np.zeros(size, np.float64)
        left = sum(term.bound for term in found)
        taken = 0
        for taken, term in enumerate(ordered, start=1):
            left -= term.bound
            held[term.positions] = True
            held[hidden] = False
            term.add_to(partial, norm)
            if taken < len(found):
                candidates = np.flatnonzero(held)
                if len(candidates) * _PRUNED_SHARE > size:
                    return None  # scoring every fragment costs less than looking them up
                if len(candidates) >= need:
                    so_far = partial[candidates]
                    cut = float(np.partition(so_far, len(candidates) - need)[-need])
                    # `left` is a sum of floats: leave room for its rounding.
                    reach = left * (1 + _SLACK) + _SLACK
                    if reach < cut:
                        # Nor can a fragment found so far that stays below the cut with
                        # everything left added.
                        return candidates[so_far + reach >= cut]
        return None

    def _terms(
        self,
        connection: sqlite3.Connection,
        terms: Sequence[str | Phrase],
        statistics: _Statistics,
    ) -> list[_Term]:
        """The query's terms that some fragment holds, in query order, with their postings."""
        if not self.documents:
            return []
        postings = self._postings(connection, [t for t in terms if isinstance(t, str)])
        found: list[_Term] = []
        for term in terms:
            if isinstance(term, Phrase):
                positions, values = self._phrase(connection, term, statistics)
                if len(positions):
                    found.append(_Term(positions, None, values, float(values.max())))
                continue
            held = postings[term]
            if held is None:
                continue
            positions, counts = held
            idf = statistics.idf(positions)
            found.append(_Term(positions, idf, counts, idf * (_K1 + 1)))
            self._contribution(term, found[-1], statistics)
        return found

    def _contribution(self, term: str, found: _Term, statistics: _Statistics) -> None:
        """Give `found` what `term` adds to each fragment holding it: under the statistics
        of every fragment, remembered while the term's postings are; under a request's own,
        worked out when needed.
        """
        if statistics is not self._everything:
            return
        with self._cache_lock:
            known = self._contributions.get(term)
        values = found.values(statistics.norm, known)
        if known is None:
            with self._cache_lock:
                if term in self._cache and term not in self._contributions:
                    self._contributions[term] = values
                    self._cached_bytes += values.nbytes

    def _postings(
        self, connection: sqlite3.Connection, terms: Sequence[str]
    ) -> dict[str, tuple[Int, Int] | None]:
        """Each term's postings among the live fragments (None: no fragment holds it)."""
        wanted = set(terms)
        with self._cache_lock:
            found = {term: self._cache[term] for term in wanted if term in self._cache}
            for term in found:
                self._cache.move_to_end(term)
        missing = sorted(wanted.difference(found))
        if not missing:
            return found
        ids, snapshot = _postings(connection, missing, self._size)
        for term in missing:
            term_id = ids.get(term)
            found[term] = None if term_id is None else self._live(term_id, snapshot.get(term_id))
        with self._cache_lock:
            for term in missing:
                held = found[term]
                self._cache[term] = held
                self._cached_bytes += 0 if held is None else held[0].nbytes + held[1].nbytes
            while self._cached_bytes > _CACHE_BYTES and self._cache:
                term, held = self._cache.popitem(last=False)
                self._cached_bytes -= 0 if held is None else held[0].nbytes + held[1].nbytes
                if (values := self._contributions.pop(term, None)) is not None:
                    self._cached_bytes -= values.nbytes
        return found

    def _live(self, term_id: int, snapshot: tuple[Int, Int] | None) -> tuple[Int, Int] | None:
        """A term's postings, the snapshot's then the pending ones, without removed ones."""
        pending = self._pending
        low, high = np.searchsorted(pending.terms, [term_id, term_id + 1])
        positions, counts = pending.positions[low:high], pending.counts[low:high]
        if snapshot is not None and len(positions):
            positions = np.concatenate([snapshot[0], positions])
            counts = np.concatenate([snapshot[1], counts])
        elif snapshot is not None:
            positions, counts = snapshot
        if not self._all_live:
            alive = self.live[positions]
            positions, counts = positions[alive], counts[alive]
        return (positions, counts) if len(positions) else None

    def _phrase(
        self, connection: sqlite3.Connection, phrase: Phrase, statistics: _Statistics
    ) -> tuple[Int, Float]:
        """The fragments holding a phrase and what it adds to their scores: FTS5's, under
        the statistics of every fragment, scored again under `statistics`.
        """
        rows = connection.execute(
            f"SELECT rowid, -bm25(fts, {COLUMN_WEIGHTS[0] / 2}, {COLUMN_WEIGHTS[1] / 2},"
            f" {COLUMN_WEIGHTS[2] / 2}) FROM fts WHERE fts MATCH ? ORDER BY rowid",
            (fts_expression([phrase.text]),),
        ).fetchall()
        rowids = np.fromiter((row[0] for row in rows), np.int64, len(rows))
        values = np.fromiter((row[1] for row in rows), np.float64, len(rows))
        at, known = self._located(rowids)
        at, values = at[known], values[known]
        if statistics.unseen is None or not len(at):
            return at, values
        # FTS5 gave idf * f * (k1 + 1) / (f + norm) over every fragment: its f, weighed
        # again with what the request may see.
        everything = self._everything
        share = values / everything.idf(at)
        weighted = share * everything.norm[at] / (_K1 + 1 - share)
        again = weighted * (_K1 + 1) / (weighted + statistics.norm[at])
        return at, again * statistics.idf(at)


@dataclass(frozen=True, eq=False)
class _Statistics:
    """BM25's statistics as one request sees the index: the fragments it may see, their
    length norms, and which fragments it may not see (by position; None: it sees all).
    """

    documents: int
    norm: Float
    unseen: npt.NDArray[np.bool_] | None

    def idf(self, positions: Int) -> float:
        """The idf of a term held by the fragments at these positions (FTS5's floor)."""
        holders = len(positions)
        if self.unseen is not None:
            holders -= int(np.count_nonzero(self.unseen[positions]))
        idf = math.log((self.documents - holders + 0.5) / (holders + 0.5))
        return idf if idf > 0 else _MIN_IDF


@dataclass(eq=False)
class _Term:
    """A query term's postings: ascending positions of the live fragments holding it, and
    either its idf and weighted counts in half occurrences (an index term) or the scores
    FTS5 gave (a phrase). `bound` is the most it adds to any score.
    """

    positions: Int
    idf: float | None
    weights: npt.NDArray[Any]
    bound: float
    _values: Float | None = None

    def _scores(self, weights: npt.NDArray[Any], norm: Float) -> Float:
        """What the term adds to fragments with these weighted counts and norms."""
        if self.idf is None:
            return weights
        # FTS5's grouping, idf * ((f * (k1 + 1)) / (f + norm)), so that the numbers come out
        # the same to the bit; in place, to spare temporaries.
        frequency = np.divide(weights, 2.0)
        below = frequency + norm
        np.multiply(frequency, _K1 + 1, out=frequency)
        np.divide(frequency, below, out=frequency)
        np.multiply(frequency, self.idf, out=frequency)
        return frequency

    def values(self, norm: Float, known: Float | None = None) -> Float:
        """What the term adds to each fragment holding it (worked out once per query, or
        `known` already).
        """
        if self._values is None:
            self._values = (
                known if known is not None else self._scores(self.weights, norm[self.positions])
            )
        return self._values

    def add_to(self, scores: Float, norm: Float) -> None:
        """Add what the term gives each fragment to `scores` (indexed by position)."""
        scores[self.positions] += self.values(norm)

    def at(self, candidates: Int, norm: Float) -> Float:
        """What the term gives each of the candidates (ascending positions)."""
        out = np.zeros(len(candidates), np.float64)
        if len(candidates) * _LOOKUP_SHARE < len(self.positions):
            # Few candidates: look each up in the postings.
            where = np.searchsorted(self.positions, candidates)
            np.minimum(where, len(self.positions) - 1, out=where)
            held = self.positions[where] == candidates
            if self._values is not None:
                out[held] = self._values[where[held]]
            else:
                out[held] = self._scores(self.weights[where[held]], norm[candidates[held]])
            return out
        spread = np.zeros(len(norm), np.float64)
        spread[self.positions] = self.values(norm)
        return spread[candidates]


def _postings(
    connection: sqlite3.Connection, terms: Sequence[str], size: int
) -> tuple[dict[str, int], dict[int, tuple[Int, Int]]]:
    """The ids of the terms the index knows, and the snapshot postings of those it holds."""
    if not terms:
        return {}, {}
    unique = sorted(set(terms))
    marks = ", ".join("?" * len(unique))
    rows = connection.execute(
        "SELECT t.term, t.id, p.docs, p.counts FROM text_terms t"
        f" LEFT JOIN text_postings p ON p.id = t.id WHERE t.term IN ({marks})",
        unique,
    ).fetchall()
    ids = {str(row[0]): int(row[1]) for row in rows}
    postings = {
        int(row[1]): _postings_arrays(row[2], row[3], size) for row in rows if row[2] is not None
    }
    return ids, postings


def query_plan(terms: Iterable[str]) -> Iterator[str | Phrase]:
    """The query terms as the index reads them: one token each (a snake_case identifier
    too, joined as the columns hold it), or a phrase for FTS5; terms without a token are
    dropped.
    """
    for term in map(query_token, terms):
        tokens = query_tokens(term)
        if len(tokens) == 1:
            yield tokens[0]
        elif tokens:
            yield Phrase(term)


Row = tuple[Any, ...]
#: Fragments' rows with their scores, best first, ties by id (a row's first column).
Scored = list[tuple[float, Row]]


def select_best(
    rowids: Int,
    scores: Float,
    limit: int,
    fetch: Callable[[list[int], list[float]], Scored],
    fitting: Callable[[], Iterable[int]] | None,
) -> Scored:
    """The `limit` best-scored fragments that fit the request's filters, ties by id.
    `fetch` gives the rows of those of the fragments (rowids, scores) that fit, sorted;
    `fitting` (None: no filter) every rowid that fits. The best few are fetched first; when
    too few fit, only the fragments that fit are ranked. When score ties run past the cut,
    every tied fragment is fetched, so that ids, not positions, decide.
    """
    narrowed = fitting is None
    if narrowed and len(scores) > limit:
        # Every fragment fits: unless a score ties at the cut, the best `limit` are known
        # from the scores alone, and only their rows are read. On a store the page cache
        # no longer holds, reading rows is most of a search (one random page each).
        top = _best_positions(scores, limit + 1)
        below = scores[top].min()
        best = top[scores[top] > below]
        if len(best) == limit:
            rows = fetch(rowids[best].tolist(), scores[best].tolist())
            if len(rows) == limit:
                return rows
    while True:
        top = _best_positions(scores, limit + _TIE_MARGIN)
        rows = fetch(rowids[top].tolist(), scores[top].tolist())
        complete = len(top) == len(scores)
        if len(rows) >= limit or complete or fitting is None or narrowed:
            break
        fits = np.isin(rowids, np.fromiter(fitting(), np.int64))
        rowids, scores = rowids[fits], scores[fits]
        narrowed = True
    if len(rows) >= limit and not complete:
        cut = rows[limit - 1][0]
        if scores[top].min() == cut:  # fragments outside `top` may tie with the cut
            tied = np.setdiff1d(np.flatnonzero(scores == cut), top)
            rows += fetch(rowids[tied].tolist(), scores[tied].tolist())
            rows.sort(key=lambda pair: (-pair[0], pair[1][0]))
    return rows[:limit]


def _best_positions(scores: Float, count: int) -> Int:
    """Where the `count` best scores are, in no order."""
    if count >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(scores, len(scores) - count)[-count:]
