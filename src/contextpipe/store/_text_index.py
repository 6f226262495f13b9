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
several tokens (a quoted phrase, `snake_case`) is a phrase: FTS5 finds and scores it.

Tokens are FTS5's own: text is split into words where FTS5's `unicode61` tokenizer splits
it, and each distinct word is handed once to an in-memory FTS5 table with the store's
tokenizer, whose stems are then the index's terms.

Layout (tables of the store's database, so that a file's postings commit with the file):

- `text_terms`: term -> id.
- `text_snapshot`, `text_postings`: the snapshot, an immutable inverted index: the rowids
  (ascending) and token counts of its fragments, and per term the positions of the
  fragments holding it (int32) with the weighted count (uint32, in half occurrences).
- `text_docs`: fragments written since the snapshot (rowids above `text_floor` in meta):
  their term ids and weighted counts.
- `text_removed`: rowids removed since the snapshot (some may be in no snapshot).

The writer folds the changes into a new snapshot when they outgrow `_FOLD_BASE` plus
`1/_FOLD_SHARE` of the snapshot, in a transaction of its own, so that a query reads a few
pending rows at most.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

#: The text index's tokenizer; the FTS5 table and the stemming table both use it.
TOKENIZE = "porter unicode61 remove_diacritics 2"

SCHEMA = """
CREATE TABLE IF NOT EXISTS text_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS text_snapshot (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS text_postings (
    id INTEGER PRIMARY KEY, docs BLOB NOT NULL, counts BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS text_docs (
    rowid INTEGER PRIMARY KEY, length INTEGER NOT NULL, terms BLOB NOT NULL,
    counts BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS text_removed (rowid INTEGER PRIMARY KEY);
"""

#: Column weights in half occurrences: title 3, text 1, identifier words 0.5.
COLUMN_WEIGHTS = (6, 2, 1)
_K1 = 1.2
_B = 0.75
#: FTS5's floor for the idf of a term most fragments hold.
_MIN_IDF = 1e-6
#: Fragments written at once.
_BATCH = 2_000
#: Relative room left for rounding when a bound decides that a fragment cannot catch up.
_SLACK = 1e-9
#: A term held by more than 1/_DENSE_SHARE of the fragments is scored over whole arrays.
_DENSE_SHARE = 2
#: Pending changes that never trigger a fold, and the share of the snapshot that does.
_FOLD_BASE = 2_000
_FOLD_SHARE = 20

_POSITIONS = np.dtype("<i4")
_COUNTS = np.dtype("<u4")
_ROWIDS = np.dtype("<i8")
# unicode61 separates at everything but letters and numbers (an underscore separates too).
_WORD = re.compile(r"[^\W_]+")

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
                self._learn(new)
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


def query_tokens(term: str) -> tuple[str, ...]:
    """The index terms a query term is made of (one: a word; several: a phrase)."""
    words = _WORD.findall(term.lower())
    stems = tokens_of(words)
    return tuple(token for word in words for token in stems[word])


def _column_words(columns: Sequence[str]) -> tuple[list[Counter[str]], set[str]]:
    """Each column's word counts, and every word of the fragment."""
    counted = [Counter(_WORD.findall(text.lower())) for text in columns]
    words: set[str] = set()
    for column in counted:
        words.update(column)
    return counted, words


class TextIndexWriter:
    """Keeps the keyword index in step with the fragments, inside the writer's transactions.
    Added fragments wait to be written in batches (a statement per file costs more than
    the work): `flush` before every commit.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        # word -> its term ids; ids never change once written, so this outlives commits.
        self._ids: dict[str, tuple[int, ...]] = {}
        self._waiting: dict[int, Sequence[str]] = {}

    def add(self, fragments: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index fragments: (rowid, (title, text, words)) each, rowids above the floor."""
        self._waiting.update(fragments)
        if len(self._waiting) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the fragments added since the last flush."""
        fragments, self._waiting = list(self._waiting.items()), {}
        if not fragments:
            return
        counted: list[list[Counter[str]]] = []
        words: set[str] = set()
        for _, columns in fragments:
            columns_words, distinct = _column_words(columns)
            counted.append(columns_words)
            words |= distinct
        ids = self._term_ids(words)
        rows: list[tuple[int, int, bytes, bytes]] = []
        for (rowid, _), columns_words in zip(fragments, counted, strict=True):
            weighted: dict[int, int] = {}
            length = 0
            for column, weight in zip(columns_words, COLUMN_WEIGHTS, strict=True):
                for word, count in column.items():
                    terms = ids[word]
                    length += count * len(terms)
                    for term in terms:
                        weighted[term] = weighted.get(term, 0) + count * weight
            rows.append(
                (
                    rowid,
                    length,
                    np.fromiter(weighted.keys(), _POSITIONS, len(weighted)).tobytes(),
                    np.fromiter(weighted.values(), _COUNTS, len(weighted)).tobytes(),
                )
            )
        self._connection.executemany(
            "INSERT INTO text_docs(rowid, length, terms, counts) VALUES (?, ?, ?, ?)", rows
        )

    def _term_ids(self, words: set[str]) -> dict[str, tuple[int, ...]]:
        known = self._ids
        new = [word for word in words if word not in known]
        if new:
            stems = tokens_of(new)
            terms = sorted({term for word in new for term in stems[word]})
            ids = self._lookup(terms)
            missing = [term for term in terms if term not in ids]
            if missing:
                self._connection.executemany(
                    "INSERT INTO text_terms(term) VALUES (?)", [(term,) for term in missing]
                )
                ids.update(self._lookup(missing))
            for word in new:
                known[word] = tuple(ids[term] for term in stems[word])
        return {word: known[word] for word in words}

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
        """Forget fragments: pending ones go, those of the snapshot are marked removed."""
        waiting = self._waiting
        rowids = [rowid for rowid in rowids if waiting.pop(rowid, None) is None]
        if not rowids:
            return
        floor = self.floor()
        self._connection.executemany(
            "DELETE FROM text_docs WHERE rowid = ?", [(r,) for r in rowids if r > floor]
        )
        self._connection.executemany(
            "INSERT OR IGNORE INTO text_removed(rowid) VALUES (?)",
            [(r,) for r in rowids if r <= floor],
        )

    def floor(self) -> int:
        """The highest rowid the snapshot may hold; new fragments get higher ones."""
        row = self._connection.execute("SELECT value FROM meta WHERE key = 'text_floor'").fetchone()
        return int(row[0]) if row else 0

    def index_existing(self) -> None:
        """Index every row of the FTS5 table (an upgrade from a layout without this index)."""
        cursor = self._connection.execute("SELECT rowid, title, text, words FROM fts")
        while batch := cursor.fetchmany(_BATCH):
            self.add([(int(row[0]), (str(row[1]), str(row[2]), str(row[3]))) for row in batch])
        self.flush()

    def fold_due(self) -> bool:
        """Whether the pending changes have outgrown what a query should read."""
        pending, snapshot = self._connection.execute(
            "SELECT (SELECT count(*) FROM text_docs) + (SELECT count(*) FROM text_removed),"
            " (SELECT length(value) FROM text_snapshot WHERE key = 'rowids')"
        ).fetchone()
        documents = int(snapshot or 0) // _ROWIDS.itemsize
        return int(pending) > _FOLD_BASE + documents // _FOLD_SHARE

    def fold(self) -> None:
        """Merge the pending changes into a new snapshot (in the caller's transaction)."""
        connection = self._connection
        snapshot = read_snapshot(connection)
        removed = _removed_rows(connection, snapshot.rowids)
        keep = np.ones(len(snapshot.rowids), np.bool_)
        keep[removed] = False
        # Old position -> new position of each kept fragment (-1: removed).
        moved = np.cumsum(keep) - 1
        moved[~keep] = -1
        terms: list[Int] = []
        positions: list[Int] = []
        counts: list[Int] = []
        for term_id, docs, weights in connection.execute(
            "SELECT id, docs, counts FROM text_postings"
        ):
            old = _array(docs, _POSITIONS, "postings")
            new = moved[old]
            alive = new >= 0
            terms.append(np.full(int(alive.sum()), int(term_id), np.int64))
            positions.append(new[alive])
            counts.append(_array(weights, _COUNTS, "postings")[alive])
        kept = int(keep.sum())
        pending = read_pending(connection, kept)
        terms.append(pending.terms)
        positions.append(pending.positions)
        counts.append(pending.counts)
        rowids = np.concatenate([snapshot.rowids[keep], pending.rowids])
        lengths = np.concatenate([snapshot.lengths[keep], pending.lengths])
        all_terms = np.concatenate(terms)
        all_positions = np.concatenate(positions)
        all_counts = np.concatenate(counts)
        order = np.lexsort((all_positions, all_terms))
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
                ("rowids", rowids.astype(_ROWIDS).tobytes()),
                ("lengths", lengths.astype(_COUNTS).tobytes()),
            ],
        )
        floor = max(self.floor(), int(rowids[-1]) if len(rowids) else 0)
        connection.execute("DELETE FROM text_docs")
        connection.execute("DELETE FROM text_removed")
        connection.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('text_floor', ?)", (str(floor),)
        )
        connection.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'text_snapshot'"
        )


def _array(blob: object, dtype: np.dtype[Any], what: str) -> npt.NDArray[Any]:
    """The array a blob holds (read-only, no copy)."""
    if not isinstance(blob, bytes) or len(blob) % dtype.itemsize:
        raise TextIndexError(f"keyword index: {what} cut short")
    return np.frombuffer(blob, dtype)


@dataclass(frozen=True)
class Snapshot:
    """The snapshot's fragments: rowids (ascending) and token counts."""

    rowids: Int
    lengths: Int


def read_snapshot(connection: sqlite3.Connection) -> Snapshot:
    """The snapshot's fragment arrays (empty before the first fold)."""
    found = dict(connection.execute("SELECT key, value FROM text_snapshot").fetchall())
    rowids = _array(found.get("rowids", b""), _ROWIDS, "snapshot")
    lengths = _array(found.get("lengths", b""), _COUNTS, "snapshot")
    if len(rowids) != len(lengths) or np.any(rowids[1:] <= rowids[:-1]):
        raise TextIndexError("keyword index: snapshot does not add up")
    return Snapshot(rowids, lengths)


def _removed_rows(connection: sqlite3.Connection, rowids: Int) -> Int:
    """Snapshot positions of the removed fragments."""
    removed = np.fromiter(
        (row[0] for row in connection.execute("SELECT rowid FROM text_removed")), np.int64
    )
    at = np.searchsorted(rowids, removed)
    inside = at < len(rowids)
    at, removed = at[inside], removed[inside]
    return at[rowids[at] == removed]


@dataclass(frozen=True)
class Pending:
    """Fragments written since the snapshot, at positions `first`..., and their postings
    sorted by term.
    """

    rowids: Int
    lengths: Int
    terms: Int
    positions: Int
    counts: Int


def read_pending(connection: sqlite3.Connection, first: int) -> Pending:
    """The pending fragments, numbered from `first` in rowid order."""
    rows = connection.execute(
        "SELECT rowid, length, terms, counts FROM text_docs ORDER BY rowid"
    ).fetchall()
    terms = [_array(row[2], _POSITIONS, "pending fragment") for row in rows]
    counts = [_array(row[3], _COUNTS, "pending fragment") for row in rows]
    if any(len(t) != len(c) for t, c in zip(terms, counts, strict=True)):
        raise TextIndexError("keyword index: pending fragment does not add up")
    sizes = np.fromiter(map(len, terms), np.int64, len(terms))
    all_terms = np.concatenate(terms) if terms else np.zeros(0, np.int64)
    positions = np.repeat(np.arange(first, first + len(rows), dtype=np.int64), sizes)
    all_counts = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    order = np.argsort(all_terms, kind="stable")
    return Pending(
        np.fromiter((row[0] for row in rows), np.int64, len(rows)),
        np.fromiter((row[1] for row in rows), np.int64, len(rows)),
        all_terms[order],
        positions[order],
        all_counts[order],
    )


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
        snapshot = read_snapshot(connection)
        self._size = len(snapshot.rowids)
        live = np.ones(self._size, np.bool_)
        live[_removed_rows(connection, snapshot.rowids)] = False
        pending = read_pending(connection, self._size)
        self._pending = pending
        self.rowids = np.concatenate([snapshot.rowids, pending.rowids])
        self.live = np.concatenate([live, np.ones(len(pending.rowids), np.bool_)])
        lengths = np.concatenate([snapshot.lengths, pending.lengths]).astype(np.float64)
        documents = int(self.live.sum())
        self._all_live = documents == len(self.live)
        self.documents = documents
        average = float(lengths[self.live].sum()) / documents if documents else 1.0
        self._norm: Float = _K1 * (1 - _B + _B * lengths / average)

    def best(
        self, connection: sqlite3.Connection, terms: Sequence[str | Phrase], need: int | None
    ) -> tuple[Int, Float]:
        """The positions of the fragments matching any query term, with their BM25 scores
        (ascending positions). With `need`, only those that may be among the `need` best:
        every fragment left out scores below each of the `need` best returned.

        Pruning (MaxScore): terms are taken in order of the most they can add to a score
        (idf * (k1 + 1)); once the `need`-th best score so far beats what all the terms left
        could add together, no fragment that none of the terms so far holds can catch up, and
        the rest are scored only at the fragments found so far. Scores are then summed in
        query-term order, as a full evaluation sums them, so both give the same numbers.
        """
        found = self._terms(connection, terms)
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        candidates = None if need is None else self._pruned(found, need)
        if candidates is None:
            scores = np.zeros(len(self.rowids), np.float64)
            for term in found:
                term.add_to(scores, self._norm)
            positions = np.flatnonzero(scores > 0)
            return positions, scores[positions]
        values = np.zeros(len(candidates), np.float64)
        for term in found:
            values += term.at(candidates, self._norm)
        return candidates, values

    def _pruned(self, found: Sequence[_Term], need: int) -> Int | None:
        """The fragments that may be among the `need` best, or None when pruning saves
        nothing (every term had to be taken whole).
        """
        size = len(self.rowids)
        held = np.zeros(size, np.bool_)
        partial = np.zeros(size, np.float64)
        left = sum(term.bound for term in found)
        taken = 0
        for taken, term in enumerate(sorted(found, key=lambda t: -t.bound), start=1):
            left -= term.bound
            held[term.positions] = True
            term.add_to(partial, self._norm)
            if taken < len(found):
                candidates = np.flatnonzero(held)
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

    def _terms(self, connection: sqlite3.Connection, terms: Sequence[str | Phrase]) -> list[_Term]:
        """The query's terms that some fragment holds, in query order, with their postings."""
        if not self.documents:
            return []
        ids = _term_ids(connection, [t for t in terms if isinstance(t, str)])
        postings = _postings(connection, set(ids.values()))
        found: list[_Term] = []
        for term in terms:
            if isinstance(term, Phrase):
                positions, values = self._phrase(connection, term)
                if len(positions):
                    found.append(_Term(positions, None, values, float(values.max())))
                continue
            term_id = ids.get(term)
            if term_id is None:
                continue
            positions, counts = self._term_postings(term_id, postings.get(term_id))
            if not self._all_live:
                alive = self.live[positions]
                positions, counts = positions[alive], counts[alive]
            if not len(positions):
                continue
            holders = len(positions)
            idf = math.log((self.documents - holders + 0.5) / (holders + 0.5))
            idf = idf if idf > 0 else _MIN_IDF
            found.append(_Term(positions, idf, counts / 2.0, idf * (_K1 + 1)))
        return found

    def _term_postings(self, term_id: int, snapshot: tuple[Int, Int] | None) -> tuple[Int, Int]:
        pending = self._pending
        low, high = np.searchsorted(pending.terms, [term_id, term_id + 1])
        positions, counts = pending.positions[low:high], pending.counts[low:high]
        if snapshot is None:
            return positions, counts
        docs, weights = snapshot
        if len(docs) and (int(docs.max()) >= self._size or int(docs.min()) < 0):
            raise TextIndexError("keyword index: postings point past the snapshot")
        if not len(positions):
            return docs, weights
        return np.concatenate([docs, positions]), np.concatenate([weights, counts])

    def _phrase(self, connection: sqlite3.Connection, phrase: Phrase) -> tuple[Int, Float]:
        """The fragments holding a phrase and what it adds to their scores, from FTS5."""
        rows = connection.execute(
            f"SELECT rowid, -bm25(fts, {COLUMN_WEIGHTS[0] / 2}, {COLUMN_WEIGHTS[1] / 2},"
            f" {COLUMN_WEIGHTS[2] / 2}) FROM fts WHERE fts MATCH ? ORDER BY rowid",
            ('"' + phrase.text.replace('"', '""') + '"',),
        ).fetchall()
        rowids = np.fromiter((row[0] for row in rows), np.int64, len(rows))
        values = np.fromiter((row[1] for row in rows), np.float64, len(rows))
        at = np.clip(np.searchsorted(self.rowids, rowids), 0, max(len(self.rowids) - 1, 0))
        known = (self.rowids[at] == rowids) if len(self.rowids) else np.zeros(0, np.bool_)
        return at[known], values[known]


@dataclass(frozen=True)
class _Term:
    """A query term's postings: ascending positions of the live fragments holding it, and
    either its idf and weighted counts (an index term) or the scores FTS5 gave (a phrase).
    `bound` is the most it adds to any score.
    """

    positions: Int
    idf: float | None
    weights: Float
    bound: float

    def _scores(self, frequency: Float, norm: Float) -> Float:
        if self.idf is None:
            return frequency
        # Grouped as FTS5 groups it, so that the numbers come out the same to the bit.
        return self.idf * ((frequency * (_K1 + 1)) / (frequency + norm))

    def add_to(self, scores: Float, norm: Float) -> None:
        """Add what the term gives each fragment to `scores` (indexed by position)."""
        if self.idf is not None and len(self.positions) * _DENSE_SHARE > len(scores):
            # A common term: whole arrays are cheaper than gathering and scattering.
            # Fragments without it add 0, so every score comes out the same either way.
            frequency = np.zeros(len(scores), np.float64)
            frequency[self.positions] = self.weights
            scores += self._scores(frequency, norm)
        else:
            scores[self.positions] += self._scores(self.weights, norm[self.positions])

    def at(self, candidates: Int, norm: Float) -> Float:
        """What the term gives each of the candidates (positions)."""
        spread = np.zeros(len(norm), np.float64)
        spread[self.positions] = self.weights
        weights = spread[candidates]
        held = weights > 0  # a holder's count is at least one; a phrase scores above 0
        out = np.zeros(len(candidates), np.float64)
        out[held] = self._scores(weights[held], norm[candidates[held]])
        return out


def _term_ids(connection: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    if not terms:
        return {}
    unique = sorted(set(terms))
    marks = ", ".join("?" * len(unique))
    rows = connection.execute(f"SELECT term, id FROM text_terms WHERE term IN ({marks})", unique)
    return {str(term): int(term_id) for term, term_id in rows}


def _postings(connection: sqlite3.Connection, ids: set[int]) -> dict[int, tuple[Int, Int]]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    found: dict[int, tuple[Int, Int]] = {}
    for term_id, docs, counts in connection.execute(
        f"SELECT id, docs, counts FROM text_postings WHERE id IN ({marks})", sorted(ids)
    ):
        positions = _array(docs, _POSITIONS, "postings")
        weights = _array(counts, _COUNTS, "postings")
        if len(positions) != len(weights):
            raise TextIndexError("keyword index: postings do not add up")
        found[int(term_id)] = (positions, weights)
    return found


def query_plan(terms: Iterable[str]) -> Iterator[str | Phrase]:
    """The query terms as the index reads them: one token each, or a phrase for FTS5;
    terms without a token are dropped.
    """
    for term in terms:
        tokens = query_tokens(term)
        if len(tokens) == 1:
            yield tokens[0]
        elif tokens:
            yield Phrase(term)
