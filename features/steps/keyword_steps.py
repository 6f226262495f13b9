"""Steps for the embedded store's keyword index: a generated project large enough to be
folded, queries generated from its words, and FTS5's own `bm25()` ranking as the reference.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from typing import Any
from unittest import mock

from behave import given, then, when
from behave.runner import Context
from testkit import index_project, pipeline

from contextpipe import RequestFilters, query_terms
from contextpipe.stores.embedded import _text_index
from contextpipe.stores.embedded._text_layout import fts_expression, query_token
from contextpipe.stores.embedded.backend import EmbeddedStore

_WORDS = (
    "budget token fragment strategy allocator packer fusion ranking cache eviction policy"
    " invalidation query index store search phrase stem title section heading paragraph"
    " retry backoff jitter circuit breaker deadline timeout worker thread process queue"
    " planner executor renderer tokenizer encoder vector embedding graph node edge parent"
    " commit rollback snapshot journal segment posting score weight bonus floor leftover"
    " budgets caching evicted strategies ranked indexes stores searching titles"
    # Other scripts, a decomposed accent, a dotted capital I, a private-use character:
    # FTS5 splits and folds them its own way.
    " naïve İstanbul cafe\u0301 ΟΔΟΣ straße 名前 ab\ue000cd x\u0903y"
).split()
_LIMITS = (1, 7, 60)


def _writer(seed: int) -> random.Random:
    return random.Random(seed)


def _sentence(rng: random.Random) -> str:
    # Zipf-like: the first words are far more common than the last.
    words = [_WORDS[min(int(rng.paretovariate(0.9)) - 1, len(_WORDS) - 1)] for _ in range(9)]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}")
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(_WORDS).title() + "Allocator")
    return " ".join(words).capitalize() + "."


def _file_text(rng: random.Random, sections: int) -> str:
    parts = []
    for number in range(sections):
        title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
        body = " ".join(_sentence(rng) for _ in range(rng.randint(1, 6)))
        parts.append(f"{'#' if number == 0 else '##'} {title.capitalize()}\n\n{body}\n")
    return "\n".join(parts)


def _path(number: int) -> str:
    return f"part{number // 100:02d}/doc{number:04d}.md"


@given("a project of {files:d} generated files of {sections:d} sections each")
def generated_project(context: Context, files: int, sections: int) -> None:
    rng = _writer(files * 1000 + sections)
    for number in range(files):
        path = context.project / _path(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_file_text(rng, sections), encoding="utf-8")
    context.generated = (files, sections)


@when("{changed:d} of the generated files change and {deleted:d} are deleted")
def change_generated(context: Context, changed: int, deleted: int) -> None:
    files, sections = context.generated
    rng = _writer(7)
    numbers = rng.sample(range(files), changed + deleted)
    for number in numbers[:changed]:
        (context.project / _path(number)).write_text(_file_text(rng, sections), encoding="utf-8")
    for number in numbers[changed:]:
        (context.project / _path(number)).unlink()


def _queries(count: int) -> list[str]:
    """Questions, keyword lists, quoted phrases, identifiers and unknown words."""
    rng = _writer(count)
    queries: list[str] = []
    for number in range(count):
        words = rng.sample(_WORDS, rng.randint(1, 5))
        match number % 5:
            case 0:
                queries.append(f"how does the {' '.join(words)} work?")
            case 1:
                queries.append(f'"{words[0]} {rng.choice(_WORDS)}" {" ".join(words[1:])}')
            case 2:
                queries.append(f"{words[0]}_{rng.choice(_WORDS)} {words[-1]}Allocator")
            case 3:
                queries.append(" ".join([*words, "zyzzyva"]))
            case _:
                queries.append(" ".join(words))
    return queries


def _reference(
    store: EmbeddedStore, query: str, limit: int, paths: Sequence[str]
) -> list[tuple[str, float]]:
    """FTS5's own ranking of the OR of the query's terms (a snake_case identifier joined, as
    the columns hold it): ids and scores, ties by id.
    """
    glob = " AND (" + " OR ".join("f.path GLOB ?" for _ in paths) + ")" if paths else ""
    rank = "bm25(fts, 3.0, 1.0, 0.5)"
    with closing(sqlite3.connect(store.database)) as connection:
        rows = connection.execute(
            f"SELECT f.id, -{rank} FROM fts JOIN fragments f ON f.rowid = fts.rowid"
            f" WHERE fts MATCH ? {glob} ORDER BY {rank}, f.id LIMIT ?",
            (fts_expression([query_token(term) for term in query_terms(query)]), *paths, limit),
        ).fetchall()
    return [(str(id_), float(score)) for id_, score in rows]


def _found(store: EmbeddedStore, query: str, limit: int, paths: Sequence[str]) -> list[Any]:
    hits = store.search(query, limit, RequestFilters(paths=tuple(paths)))
    return [(hit.fragment.id, hit.score) for hit in hits]


def _rank_as_fts5(context: Context, count: int, paths: Sequence[str]) -> None:
    store = pipeline(context).store
    assert isinstance(store, EmbeddedStore)
    checked = 0
    for query in _queries(count):
        for limit in _LIMITS:
            expected = _reference(store, query, limit, paths)
            found = _found(store, query, limit, paths)
            assert found == expected, f"{query!r} at limit {limit}: {found} != {expected}"
            checked += len(found)
    assert checked > count, f"the queries found almost nothing ({checked} hits)"


@then("{count:d} generated queries each find what FTS5's bm25 ranks best, score for score")
def rank_as_fts5(context: Context, count: int) -> None:
    _rank_as_fts5(context, count, ())


@then(
    '{count:d} generated queries in paths "{paths}" each find what FTS5\'s bm25 ranks best,'
    " score for score"
)
def rank_as_fts5_in_paths(context: Context, count: int, paths: str) -> None:
    _rank_as_fts5(context, count, [path.strip() for path in paths.split(",")])


def _keyword_index(context: Context) -> tuple[int, int, int]:
    """Fragments in the snapshot, pending ones, and rows of the FTS5 table."""
    with closing(sqlite3.connect(pipeline(context).store.database)) as connection:
        snapshot, pending, searchable = connection.execute(
            "SELECT (SELECT length(value) / 8 FROM text_snapshot WHERE key = 'rowids'),"
            " (SELECT coalesce(sum(documents), 0) FROM text_segments), (SELECT count(*) FROM fts)"
        ).fetchone()
    return int(snapshot or 0), int(pending), int(searchable)


@then("the keyword index holds every searchable fragment in its snapshot")
def all_folded(context: Context) -> None:
    snapshot, pending, searchable = _keyword_index(context)
    assert (snapshot, pending) == (searchable, 0), (snapshot, pending, searchable)


@then("the keyword index holds changes not folded yet")
def not_folded(context: Context) -> None:
    _, pending, _ = _keyword_index(context)
    assert pending > 0, "nothing is pending: everything was folded"


@when("indexing the project is interrupted while the keyword index folds")
def fold_interrupted(context: Context) -> None:
    fold = _text_index.TextIndexWriter.fold

    def interrupted(self: _text_index.TextIndexWriter) -> None:
        fold(self)
        raise KeyboardInterrupt  # after the whole fold, before its commit

    with mock.patch.object(_text_index.TextIndexWriter, "fold", interrupted):
        try:
            index_project(context)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the fold was never interrupted")


@given("the hits of {count:d} generated queries are noted")
def note_hits(context: Context, count: int) -> None:
    store = pipeline(context).store
    assert isinstance(store, EmbeddedStore)
    context.noted = {query: _found(store, query, 20, ()) for query in _queries(count)}


@then("the {count:d} generated queries find the noted hits, score for score")
def noted_hits(context: Context, count: int) -> None:
    store = pipeline(context).store
    assert isinstance(store, EmbeddedStore)
    for query in _queries(count):
        assert _found(store, query, 20, ()) == context.noted[query], query
