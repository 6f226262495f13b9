"""Steps for search by meaning: computing vectors, the semantic strategies, their reasons."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from behave import given, step, then, when
from behave.runner import Context
from hypothesis import assume, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from testkit import pipeline, result, run_contextpipe, write_files

from contextpipe import AssembledContext, ContextRequest, Pipeline, RequestFilters
from contextpipe.pipeline.vectors import with_vectors
from contextpipe.strategies.relevance import normalised

_DOCUMENTS = {
    "docs/bread.md": "# Baking bread\n\nKnead the dough, let it rise overnight, and bake it"
    " in a hot oven until the crust is golden.\n",
    "docs/rocket.md": "# Rockets\n\nA rocket engine burns fuel and oxidiser to push the"
    " vehicle into orbit around the planet.\n",
    "docs/puppy.md": "# Caring for a puppy\n\nYoung animals of this kind need walks, food"
    " several times a day and visits to the vet.\n",
}
_TOPICS = ["harbour", "violin", "glacier", "tax form", "chess opening", "volcano", "bicycle"]


@given("three short documents about baking bread, rockets and caring for a puppy")
def three_documents(context: Context) -> None:
    write_files(context.project, _DOCUMENTS)


@given("{count:d} more short documents")
def more_documents(context: Context, count: int) -> None:
    write_files(
        context.project,
        {
            f"docs/more/note-{number:04d}.md": f"# Note {number}\n\nA short note about the"
            f" {_TOPICS[number % len(_TOPICS)]}, number {number}, written for the test.\n"
            for number in range(count)
        },
    )


_DOG_CARE = (
    "a walk twice a day",
    "their food at the same hours",
    "fresh water",
    "a brushed coat",
    "rewards when they learn",
    "a yearly visit to the vet",
)


@given("a handbook on caring for a puppy of about {tokens:d} tokens")
def puppy_handbook(context: Context, tokens: int) -> None:
    """One section, so one full-text fragment: the nearest of all to a question on dogs."""
    sentence = "Looking after a new dog: walks, food, water, the vet. "
    write_files(
        context.project,
        {"docs/handbook.md": "# Looking after your new dog\n\n" + sentence * (tokens // 13)},
    )


@given("{count:d} short notes about looking after dogs")
def dog_notes(context: Context, count: int) -> None:
    """Each less near to a question on dogs than the handbook is, but near."""
    write_files(
        context.project,
        {
            f"docs/dogs/care-{number:02d}.md": f"# Dog care {number}\n\nDogs like"
            f" {_DOG_CARE[number % len(_DOG_CARE)]}.\n"
            for number in range(count)
        },
    )


@then("the context holds at least {count:d} of the short notes about dogs")
def dog_notes_in_context(context: Context, count: int) -> None:
    paths = [fragment.source.path for fragment in result(context).fragments]
    notes = [path for path in paths if path.startswith("docs/dogs/")]
    assert len(notes) >= count, paths


@given("the vectors of the store are computed")
def vectors_computed(context: Context) -> None:
    context.embed_summary = pipeline(context).embed()


@step("computing the vectors is interrupted after the first batch")
def vectors_cut_short(context: Context) -> None:
    class StopAfterFirstBatch:
        def started(self, label: str, total: int) -> None:
            pass

        def embedded(self, count: int) -> None:
            raise KeyboardInterrupt  # as a user's Ctrl-C would

    try:
        pipeline(context).embed(StopAfterFirstBatch())
    except KeyboardInterrupt:
        return
    raise AssertionError("computing the vectors was not interrupted")


@when('I add the file "{path}" with "{text}"')
def add_file(context: Context, path: str, text: str) -> None:
    write_files(context.project, {path: text.replace("\\n", "\n") + "\n"})


@when("the project is indexed again and its vectors are computed")
def indexed_and_embedded(context: Context) -> None:
    pipeline(context).index([context.project])
    context.embed_summary = pipeline(context).embed()


@when('the vectors are computed again with the embedder "{name}"')
def embedded_with(context: Context, name: str) -> None:
    pipeline(context).close()
    context.pipeline = None
    context.overrides["embedding.model"] = name
    context.embed_summary = pipeline(context).embed()


@then("{count:d} texts were embedded")
def texts_embedded(context: Context, count: int) -> None:
    assert context.embed_summary.embedded == count, context.embed_summary


@then("every text was embedded again")
def all_embedded_again(context: Context) -> None:
    summary = context.embed_summary
    assert summary.embedded == summary.total > 0, summary


@then("every full-text fragment of the store has a vector")
def full_coverage(context: Context) -> None:
    opened = pipeline(context)
    index = opened.store.vector_index(opened.embedder.space)
    assert index is not None, "the store has no vectors of the configured embedder"
    coverage = index.coverage()
    assert coverage.total > 0 and coverage.embedded == coverage.total, coverage


@then('the store\'s vectors are those of "{name}" only')
def vectors_of(context: Context, name: str) -> None:
    opened = pipeline(context)
    assert opened.embedder.name == name
    assert opened.store.vector_index(opened.embedder.space) is not None
    other = Pipeline.open(project_dir=context.project, overrides={"embedding.model": "minilm"})
    try:
        assert other.store.vector_index(other.embedder.space) is None, "two spaces are kept"
    finally:
        other.close()


@then('a pipeline configured for "{name}" skips "{strategy}" saying "{words}"')
def other_pipeline_skips(context: Context, name: str, strategy: str, words: str) -> None:
    other = Pipeline.open(project_dir=context.project, overrides={"embedding.model": name})
    try:
        assembled = other.assemble("caring for a puppy", budget=200)
    finally:
        other.close()
    found = next(r for r in assembled.strategies if r.name == strategy)
    assert found.status == "skipped" and words in found.reason, (found.status, found.reason)


@then('the context starts with the document "{path}"')
def starts_with(context: Context, path: str) -> None:
    fragments = result(context).fragments
    assert fragments, f"the context is empty: {result(context).strategies}"
    assert fragments[0].source.path == path, [f.source.path for f in fragments]


@then('the document "{path}" is left out as a paraphrase of the document "{other}"')
def left_out_as_paraphrase(context: Context, path: str, other: str) -> None:
    (kept,) = [f for f in result(context).fragments if f.source.path == other]
    reasons = [d.reason for d in result(context).dropped if d.uko_uri.endswith(f"/{path}")]
    assert any(r.startswith(f"paraphrase of {kept.id} (cosine ") for r in reasons), reasons


@then('the context holds the document "{path}"')
def holds_document(context: Context, path: str) -> None:
    paths = [f.source.path for f in result(context).fragments]
    assert path in paths, paths


@then("no document is in the context")
def nothing_in_context(context: Context) -> None:
    assert not result(context).fragments, [f.source.path for f in result(context).fragments]


def _reasons(context: Context, strategy: str, first_only: bool = False) -> list[str]:
    fragments = result(context).fragments[:1] if first_only else result(context).fragments
    reasons = [p.reason for f in fragments for p in f.provenance if p.strategy == strategy]
    assert reasons, f"nothing in the context from {strategy}"
    return reasons


@then('its reason from "{strategy}" gives the similarity to the query')
def similarity_reason(context: Context, strategy: str) -> None:
    (reason,) = _reasons(context, strategy, first_only=True)
    assert re.match(r"similarity 0\.\d{3} to the query \(minilm\)$", reason), reason


@then('its reason from "{strategy}" names the lexical, semantic, title and path parts')
def hybrid_reason(context: Context, strategy: str) -> None:
    (reason,) = _reasons(context, strategy, first_only=True)
    pattern = (
        r"hybrid \d\.\d{3}: lexical \d\.\d\d \(BM25 [\d.]+\), semantic \d\.\d\d \(cosine"
        r" -?\d\.\d{3}\), title terms \d+%, path terms \d+%$"
    )
    assert re.match(pattern, reason), reason


@then('the reason from "{strategy}" for the document "{path}" ends with "{words}"')
def reason_for_document(context: Context, strategy: str, path: str, words: str) -> None:
    reasons = [
        p.reason
        for f in result(context).fragments
        if f.source.path == path
        for p in f.provenance
        if p.strategy == strategy
    ]
    assert reasons, f"{path} is not in the context from {strategy}"
    assert reasons[0].endswith(words), reasons[0]


@then('every reason from "{strategy}" says "{words}"')
def every_reason_says(context: Context, strategy: str, words: str) -> None:
    for reason in _reasons(context, strategy):
        assert words in reason, reason


@then('no reason from "{strategy}" says "{words}"')
def no_reason_says(context: Context, strategy: str, words: str) -> None:
    for reason in _reasons(context, strategy):
        assert words not in reason, reason


@when("the project is indexed again")
def indexed_again(context: Context) -> None:
    pipeline(context).index([context.project])


@when("the approximate index file of the store is overwritten with garbage")
def approximate_garbage(context: Context) -> None:
    folder = _store_folder(context)
    pipeline(context).close()
    context.pipeline = None
    (saved,) = folder.glob("vectors.ivf.*.faiss")
    saved.write_bytes(b"not an index at all " * 300)


@then(
    "{count:d} queries find the same fragments, with the same similarities, through the"
    " approximate index as by exact search"
)
def approximate_as_exact(context: Context, count: int) -> None:
    """Few vectors make few lists, and a query reads at least 8 of them: here, all."""
    opened = pipeline(context)
    embedder = opened.embedder
    queries = [f"a note about the {_TOPICS[n % len(_TOPICS)]}, number {n}" for n in range(count)]
    exact = Pipeline.open(
        project_dir=context.project,
        overrides={**context.overrides, "store.approximate_vectors_above": 1_000_000},
    )
    try:
        searches = [
            with_vectors(each.store.backends(), each.store, embedder).vectors
            for each in (opened, exact)
        ]
        approximate, plain = searches
        assert approximate is not None and plain is not None
        assert approximate.coverage().approximate and not plain.coverage().approximate
        filters = RequestFilters()
        for query in queries:
            found, expected = (each.nearest(query, 10, filters) for each in (approximate, plain))
            assert [hit.fragment.id for hit in found] == [hit.fragment.id for hit in expected]
            for hit, exact_hit in zip(found, expected, strict=True):  # float32 sums, two ways
                assert abs(hit.similarity - exact_hit.similarity) < 1e-5, (hit, exact_hit)
    finally:
        exact.close()


def _store_folder(context: Context) -> Path:
    return Path(pipeline(context).stats().location)


@when("the vectors file of the store is overwritten with garbage")
def vectors_garbage(context: Context) -> None:
    folder = _store_folder(context)
    pipeline(context).close()
    context.pipeline = None
    (folder / "vectors.sqlite3").write_bytes(b"not a database at all " * 300)
    for suffix in ("-wal", "-shm"):
        (folder / f"vectors.sqlite3{suffix}").unlink(missing_ok=True)


@then("the damaged vectors file was kept beside the store")
def damaged_kept(context: Context) -> None:
    kept = list(_store_folder(context).glob("vectors.sqlite3.damaged-*"))
    assert len(kept) == 1, kept
    assert kept[0].read_bytes().startswith(b"not a database at all")


# -- a killed run --------------------------------------------------------------------------


def _cli(context: Context) -> list[str]:
    """`contextpipe index --format json .`, as the installed command."""
    return [str(Path(sys.executable).with_name("contextpipe")), "index", "--format", "json", "."]


def _committed(folder: Path) -> int:
    try:
        connection = sqlite3.connect(f"file:{folder / 'vectors.sqlite3'}?mode=ro", uri=True)
        try:
            return int(connection.execute("SELECT count(*) FROM vectors").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return 0


@when("a `contextpipe index` of the project is killed once some vectors are committed")
def killed_embedding(context: Context) -> None:
    folder = _store_folder(context)
    pipeline(context).close()
    context.pipeline = None
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    process = subprocess.Popen(
        _cli(context),
        cwd=context.project,
        env={**env, "CONTEXTPIPE_EMBEDDING__BATCH_SIZE": "8"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while _committed(folder) == 0:
            assert process.poll() is None, "the run ended before any vector was committed"
            assert time.monotonic() < deadline, "no vector committed within 120 s"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    context.committed_before = _committed(folder)


@when("`contextpipe index` runs on the project again")
def index_again_cli(context: Context) -> None:
    done = run_contextpipe(context, _cli(context)[1:])
    assert done.returncode == 0, done.stderr
    context.cli_result = json.loads(done.stdout)


@then("the second run embedded only the texts the first did not")
def embedded_rest(context: Context) -> None:
    vectors = context.cli_result["vectors"]
    assert 0 < context.committed_before < vectors["total"], (context.committed_before, vectors)
    assert vectors["embedded"] == vectors["total"] - context.committed_before, vectors


# -- hybrid scoring rules ------------------------------------------------------------------

_SCORES = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40)


@then("min-max normalisation maps any pool of scores onto 0 to 1, keeping their order")
def minmax_rules(context: Context) -> None:
    @settings(max_examples=500, derandomize=True, database=None, deadline=None)
    @for_all(_SCORES)
    def check(scores: list[float]) -> None:
        assume(len(set(scores)) > 1)
        normal = normalised(scores, "minmax")
        assert min(normal) == 0.0 and max(normal) == 1.0, normal
        for (a, x), (b, y) in zip(
            sorted(zip(scores, normal, strict=True)),
            sorted(zip(scores, normal, strict=True))[1:],
            strict=False,
        ):
            assert x <= y or a == b, (a, x, b, y)

    check()


@then("z-score normalisation gives any pool of unequal scores mean 0 and deviation 1")
def zscore_rules(context: Context) -> None:
    @settings(max_examples=500, derandomize=True, database=None, deadline=None)
    @for_all(_SCORES)
    def check(scores: list[float]) -> None:
        assume(statistics.pstdev(scores) > 1e-3)
        normal = normalised(scores, "zscore")
        assert abs(statistics.fmean(normal)) < 1e-6, statistics.fmean(normal)
        assert abs(statistics.pstdev(normal) - 1) < 1e-6, statistics.pstdev(normal)

    check()


@then(
    "a pool of equal scores normalises to 1 by min-max when positive, 0 otherwise, and 0 by z-score"
)
def equal_scores(context: Context) -> None:
    assert normalised([2.5, 2.5], "minmax") == [1.0, 1.0]
    assert normalised([0.0, 0.0, 0.0], "minmax") == [0.0, 0.0, 0.0]
    assert normalised([-3.0], "minmax") == [0.0]
    assert normalised([2.5, 2.5], "zscore") == [0.0, 0.0]


@then('the fragments proposed by "{hybrid}" come in the order "{keyword}" proposes them')
def same_order(context: Context, hybrid: str, keyword: str) -> None:
    opened = pipeline(context)
    request = ContextRequest(query=result(context).query, budget=2000)
    backends = opened.store.backends()
    assert backends.text is not None
    lexical = [hit.fragment.id for hit in backends.text.search(request.query, 100, request.filters)]
    strategy = opened.strategy(hybrid)
    assert strategy is not None
    proposed = [
        candidate.fragment.id
        for candidate in strategy.strategy.retrieve(
            request, with_vectors(backends, opened.store, opened.embedder), 2000
        )
    ]
    assert lexical and proposed[: len(lexical)] == lexical, (proposed, lexical)


@when('the stored vectors of "{path}" are replaced with random bytes, and the saved matrix goes')
def vectors_of_path_damaged(context: Context, path: str) -> None:
    """Damage inside the vectors' records, where SQLite sees nothing wrong, and no saved
    matrix to search instead: the next query builds it from the damaged rows.
    """
    folder = _store_folder(context)
    pipeline(context).close()
    context.pipeline = None
    generator = np.random.default_rng(5)
    with sqlite3.connect(folder / "index.sqlite3") as index:
        hashes = [
            row[0]
            for row in index.execute(
                "SELECT DISTINCT content_hash FROM fragments WHERE path = ? AND depth = 9", (path,)
            )
        ]
    with sqlite3.connect(folder / "vectors.sqlite3") as vectors:
        for digest in hashes:
            (size,) = vectors.execute(
                "SELECT length(vector) FROM vectors WHERE hash = ?", (digest,)
            ).fetchone()
            vectors.execute(
                "UPDATE vectors SET vector = ? WHERE hash = ?", (generator.bytes(size), digest)
            )
    assert hashes, f"no full text of {path}"
    (folder / "vectors.matrix.json").unlink()


@then('the context holds nothing of "{path}"')
def holds_nothing_of(context: Context, path: str) -> None:
    found = [f.source.path for f in result(context).fragments]
    assert path not in found, found


_SAVED = {
    "vector matrix": "vectors.matrix.npy",
    "row ids": "vectors.rows.npy",
    "approximate index": "vectors.ivf.*.faiss",
}


@when("the saved {file} of the store is written over with random values (seed {seed:d})")
def saved_written_over(context: Context, file: str, seed: int) -> None:
    """Random values in place of a saved array's (vectors of the same shape, row ids in the
    same range), or random bytes over the second half of the index: each still reads as
    what it was, its size unchanged.
    """
    context.first_answer = result(context)
    folder = _store_folder(context)
    pipeline(context).close()
    context.pipeline = None
    (path,) = folder.glob(_SAVED[file])
    generator = np.random.default_rng(seed)
    if path.suffix == ".npy":
        saved = np.load(path, mmap_mode="r+")
        if saved.dtype == np.float32:
            saved[:] = generator.standard_normal(saved.shape)
        else:
            saved[:] = generator.integers(saved.min(), saved.max() + 1, saved.shape)
        saved.flush()
        return
    size = path.stat().st_size
    with path.open("r+b") as out:
        out.seek(size // 2)
        out.write(generator.bytes(size - size // 2))


@then("the context and its reasons are those of the first answer")
def same_answer(context: Context) -> None:
    def said(answer: AssembledContext) -> list[tuple[str, list[str]]]:
        return [(f.id, [p.reason for p in f.provenance]) for f in answer.fragments]

    assert said(result(context)) == said(context.first_answer), said(result(context))


@then("the checksum of the saved {file} holds again")
def checksum_holds(context: Context, file: str) -> None:
    """The file was built again and sealed anew: the full check finds every seal whole."""
    said = pipeline(context).verify_store()
    assert "failed its checksum" not in said, said
    (path,) = _store_folder(context).glob(_SAVED[file])
    assert path.stat().st_size > 0
