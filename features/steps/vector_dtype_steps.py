"""Steps for the dtype of the searched vectors (`[store] vector_dtype`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

from behave import then, when
from behave.runner import Context
from testkit import pipeline

from contextpipe import Pipeline, RequestFilters, VectorHit, VectorSearch
from contextpipe.pipeline.vectors import with_vectors

_QUERIES = (
    "How should I look after my new dog?",
    "How do I bake bread?",
    "rocket engine in orbit",
    "fresh water for the dog",
    "a yearly visit to the vet",
    "what makes a crust golden",
    "fuel and oxidiser",
    "rewards when a puppy learns",
)
#: The files of each dtype's searched matrix (`store/_vector_rows`).
_MATRIX_FILES = {"float32": "vectors.matrix.npy", "float16": "vectors.matrix.f16.faiss"}


@contextmanager
def _searching(context: Context, dtype: str) -> Generator[VectorSearch]:
    """The `vectors` capability of a pipeline holding its vectors as `dtype`."""
    opened = Pipeline.open(
        project_dir=context.project,
        overrides={**context.overrides, "store.vector_dtype": dtype},
    )
    try:
        search = with_vectors(opened.store.backends(), opened.store, opened.embedder).vectors
        assert search is not None, "no vectors to search"
        yield search
    finally:
        opened.close()


def _nearest(
    context: Context, dtype: str, filters: RequestFilters, limit: int = 10
) -> list[list[VectorHit]]:
    """Each query's nearest fragments, through a pipeline holding its vectors as `dtype`."""
    with _searching(context, dtype) as search:
        return [list(search.nearest(query, limit, filters)) for query in _QUERIES]


def _store_folder(context: Context) -> Path:
    return Path(pipeline(context).stats().location)


def _same_fragments(found: list[list[VectorHit]], expected: list[list[VectorHit]]) -> None:
    for hits, wanted in zip(found, expected, strict=True):
        assert [hit.fragment.id for hit in hits] == [hit.fragment.id for hit in wanted], (
            hits,
            wanted,
        )


@then(
    "{count:d} queries find the same fragments in the same order with vectors held as"
    ' "{dtype}" as with "{reference}", each similarity within {tolerance:g}'
)
def same_as(context: Context, count: int, dtype: str, reference: str, tolerance: float) -> None:
    assert count == len(_QUERIES), f"the step knows {len(_QUERIES)} queries"
    expected = _nearest(context, reference, RequestFilters())
    found = _nearest(context, dtype, RequestFilters())
    _same_fragments(found, expected)
    differences = [
        abs(hit.similarity - wanted.similarity)
        for hits, wanted_hits in zip(found, expected, strict=True)
        for hit, wanted in zip(hits, wanted_hits, strict=True)
    ]
    assert max(differences) <= tolerance, max(differences)
    # The rounding shows: the other dtype was searched, not the reference again.
    assert max(differences) > 0, "the similarities are the reference's to the bit"


@then("the store searches its vectors through the approximate index")
def searched_approximately(context: Context) -> None:
    with _searching(context, "float32") as search:
        assert search.coverage().approximate, search.coverage()


def _scored_alone(context: Context, dtype: str) -> list[tuple[float, float]]:
    """(found, scored alone) similarity of each fragment the queries find, held as `dtype`."""
    pairs: list[tuple[float, float]] = []
    with _searching(context, dtype) as search:
        for query in _QUERIES:
            hits = list(search.nearest(query, 10, RequestFilters()))
            alone = search.similarities(query, [hit.fragment for hit in hits])
            assert None not in alone, alone
            pairs += [
                (hit.similarity, score or 0.0) for hit, score in zip(hits, alone, strict=True)
            ]
    return pairs


@then(
    "{count:d} queries give each fragment they find, scored on its own, the similarity the"
    ' search gave it, to the bit, with vectors held as "{dtype}"'
)
def scored_alone_exactly(context: Context, count: int, dtype: str) -> None:
    assert count == len(_QUERIES), f"the step knows {len(_QUERIES)} queries"
    pairs = _scored_alone(context, dtype)
    assert len(pairs) >= count, pairs
    assert all(found == alone for found, alone in pairs), [p for p in pairs if p[0] != p[1]]


@then(
    "{count:d} queries give each fragment they find, scored on its own, the similarity the"
    ' search gave it, within {tolerance:g}, with vectors held as "{dtype}"'
)
def scored_alone_within(context: Context, count: int, tolerance: float, dtype: str) -> None:
    assert count == len(_QUERIES), f"the step knows {len(_QUERIES)} queries"
    pairs = _scored_alone(context, dtype)
    assert len(pairs) >= count, pairs
    assert max(abs(found - alone) for found, alone in pairs) <= tolerance, pairs


@then(
    'searches within "{pattern}" find the same fragments with vectors held as "{dtype}"'
    ' as with "{reference}"'
)
def same_filtered(context: Context, pattern: str, dtype: str, reference: str) -> None:
    filters = RequestFilters(paths=(pattern,))
    found = _nearest(context, dtype, filters, limit=5)
    _same_fragments(found, _nearest(context, reference, filters, limit=5))
    prefix = pattern.rstrip("*")
    paths = {hit.fragment.source.path for hits in found for hit in hits}
    assert paths and all(path.startswith(prefix) for path in paths), paths


@then("the store searches a {dtype} matrix and no {other} one")
def matrix_files(context: Context, dtype: str, other: str) -> None:
    folder = _store_folder(context)
    assert (folder / _MATRIX_FILES[dtype]).is_file(), sorted(p.name for p in folder.iterdir())
    assert not (folder / _MATRIX_FILES[other]).exists(), sorted(p.name for p in folder.iterdir())


def _stored_vectors(folder: Path) -> dict[str, bytes]:
    connection = sqlite3.connect(folder / "vectors.sqlite3")
    try:
        return {str(h): bytes(v) for h, v in connection.execute("SELECT hash, vector FROM vectors")}
    finally:
        connection.close()


@when('the store is searched with vectors held as "{dtype}"')
def searched_as(context: Context, dtype: str) -> None:
    if not hasattr(context, "dtype_searches"):
        context.dtype_searches = []
        context.vectors_before = _stored_vectors(_store_folder(context))
    context.dtype_searches.append((dtype, _nearest(context, dtype, RequestFilters())))


@then("the vectors database holds the same float32 vectors as before")
def same_vectors(context: Context) -> None:
    now = _stored_vectors(_store_folder(context))
    assert now == context.vectors_before
    dimension = pipeline(context).embedder.dimension
    assert all(len(blob) == 4 * dimension for blob in now.values())


@then("the similarities are exactly those of the first float32 search")
def same_as_first(context: Context) -> None:
    first = next(hits for dtype, hits in context.dtype_searches if dtype == "float32")
    last_dtype, last = context.dtype_searches[-1]
    assert last_dtype == "float32"
    as_pairs = [
        [[(hit.fragment.id, hit.similarity) for hit in hits] for hits in searches]
        for searches in (first, last)
    ]
    assert as_pairs[0] == as_pairs[1]


@then("the approximate index of the store holds float16 vectors")
def approximate_float16(context: Context) -> None:
    folder = _store_folder(context)
    state = json.loads((folder / "vectors.ivf.json").read_text())
    assert state["dtype"] == "float16", state
    faiss = import_module("faiss")
    index = faiss.read_index(str(folder / f"vectors.ivf.{state['generation']}.faiss"))
    dimension = pipeline(context).embedder.dimension
    assert int(faiss.extract_index_ivf(index).code_size) == 2 * dimension


@when('the setting "{key}" becomes "{value}"')
def setting_becomes(context: Context, key: str, value: str) -> None:
    if context.pipeline is not None:
        context.pipeline.close()
        context.pipeline = None
    context.overrides[key] = value
