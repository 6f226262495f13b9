"""Steps for the store contract (`store_contract.feature`): what every store backend
promises, checked against every installed one.

A scenario opens every backend `StoreRegistry().installed` names, each on a project folder
of its own with the setting `store.backend = NAME`, and reaches the store only through the
storage protocols (`Store`, `IndexWriter`, `Backends` and its read capabilities): never a
backend's own classes, tables or files. A step does its work in every store; a Then step
checks one promise in every store and fails once, naming each backend that broke it and what
it did instead.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import parse
from behave import given, register_type, step, then, when
from behave.runner import Context
from testkit import DEFAULT_TOKENIZER, set_mtime, write_files

from contextpipe import (
    Backends,
    ContextFragment,
    EdgeRecord,
    EdgeTarget,
    FragmentLookup,
    GraphEdge,
    GraphView,
    IndexSummary,
    IndexWriter,
    MemoryItem,
    MemoryScope,
    NewFragment,
    NodeRecord,
    Pipeline,
    RequestFilters,
    RequestScope,
    SessionTiers,
    SkipReason,
    SourceRef,
    Store,
    StoredFile,
    StoreError,
    TargetForm,
    TextHit,
    TextSearch,
    Timeline,
    get_tokenizer,
    query_terms,
)
from contextpipe.core.models import content_hash, fragment_id
from contextpipe.plugins import StoreRegistry

#: A limit no scenario's project reaches: "everything".
_ALL = 100_000
#: Hops enough to reach every node of a scenario's graph.
_ALL_HOPS = 100


@parse.with_pattern(r'[^"]*')
def _unquoted(text: str) -> str:
    return text


_QUOTED = re.compile(r'(\w+) "([^"]*)"')


@parse.with_pattern(r'in paths "[^"]*"(?: of kinds "[^"]*")?|of kinds "[^"]*"')
def _request_filters(text: str) -> RequestFilters:
    """`in paths "a/*, b/*" of kinds "function"`, either part alone too."""
    given = dict(_QUOTED.findall(text))
    return RequestFilters(
        paths=_listed(given.get("paths", "")), kinds=_listed(given.get("kinds", ""))
    )


@parse.with_pattern(r'since "[^"]*"(?: until "[^"]*")?|until "[^"]*"')
def _time_bounds(text: str) -> tuple[datetime | None, datetime | None]:
    """`since "<moment>" until "<moment>"`, either part alone too."""
    given = dict(_QUOTED.findall(text))
    return tuple(_moment(given[key]) if key in given else None for key in ("since", "until"))


# `"{query:Plain}"` stops at the closing quote: a step with two quoted values never
# matches a step with one.
@parse.with_pattern(r'(?: until "[^"]*")?')
def _until(text: str) -> datetime | None:
    """` until "<moment>"`, or nothing."""
    given = dict(_QUOTED.findall(text))
    return _moment(given["until"]) if "until" in given else None


register_type(Plain=_unquoted, Filters=_request_filters, Bounds=_time_bounds, Until=_until)
#: Before anything a store holds.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class _Subject:
    """One backend under contract: its project folder and the pipeline opened on it."""

    backend: str
    project: Path
    pipeline: Pipeline
    #: Everything ever indexed from each path: node URI -> full text.
    seen: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    #: What the last index run did, root by root.
    summaries: list[IndexSummary] = field(default_factory=list[IndexSummary])
    #: What a When step kept for the Then steps that follow it.
    kept: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def store(self) -> Store:
        return self.pipeline.store


class _Read(NamedTuple):
    """The five read capabilities every indexed store offers."""

    fragments: FragmentLookup
    text: TextSearch
    graph: GraphView
    timeline: Timeline
    sessions: SessionTiers


def _read(store: Store, scope: RequestScope | None = None) -> _Read:
    """The store's read capabilities for a request of `scope`; a missing one breaks the
    promise being checked.
    """
    offered = _offered(store.backends(scope))
    missing = [name for name, capability in offered.items() if capability is None]
    assert not missing, f"it offers no {', '.join(missing)} capability"
    return _Read(*offered.values())


def _offered(backends: Backends) -> dict[str, object]:
    """Each read capability by the name strategies require it by (None: not offered)."""
    return {
        "store": backends.fragments,
        "text": backends.text,
        "graph": backends.graph,
        "timeline": backends.timeline,
        "sessions": backends.sessions,
    }


def _names_offered(backends: Backends) -> frozenset[str]:
    offered = _offered(backends).items()
    return frozenset(name for name, capability in offered if capability is not None)


def _subjects(context: Context) -> list[_Subject]:
    subjects: list[_Subject] | None = getattr(context, "subjects", None)
    assert subjects, "no store backend was opened: start with 'every installed store backend'"
    return subjects


def _each(context: Context, promise: str, check: Callable[[_Subject], None]) -> None:
    """Run `check` on every store; fail once, naming every backend that broke `promise`."""
    broken: list[str] = []
    for subject in _subjects(context):
        try:
            check(subject)
        except AssertionError as exc:
            broken.append(f"store backend {subject.backend!r} breaks {promise!r}: {exc}")
        except Exception as exc:  # an error is a broken promise too: say which backend
            error = f"{type(exc).__name__}: {exc}"
            broken.append(f"store backend {subject.backend!r} breaks {promise!r}: {error}")
    assert not broken, "\n".join(broken)


def _edges(rows: Iterable[Mapping[str, str]]) -> list[GraphEdge]:
    return sorted(GraphEdge(row["from"], row["type"], row["to"]) for row in rows)


def _listed(text: str) -> tuple[str, ...]:
    """`"a, b"` -> ("a", "b")."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None, f"{text}: give a time zone"
    return moment


def _full_texts(store: Store, filters: RequestFilters | None = None) -> Sequence[ContextFragment]:
    """Every full-text fragment, as the timeline lists them to a request of the filters'
    session and user.
    """
    filters = filters or RequestFilters()
    scope = RequestScope(session=filters.session, user=filters.user)
    return _read(store, scope).timeline.recent(_ALL, filters)


def _remember_what_is_read(subject: _Subject) -> None:
    """Add what the store now holds to what `seen` says was ever read from each path."""
    for fragment in _full_texts(subject.store):
        subject.seen.setdefault(fragment.source.path, {})[fragment.uko_uri] = fragment.text


def _variants_held(store: Store) -> int:
    """How many fragments the variants of the timeline's nodes hold, all depths."""
    lookup = _read(store).fragments
    return sum(len(lookup.variants(fragment.uko_uri)) for fragment in _full_texts(store))


def _stored_files(store: Store) -> dict[str, StoredFile]:
    with store.writer() as writer:
        return dict(writer.files())


# -- the backends and their projects -------------------------------------------------------


@given("every installed store backend, each with a project of its own")
def every_backend(context: Context) -> None:
    installed = StoreRegistry().installed
    assert installed, "no store backend is installed (entry-point group contextpipe.stores)"
    context.subjects = []
    for name in installed:
        project = context.tmp / f"project-{name}"
        project.mkdir()
        try:
            opened = Pipeline.open(
                project_dir=project, overrides={"store.backend": name}, environ={}
            )
        except Exception as exc:
            raise AssertionError(f"store backend {name!r} does not open: {exc}") from exc
        context.add_cleanup(opened.close)
        context.subjects.append(_Subject(name, project, opened))


@step('every project has a file "{path:Plain}" containing:')
def file_in_every_project(context: Context, path: str) -> None:
    for subject in _subjects(context):
        write_files(subject.project, {path: context.text + "\n"})


@given('every project has a binary file "{path:Plain}"')
def binary_file_in_every_project(context: Context, path: str) -> None:
    for subject in _subjects(context):
        target = subject.project / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))


@given('every project has a document "{path:Plain}" with {count:d} sections about budgets')
def document_about_budgets(context: Context, path: str, count: int) -> None:
    sections = "\n\n".join(
        f"## Budget {n}\n\nThe budget, the budget and the budget of part {n}." for n in range(count)
    )
    for subject in _subjects(context):
        write_files(subject.project, {path: f"# Budgets\n\n{sections}\n"})


@given('every project has the notes "{names:Plain}" in "{folder:Plain}", each reading:')
def notes_in_every_project(context: Context, names: str, folder: str) -> None:
    for subject in _subjects(context):
        write_files(
            subject.project, {f"{folder}/{name}.md": context.text + "\n" for name in _listed(names)}
        )


@given("in every project the files were last modified:")
def files_modified(context: Context) -> None:
    for subject in _subjects(context):
        for row in context.table:
            set_mtime(subject.project / row["path"], _moment(row["modified"]))


@when('every project\'s "{path:Plain}" is changed to:')
def change_in_every_project(context: Context, path: str) -> None:
    """Rewrite a file, a second later than it was last modified: a change that any index
    sees, however coarse the file system's clock.
    """
    for subject in _subjects(context):
        target = subject.project / path
        before = target.stat().st_mtime_ns
        write_files(subject.project, {path: context.text + "\n"})
        _a_second_after(target, before)


@when('in every project "{path:Plain}" is touched')
def touch_in_every_project(context: Context, path: str) -> None:
    for subject in _subjects(context):
        target = subject.project / path
        _a_second_after(target, target.stat().st_mtime_ns)


def _a_second_after(target: Path, mtime_ns: int) -> None:
    """Give `target` a modification time one second after `mtime_ns`."""
    later = mtime_ns + 1_000_000_000
    os.utime(target, ns=(later, later))


@when('"{path:Plain}" is deleted from every project')
def delete_from_every_project(context: Context, path: str) -> None:
    for subject in _subjects(context):
        (subject.project / path).unlink()


# -- indexing ------------------------------------------------------------------------------


@step("every project is indexed")
@step("every project is indexed again")
def index_every_project(context: Context) -> None:
    def index(subject: _Subject) -> None:
        subject.summaries = subject.pipeline.index([subject.project])
        _remember_what_is_read(subject)

    _each(context, "a project can be indexed", index)


@when('every project forgets the folder "{folder:Plain}"')
def forget_in_every_project(context: Context, folder: str) -> None:
    _each(
        context,
        "a folder can be forgotten",
        lambda subject: subject.pipeline.forget(subject.project / folder),
    )


class _RecordingWriter:
    """An index writer that notes every change it is asked to make, then makes it."""

    def __init__(self, writer: IndexWriter, changes: list[str]) -> None:
        self._writer = writer
        self._changes = changes

    def files(self) -> Mapping[str, StoredFile]:
        return self._writer.files()

    def touch_file(self, path: str, stored: StoredFile) -> None:
        self._changes.append(f"touch {path}")
        self._writer.touch_file(path, stored)

    def remove_file(self, path: str) -> int:
        self._changes.append(f"remove {path}")
        return self._writer.remove_file(path)

    def replace_file(self, path: str, *written: Any) -> None:
        self._changes.append(f"replace {path}")
        self._writer.replace_file(path, *written)

    def commit(self) -> None:
        self._writer.commit()


class _RecordingStore:
    """A store whose write sessions note every change asked of them; all else is the store."""

    def __init__(self, store: Store, changes: list[str]) -> None:
        self._store = store
        self._changes = changes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextmanager
    def writer(self) -> Iterator[IndexWriter]:
        with self._store.writer() as writer:
            yield _RecordingWriter(writer, self._changes)


@when("every project is indexed again, recording what its store is asked to write")
def index_recording(context: Context) -> None:
    def index(subject: _Subject) -> None:
        store = subject.store
        subject.kept["graph view"] = store.backends().graph
        subject.kept["changes"] = changes = []
        subject.pipeline.store = _RecordingStore(store, changes)
        try:
            subject.pipeline.index([subject.project])
        finally:
            subject.pipeline.store = store

    _each(context, "a project can be indexed", index)


@then("no store was asked to replace, remove or touch a file")
def nothing_written(context: Context) -> None:
    def check(subject: _Subject) -> None:
        changes = subject.kept["changes"]
        assert not changes, f"an index with nothing changed asked its writer to {changes}"

    _each(context, "an unchanged file is not written again", check)


@then('every store was asked only to touch "{path:Plain}"')
def only_touched(context: Context, path: str) -> None:
    def check(subject: _Subject) -> None:
        changes = subject.kept["changes"]
        assert changes == [f"touch {path}"], f"the index asked its writer to {changes}"

    _each(context, "a file touched without a change is not written again", check)


# -- capabilities and the store's life -----------------------------------------------------


@then("every store offers no read capability")
def offers_nothing(context: Context) -> None:
    def check(subject: _Subject) -> None:
        offered = subject.store.backends()
        assert _names_offered(offered) == frozenset(), f"it offers {_names_offered(offered)}"
        assert offered.available() == frozenset(), f"available() is {offered.available()}"

    _each(context, "a store with nothing indexed offers no read capability", check)


@then("every store reads 0 bytes ahead")
def reads_nothing_ahead(context: Context) -> None:
    def check(subject: _Subject) -> None:
        read = subject.store.prefetch(1 << 40)
        assert read == 0, f"it read {read} bytes ahead"

    _each(context, "a store with nothing indexed reads nothing ahead", check)


@then(
    "every store reads ahead {limit:d} bytes when allowed that many, and all it keeps on this"
    " machine, the same each time, when allowed all"
)
def reads_ahead_within(context: Context, limit: int) -> None:
    def check(subject: _Subject) -> None:
        before = _contents(subject.store)
        allowed = subject.store.prefetch(limit)
        everything = [subject.store.prefetch(1 << 40) for _ in range(2)]
        assert everything[0] == everything[1], f"it read {everything} bytes ahead"
        if subject.store.local_folders:  # an indexed store keeps something there
            assert everything[0] > 0, "it read nothing ahead, though it keeps folders here"
        expected = min(limit, everything[0])
        assert allowed == expected, f"allowed {limit} of {everything[0]}, it read {allowed}"
        subject.kept["contents before"] = before

    _each(context, "reading ahead keeps to its limit", check)


@then("every store shows what it showed before reading ahead")
def unchanged_by_reading_ahead(context: Context) -> None:
    _shows_as_before(context, "reading ahead changes nothing")


def _shows_as_before(context: Context, promise: str) -> None:
    """Every store shows what `_contents` kept under "contents before"."""

    def check(subject: _Subject) -> None:
        differences = _differences(_contents(subject.store), subject.kept["contents before"])
        assert not differences, "; ".join(differences)

    _each(context, promise, check)


@then('every store offers exactly the capabilities "{names:Plain}"')
def offers_exactly(context: Context, names: str) -> None:
    expected = frozenset(_listed(names))

    def check(subject: _Subject) -> None:
        offered = subject.store.backends()
        assert _names_offered(offered) == expected, f"it offers {_names_offered(offered)}"
        assert offered.available() == expected, f"available() is {sorted(offered.available())}"

    _each(context, "an indexed store offers every read capability", check)


@then("every capability a store offers keeps its protocol")
def capabilities_keep_protocols(context: Context) -> None:
    def check(subject: _Subject) -> None:
        offered = subject.store.backends()
        for capability, protocol in (
            (offered.fragments, FragmentLookup),
            (offered.text, TextSearch),
            (offered.graph, GraphView),
            (offered.timeline, Timeline),
            (offered.sessions, SessionTiers),
        ):
            if capability is not None:
                assert isinstance(capability, protocol), (
                    f"{type(capability).__name__} is not a {protocol.__name__}"
                )

    _each(context, "each capability keeps its protocol", check)


@then('checking every store fails with StoreError saying "{words:Plain}"')
def check_fails(context: Context, words: str) -> None:
    def check(subject: _Subject) -> None:
        try:
            subject.store.check()
        except StoreError as exc:
            assert words in str(exc), f"check() says {str(exc)!r}"
            assert "\n" not in str(exc), f"check() says more than one line: {str(exc)!r}"
            return
        raise AssertionError("check() passed")

    _each(context, "checking a store with nothing indexed says what to run", check)


@then("checking every store passes")
def check_passes(context: Context) -> None:
    _each(context, "an indexed store passes its check", lambda subject: subject.store.check())


@then("every store counts {files:d} files and {fragments:d} fragments")
def counts_exactly(context: Context, files: int, fragments: int) -> None:
    def check(subject: _Subject) -> None:
        stats = subject.store.stats()
        assert (stats.files, stats.fragments) == (files, fragments), (
            f"stats() counts {stats.files} files and {stats.fragments} fragments"
        )
        assert stats.searchable <= stats.fragments, f"{stats.searchable} searchable fragments"

    _each(context, "a store counts what it holds", check)


@then("every store counts {files:d} files and every fragment the index wrote")
def counts_what_index_wrote(context: Context, files: int) -> None:
    def check(subject: _Subject) -> None:
        stats = subject.store.stats()
        written = sum(summary.fragments_written for summary in subject.summaries)
        assert (stats.files, stats.fragments) == (files, written), (
            f"stats() counts {stats.files} files and {stats.fragments} fragments;"
            f" the index wrote {written} fragments of {files} files"
        )
        count = _read(subject.store).fragments.count()
        assert count == written, f"the fragment lookup counts {count}, the index wrote {written}"

    _each(context, "a store counts the files and fragments it was given", check)


@then("every store counts {files:d} file and as many fragments as its lookups hold")
@then("every store counts {files:d} files and as many fragments as its lookups hold")
def counts_what_lookups_hold(context: Context, files: int) -> None:
    def check(subject: _Subject) -> None:
        read = _read(subject.store)
        stats = subject.store.stats()
        held = _variants_held(subject.store)
        counted = (stats.files, stats.fragments, read.fragments.count())
        assert counted == (files, held, held), (
            f"stats() counts {counted[0]} files and {counted[1]} fragments, count() says"
            f" {counted[2]}; expected {files} files, and the variants of its nodes hold {held}"
        )

    _each(context, "a store counts what it holds", check)


@when("every store moves its index aside")
def move_aside(context: Context) -> None:
    def move(subject: _Subject) -> None:
        subject.kept["moved to"] = subject.store.move_aside()

    _each(context, "an index can be moved aside", move)


@then("every store said where its index went")
def said_where(context: Context) -> None:
    def check(subject: _Subject) -> None:
        moved = subject.kept["moved to"]
        assert moved, f"move_aside() returned {moved!r}"
        assert moved != subject.store.location, f"it kept the index where it was: {moved}"

    _each(context, "moving an index aside says where it went", check)


@then("every store said it had nothing to move")
def said_nothing_to_move(context: Context) -> None:
    def check(subject: _Subject) -> None:
        moved = subject.kept["moved to"]
        assert moved is None, f"move_aside() of an empty store returned {moved!r}"

    _each(context, "moving an empty store aside moves nothing", check)


@when("every store is closed")
def close_every_store(context: Context) -> None:
    _each(context, "a store can be closed", lambda subject: subject.store.close())


# -- index, fragment lookup and the writer -------------------------------------------------


@then("in every store every node's variants are its depths, deepest first, its full text first")
def variants_deepest_first(context: Context) -> None:
    def check(subject: _Subject) -> None:
        lookup = _read(subject.store).fragments
        full = _full_texts(subject.store)
        assert full, "the timeline lists no full text"
        for fragment in full:
            variants = lookup.variants(fragment.uko_uri)
            depths = [variant.detail_depth for variant in variants]
            assert depths == sorted(set(depths), reverse=True), (
                f"{fragment.uko_uri}: depths {depths}"
            )
            assert variants[0] == fragment, f"{fragment.uko_uri}: the first variant is not its text"
            others = {variant.uko_uri for variant in variants} - {fragment.uko_uri}
            assert not others, f"{fragment.uko_uri}: variants of other nodes {others}"

    _each(context, "a node's variants come deepest first", check)


@then(
    "in every store a lookup of many nodes at once gives each node's variants as a lookup of"
    " one does"
)
def variants_many_as_one(context: Context) -> None:
    def check(subject: _Subject) -> None:
        lookup = _read(subject.store).fragments
        uris = [fragment.uko_uri for fragment in _full_texts(subject.store)]
        absent = "uko://doc/nowhere.md#nothing"
        found = lookup.variants_many([*reversed(uris), absent, uris[0]])
        assert absent not in found, f"a node the store lacks has variants {found[absent]}"
        assert sorted(found) == sorted(set(uris)), (
            f"looked up {sorted(set(uris))}, got {sorted(found)}"
        )
        for uri in uris:
            one = list(lookup.variants(uri))
            assert list(found[uri]) == one, f"{uri}: {found[uri]} at once, {one} alone"

    _each(context, "many nodes at once are looked up as each alone", check)


@then(
    "every store gives the token count of each text it holds, as counted by the tokenizer"
    " that counted it, and for that text alone"
)
def stored_token_counts(context: Context) -> None:
    tokenizer = get_tokenizer(DEFAULT_TOKENIZER)

    def check(subject: _Subject) -> None:
        lookup = _read(subject.store).fragments
        stored = [v for f in _full_texts(subject.store) for v in lookup.variants(f.uko_uri)]
        counts = lookup.token_counts(stored, DEFAULT_TOKENIZER)
        for fragment in stored:
            real = tokenizer.count(fragment.text)
            found = counts.get(fragment.content_hash)
            assert found == real, f"{fragment.id}: {found} tokens, its text has {real}"
        other = "the store holds nothing like this"
        changed = stored[0].model_copy(update={"text": other, "content_hash": content_hash(other)})
        unknown = stored[0].model_copy(update={"id": "uko://doc/nowhere.md#nothing@9"})
        asked = lookup.token_counts([changed, unknown], DEFAULT_TOKENIZER)
        assert not asked, f"counts for texts the store does not hold under those ids: {asked}"
        elsewhere = lookup.token_counts(stored, "cl100k_base")
        assert not elsewhere, f"counts by a tokenizer that counted none of them: {elsewhere}"

    _each(context, "a stored text's token count is its tokenizer's", check)


@then("every store's fragment lookup counts every variant of every node")
def lookup_counts_variants(context: Context) -> None:
    def check(subject: _Subject) -> None:
        read = _read(subject.store)
        held = _variants_held(subject.store)
        assert read.fragments.count() == held, f"count() is {read.fragments.count()}, not {held}"

    _each(context, "the fragment lookup counts every fragment", check)


@then('no store has a variant of "{uri:Plain}"')
def no_variant(context: Context, uri: str) -> None:
    def check(subject: _Subject) -> None:
        found = _read(subject.store).fragments.variants(uri)
        assert not found, f"variants() of an unknown node gives {[f.id for f in found]}"

    _each(context, "an unknown node has no variants", check)


@then("every store's writer gives back these files as they are on disk:")
def writer_gives_back(context: Context) -> None:
    def check(subject: _Subject) -> None:
        stored = _stored_files(subject.store)
        expected = [row["path"] for row in context.table]
        assert sorted(stored) == expected, f"files() gives {sorted(stored)}"
        for row in context.table:
            path = subject.project / row["path"]
            data = path.read_bytes()
            skipped = SkipReason(row["skipped"]) if row["skipped"] else None
            wanted = StoredFile(
                len(data),
                path.stat().st_mtime_ns,
                hashlib.sha256(data).hexdigest(),
                DEFAULT_TOKENIZER,
                skipped,
            )
            got = stored[row["path"]]
            assert got == wanted, f"{row['path']}: files() gives {got}, it stored {wanted}"

    _each(context, "the writer gives every file back as it was stored", check)


# -- nothing left, and exactly what a fresh index holds -----------------------------------


def _forgotten(store: Store, path: str, uris: Mapping[str, str]) -> None:
    """Nothing read from `path` (its nodes `uris`, with their full texts) is in the store."""
    read = _read(store)
    assert path not in _stored_files(store), f"the writer still lists {path}"
    listed = [f.uko_uri for f in _full_texts(store) if f.source.path == path]
    assert not listed, f"the timeline still lists {listed}"
    for uri, text in sorted(uris.items()):
        assert not read.fragments.variants(uri), f"{uri} still has variants"
        assert read.graph.node(uri) is None, f"the graph still has the node {uri}"
        assert not read.graph.neighbours(uri), f"the graph still has edges at {uri}"
        found = [h.fragment.uko_uri for h in read.text.search(text, _ALL, RequestFilters())]
        stale = [found_uri for found_uri in found if found_uri in uris]
        assert not stale, f"searching for the text of {uri} still finds {stale}"


@then('nothing read from "{path:Plain}" is left in any store')
def nothing_left(context: Context, path: str) -> None:
    def check(subject: _Subject) -> None:
        uris = subject.seen.get(path)
        assert uris, f"nothing was ever read from {path}"
        _forgotten(subject.store, path, uris)

    _each(context, "a file that is gone takes everything read from it along", check)


@then('no store knows the node "{uri:Plain}"')
def node_unknown(context: Context, uri: str) -> None:
    def check(subject: _Subject) -> None:
        path = next((p for p, uris in subject.seen.items() if uri in uris), None)
        assert path is not None, f"{uri} was never indexed"
        read = _read(subject.store)
        assert not read.fragments.variants(uri), f"{uri} still has variants"
        assert read.graph.node(uri) is None, f"the graph still has the node {uri}"
        assert not read.graph.neighbours(uri), f"the graph still has edges at {uri}"
        listed = [f.uko_uri for f in _full_texts(subject.store)]
        assert uri not in listed, f"the timeline still lists {uri}"
        text = subject.seen[path][uri]
        found = [h.fragment.uko_uri for h in read.text.search(text, _ALL, RequestFilters())]
        assert uri not in found, f"searching for its old text still finds {uri}"

    _each(context, "a re-indexed file leaves none of its old nodes behind", check)


def _contents(store: Store) -> dict[str, object]:
    """Everything a store shows through its protocols, apart from where it is."""
    read = _read(store)
    stats = store.stats()
    full = list(_full_texts(store))
    uris = sorted({fragment.uko_uri for fragment in full})
    return {
        "files": (stats.files, stats.fragments, stats.searchable),
        "stored files": _stored_files(store),
        "timeline": full,
        "variants": {uri: list(read.fragments.variants(uri)) for uri in uris},
        "fragment count": read.fragments.count(),
        "graph edges": list(read.graph.subgraph(uris, _ALL_HOPS)),
        "graph counts": read.graph.stats(),
    }


def _differences(found: Mapping[str, object], expected: Mapping[str, object]) -> list[str]:
    """What differs between two `_contents`, a line for each part, briefly."""
    lines: list[str] = []
    for part, value in expected.items():
        got = found[part]
        if got == value:
            continue
        if isinstance(value, list) and isinstance(got, list):
            extra = [item for item in got if item not in value][:3]
            lacking = [item for item in value if item not in got][:3]
            lines.append(f"{part}: has {extra} too many, lacks {lacking}")
        elif isinstance(value, dict) and isinstance(got, dict):
            keys = sorted({*value, *got})
            wrong = [key for key in keys if got.get(key) != value.get(key)][:3]
            lines.append(f"{part}: differs at {wrong}")
        else:
            lines.append(f"{part}: {got} instead of {value}")
    return lines


def _fresh_contents(subject: _Subject, copy: Path, without: str | None) -> dict[str, object]:
    """What the same backend holds after indexing a copy of the project (`without` one of
    its folders) into a new store.
    """
    skipped = {Path(folder).resolve() for folder in subject.store.local_folders}

    def store_folders(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if (Path(folder) / name).resolve() in skipped]

    shutil.copytree(subject.project, copy, ignore=store_folders)
    if without is not None:
        shutil.rmtree(copy / without)
    fresh = Pipeline.open(
        project_dir=copy, overrides={"store.backend": subject.backend}, environ={}
    )
    try:
        fresh.index([copy])
        return _contents(fresh.store)
    finally:
        fresh.close()


@then("every store holds exactly what a fresh index of its project holds")
def holds_what_fresh_holds(context: Context) -> None:
    _holds_what_fresh_holds(context, None)


@then('every store holds exactly what a fresh index of its project without "{folder:Plain}" holds')
def holds_what_fresh_holds_without(context: Context, folder: str) -> None:
    _holds_what_fresh_holds(context, folder)


def _holds_what_fresh_holds(context: Context, without: str | None) -> None:
    def check(subject: _Subject) -> None:
        copy = context.tmp / f"fresh-{subject.backend}"
        fresh = _fresh_contents(subject, copy, without)
        differences = _differences(_contents(subject.store), fresh)
        assert not differences, "; ".join(differences)

    _each(context, "a re-indexed store holds what a fresh index holds", check)


# -- crash safety --------------------------------------------------------------------------


class _SessionFailedError(Exception):
    """The failure a scenario's write session raises on purpose."""


@dataclass(frozen=True)
class _WrittenFile:
    """A small file as a scenario's write session writes it: a root node and one child
    node, each with its full text, the root containing the child, and the child mentioning
    a symbol when the row names one.
    """

    path: str
    stored: StoredFile
    fragments: tuple[NewFragment, ...]
    nodes: tuple[NodeRecord, ...]
    edges: tuple[EdgeRecord, ...]

    @classmethod
    def of(cls, row: Mapping[str, str]) -> _WrittenFile:
        path, kind, name, text = row["path"], row["node"], row["name"], row["text"]
        document = path.endswith(".md")
        root = f"uko://{'doc' if document else 'code'}/{path}"
        child = f"{root}#{name.lower()}"
        data = text.encode()
        digest = hashlib.sha256(data).hexdigest()
        moment = _moment("2024-04-01T12:00:00+00:00")
        mtime_ns = int(moment.timestamp()) * 1_000_000_000
        stored = StoredFile(len(data), mtime_ns, digest, DEFAULT_TOKENIZER)
        nodes = (
            NodeRecord(root, "document" if document else "module", path, path, 1, 1, None),
            NodeRecord(child, kind, name, path, 1, 1, root),
        )
        count = get_tokenizer(DEFAULT_TOKENIZER).count
        fragments = tuple(
            NewFragment(
                ContextFragment(
                    id=fragment_id(node.uri, 9),
                    uko_uri=node.uri,
                    detail_depth=9,
                    text=text,
                    token_count=count(text),
                    source=SourceRef(
                        uri=node.uri,
                        path=path,
                        start_line=1,
                        end_line=1,
                        kind=node.kind,
                        modified_at=moment,
                    ),
                    content_hash=content_hash(text),
                    metadata={"read_at": f"sha256:{digest}"},
                ),
                node.name,
                "markdown" if document else "python",
                text if node.parent is not None else None,
            )
            for node in nodes
        )
        # A file declares its own `contains` edges, as the parsers do.
        edges = (EdgeRecord(root, "contains", EdgeTarget(TargetForm.NODE, (child,)), path),)
        if row["mentions"]:
            mentions = EdgeTarget(TargetForm.SYMBOL, (row["mentions"],))
            edges += (EdgeRecord(child, "mentions", mentions, path),)
        return cls(path, stored, fragments, nodes, edges)


def _holdings(store: Store, path: str) -> dict[str, object]:
    """Everything a store shows of one file through its protocols."""
    read = _read(store)
    full = list(_full_texts(store, RequestFilters(paths=(path,))))
    uris = sorted(fragment.uko_uri for fragment in full)
    return {
        "stored file": _stored_files(store).get(path),
        "timeline": full,
        "variants": {uri: list(read.fragments.variants(uri)) for uri in uris},
        "graph edges": sorted({edge for uri in uris for edge in read.graph.neighbours(uri)}),
    }


@when("a write session in every store does this and then fails:")
def failing_session(context: Context) -> None:
    rows = list(context.table)
    paths = sorted({row["path"] for row in rows if row["path"]})

    def run(subject: _Subject) -> None:
        store = subject.store
        subject.kept["before"] = {path: _holdings(store, path) for path in paths}
        subject.kept["contents before"] = _contents(store)
        subject.kept["written"] = {}
        try:
            with store.writer() as writer:
                for row in rows:
                    if row["step"] == "commit":
                        writer.commit()
                    elif row["step"] == "remove":
                        writer.remove_file(row["path"])
                    else:
                        written = _WrittenFile.of(row)
                        subject.kept["written"][written.path] = written
                        writer.replace_file(
                            written.path,
                            written.stored,
                            written.fragments,
                            written.nodes,
                            written.edges,
                        )
                raise _SessionFailedError("the scenario's write session fails here")
        except _SessionFailedError:
            subject.kept["failure reached the caller"] = True
        else:
            subject.kept["failure reached the caller"] = False

    _each(context, "a write session can be run", run)


@then("the failure reached the caller of every store's write session")
def failure_reached_caller(context: Context) -> None:
    def check(subject: _Subject) -> None:
        assert subject.kept["failure reached the caller"], "the write session swallowed the error"

    _each(context, "a write session lets its caller's error through", check)


@then('every store holds "{path:Plain}" as it was before the session')
def holds_as_before(context: Context, path: str) -> None:
    def check(subject: _Subject) -> None:
        before = subject.kept["before"][path]
        differences = _differences(_holdings(subject.store, path), before)
        assert not differences, f"{path}: " + "; ".join(differences)

    _each(context, "a write session's failure rolls back what it did not commit", check)


@then("every store holds exactly what it held before the session")
def holds_all_as_before(context: Context) -> None:
    _shows_as_before(context, "a write session's failure rolls back what it did not commit")


@then('every store holds "{path:Plain}" as the session wrote it')
def holds_as_written(context: Context, path: str) -> None:
    def check(subject: _Subject) -> None:
        written: _WrittenFile = subject.kept["written"][path]
        read = _read(subject.store)
        stored = _stored_files(subject.store).get(path)
        assert stored == written.stored, (
            f"files() gives {stored}, the session wrote {written.stored}"
        )
        full = {
            f.uko_uri: f.text for f in _full_texts(subject.store, RequestFilters(paths=(path,)))
        }
        wanted = {item.fragment.uko_uri: item.fragment.text for item in written.fragments}
        assert full == wanted, f"the timeline lists {full}, the session wrote {wanted}"
        root, child = written.nodes
        node = read.graph.node(child.uri)
        assert node is not None and node.kind == child.kind, f"the graph has {child.uri} as {node}"
        edges = read.graph.neighbours(child.uri, direction="in")
        assert GraphEdge(root.uri, "contains", child.uri) in edges, f"edges in: {edges}"
        for declared in (edge for edge in written.edges if edge.type != "contains"):
            out = read.graph.neighbours(child.uri, [declared.type], "out")
            names = [getattr(read.graph.node(edge.target), "name", None) for edge in out]
            assert declared.target.names[0] in names, f"{declared} resolves to {out}"
        replaced = sorted(set(subject.seen.get(path, {})) - set(wanted))
        left = [uri for uri in replaced if read.fragments.variants(uri) or read.graph.node(uri)]
        assert not left, f"the nodes it replaced are still there: {left}"

    _each(context, "what a write session committed stays", check)


# -- text search ---------------------------------------------------------------------------


def _fits(fragment: ContextFragment, filters: RequestFilters) -> bool:
    path, kind = fragment.source.path, fragment.source.kind
    return (
        not filters.paths or any(fnmatch.fnmatchcase(path, glob) for glob in filters.paths)
    ) and (not filters.kinds or kind in filters.kinds)


def _ids(hits: Sequence[TextHit]) -> list[str]:
    return [hit.fragment.id for hit in hits]


def _search(
    subject: _Subject, query: str, limit: int = _ALL, filters: RequestFilters | None = None
) -> Sequence[TextHit]:
    return _read(subject.store).text.search(query, limit, filters or RequestFilters())


@then('searching every store for "{query:Plain}" finds nothing')
def search_finds_nothing(context: Context, query: str) -> None:
    def check(subject: _Subject) -> None:
        found = [hit.fragment.uko_uri for hit in _search(subject, query)]
        assert not found, f"it finds {found}"

    _each(context, f"searching for {query!r} finds nothing", check)


@then(
    'searching every store for "{query:Plain}" finds "{uri:Plain}" first, matching "{terms:Plain}"'
)
def search_finds_first(context: Context, query: str, uri: str, terms: str) -> None:
    def check(subject: _Subject) -> None:
        hits = _search(subject, query)
        assert hits, "it finds nothing"
        first = hits[0]
        found = [hit.fragment.uko_uri for hit in hits]
        assert first.fragment.uko_uri == uri, f"it finds {found}"
        assert first.matched_terms == _listed(terms), f"the first matched {first.matched_terms}"
        assert first.fragment.detail_depth == 9, (
            f"the first is at depth {first.fragment.detail_depth}"
        )

    _each(context, "a search finds the fragment that holds its words", check)


@then(
    'searching every store for "{query:Plain}" finds its hits best first,'
    " each with the terms it matched"
)
def search_best_first(context: Context, query: str) -> None:
    terms = query_terms(query)

    def check(subject: _Subject) -> None:
        hits = _search(subject, query)
        assert len(hits) > 1, f"it finds {len(hits)} hits, too few to check an order"
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True), f"scores in this order: {scores}"
        for hit in hits:
            assert hit.matched_terms, f"{hit.fragment.uko_uri} matched no term"
            assert set(hit.matched_terms) <= set(terms), (
                f"{hit.fragment.uko_uri} matched {hit.matched_terms}, not terms of {terms}"
            )

    _each(context, "a search finds its best hits first, with the terms each matched", check)


@then(
    'every store scores each full text for "{query:Plain}" as its search does, whatever its'
    " rank, and 0 where no word matches"
)
def scores_as_search(context: Context, query: str) -> None:
    def check(subject: _Subject) -> None:
        text = _read(subject.store).text
        full = list(_full_texts(subject.store))
        hits = {hit.fragment.id: hit.score for hit in _search(subject, query)}
        assert hits and len(hits) < len(full), "the query must match some texts, not all"
        expected = [hits.get(f.id, 0.0) for f in full]
        assert list(text.scores(query, full)) == expected, "not the scores its search gives"
        # Asked alone and in another order: each text's score is its own.
        for fragment in reversed(full):
            (score,) = text.scores(query, [fragment])
            assert score == hits.get(fragment.id, 0.0), f"{fragment.id} alone scores {score}"
        # The last hit of a search cut to one result still has its score.
        last = _search(subject, query)[-1]
        (score,) = text.scores(query, [last.fragment])
        assert score == last.score and _search(subject, query, 1)[0].fragment.id != (
            last.fragment.id
        ), "the last hit is scored as it ranks"

    _each(context, "a text's score does not depend on its rank", check)


@then("searching every store for each of these finds what its plain words find:")
def search_no_syntax(context: Context) -> None:
    def check(subject: _Subject) -> None:
        wrong: list[str] = []
        for row in context.table:
            query, words = row["query"], row["plain words"]
            try:
                found = _ids(_search(subject, query))
            except Exception as exc:  # a syntax error is the broken promise itself
                wrong.append(f"{query!r} raises {type(exc).__name__}: {exc}")
                continue
            plain = _ids(_search(subject, words))
            if not plain:
                wrong.append(f"{words!r} finds nothing: the row checks nothing")
            elif found != plain:
                wrong.append(f"{query!r} finds {found}, {words!r} finds {plain}")
        assert not wrong, "; ".join(wrong)

    _each(context, "what a user types is never query syntax", check)


@then('searching every store for "{query:Plain}" {filters:Filters} finds only fragments that fit')
def search_fits(context: Context, query: str, filters: RequestFilters) -> None:
    def check(subject: _Subject) -> None:
        hits = _search(subject, query, filters=filters)
        assert hits, f"it finds nothing that fits {filters}"
        misfits = [
            (hit.fragment.source.path, hit.fragment.source.kind)
            for hit in hits
            if not _fits(hit.fragment, filters)
        ]
        assert not misfits, f"it finds {misfits}, which do not fit {filters}"

    _each(context, "a search keeps to its filters", check)


@then('searching every store for "{query:Plain}" within {limit:d} result finds {count:d} hit')
def search_within(context: Context, query: str, limit: int, count: int) -> None:
    def check(subject: _Subject) -> None:
        found = len(_search(subject, query, limit))
        assert found == count, f"with the limit {limit} it finds {found} hits"

    _each(context, "a search keeps to its limit", check)


@then('searching every store for "{query:Plain}" within 0 results finds nothing')
def search_within_zero(context: Context, query: str) -> None:
    def check(subject: _Subject) -> None:
        found = _ids(_search(subject, query, 0))
        assert not found, f"with the limit 0 it finds {found}"

    _each(context, "a search keeps to its limit", check)


@then(
    'searching every store for "{query:Plain}" {filters:Filters} finds the best hits that fit,'
    " at every limit up to {most:d}"
)
def best_that_fit(context: Context, query: str, filters: RequestFilters, most: int) -> None:
    def check(subject: _Subject) -> None:
        fitting = [hit for hit in _search(subject, query) if _fits(hit.fragment, filters)]
        assert fitting, f"nothing it finds fits {filters}: the step checks nothing"
        for limit in range(1, most + 1):
            found = _ids(_search(subject, query, limit, filters))
            wanted = _ids(fitting[:limit])
            assert found == wanted, (
                f"with the limit {limit} it finds {found}; of all it finds, the best that fit"
                f" are {wanted}"
            )

    _each(context, "a filter never hides a match that fits it", check)


@then(
    'searching every store for "{query:Plain}" finds {count:d} hits of equal score,'
    " in fragment id order"
)
def ties_in_id_order(context: Context, query: str, count: int) -> None:
    def check(subject: _Subject) -> None:
        hits = _search(subject, query)
        scores = {hit.score for hit in hits}
        assert len(hits) == count and len(scores) == 1, (
            f"it finds {len(hits)} hits scoring {sorted(scores)}"
        )
        assert _ids(hits) == sorted(_ids(hits)), f"ids in this order: {_ids(hits)}"

    _each(context, "hits of equal score come in fragment id order", check)


@then(
    'searching every store for "{query:Plain}" finds the first hits of its whole list,'
    " at every limit up to {most:d}"
)
def search_limit_prefix(context: Context, query: str, most: int) -> None:
    def check(subject: _Subject) -> None:
        whole = _ids(_search(subject, query))
        for limit in range(most + 1):
            found = _ids(_search(subject, query, limit))
            assert found == whole[:limit], f"with the limit {limit} it finds {found} of {whole}"

    _each(context, "a smaller limit gives the first hits of a larger one", check)


# -- graph view ----------------------------------------------------------------------------


@then(
    'every store\'s graph knows "{uri:Plain}" as the {kind} "{name:Plain}" of "{path:Plain}",'
    " lines {start:d}-{end:d}"
)
def graph_knows(
    context: Context, uri: str, kind: str, name: str, path: str, start: int, end: int
) -> None:
    def check(subject: _Subject) -> None:
        node = _read(subject.store).graph.node(uri)
        assert node is not None, f"node() does not know {uri}"
        found = (node.uri, node.kind, node.name, node.path, node.start_line, node.end_line)
        assert found == (uri, kind, name, path, start, end), f"node() gives {node}"

    _each(context, "the graph knows every node", check)


@then('no store\'s graph knows a node "{uri:Plain}"')
def graph_does_not_know(context: Context, uri: str) -> None:
    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        assert graph.node(uri) is None, f"node() gives {graph.node(uri)}"
        assert not graph.neighbours(uri), f"neighbours() gives {graph.neighbours(uri)}"

    _each(context, "the graph knows no node that was never indexed", check)


_DIRECTIONS: dict[str, str] = {"going out of": "out", "coming in to": "in", "at": "both"}


def _neighbours_are(
    context: Context, types: Collection[str], where: str, uri: str, expected: list[GraphEdge]
) -> None:
    direction = _DIRECTIONS[where]

    def check(subject: _Subject) -> None:
        found = list(_read(subject.store).graph.neighbours(uri, types, direction))
        assert found == sorted(found), f"neighbours() are not sorted: {found}"
        assert found == expected, f"neighbours({uri!r}, {sorted(types)}, {direction!r}) are {found}"

    _each(context, "neighbours() keep to their edge types and direction", check)


@then('in every store\'s graph, the edges {where} "{uri:Plain}" are:')
def neighbours_are(context: Context, where: str, uri: str) -> None:
    _neighbours_are(context, (), where, uri, _edges(context.table))


@then('in every store\'s graph, the "{types:Plain}" edges {where} "{uri:Plain}" are:')
def typed_neighbours_are(context: Context, types: str, where: str, uri: str) -> None:
    _neighbours_are(context, _listed(types), where, uri, _edges(context.table))


@then('in every store\'s graph, no edge goes out of "{uri:Plain}"')
def no_edge_out(context: Context, uri: str) -> None:
    _neighbours_are(context, (), "going out of", uri, [])


def _subgraph_is(context: Context, hops: int, uri: str, expected: list[GraphEdge]) -> None:
    def check(subject: _Subject) -> None:
        found = list(_read(subject.store).graph.subgraph([uri], hops))
        assert found == sorted(found), f"subgraph() is not sorted: {found}"
        assert found == expected, f"subgraph([{uri!r}], {hops}) is {found}"

    _each(context, "a subgraph holds the edges within its hops", check)


@then('in every store\'s graph, the subgraph within {hops:d} hop of "{uri:Plain}" is:')
@then('in every store\'s graph, the subgraph within {hops:d} hops of "{uri:Plain}" is:')
def subgraph_is(context: Context, hops: int, uri: str) -> None:
    _subgraph_is(context, hops, uri, _edges(context.table))


@then('in every store\'s graph, the subgraph within {hops:d} hops of "{uri:Plain}" is empty')
def subgraph_empty(context: Context, hops: int, uri: str) -> None:
    _subgraph_is(context, hops, uri, [])


@then("in every store's graph, PageRank seeded at a node ranks:")
def pagerank_ranks(context: Context) -> None:
    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        for row in context.table:
            seed, higher, lower = row["seed"], row["higher"], row["lower"]
            scores = graph.pagerank({seed: 1.0})
            assert higher in scores and lower in scores, (
                f"it scores {sorted(scores)}, not both {higher} and {lower}"
            )
            assert scores[higher] > scores[lower], (
                f"seeded at {seed}, {higher} scores {scores[higher]:.4f}, {lower}"
                f" {scores[lower]:.4f}"
            )

    _each(context, "PageRank ranks what its seed links to above the rest", check)


@then('in every store\'s graph, PageRank seeded only at "{seed:Plain}" scores nothing')
def pagerank_unknown(context: Context, seed: str) -> None:
    def check(subject: _Subject) -> None:
        scores = _read(subject.store).graph.pagerank({seed: 1.0})
        assert not scores, f"it scores {len(scores)} nodes"

    _each(context, "PageRank ignores seeds the graph does not know", check)


@then(
    'in every store\'s graph, PageRank seeded at "{seed:Plain}" and "{unknown:Plain}"'
    " scores as if seeded at the first only"
)
def pagerank_ignores_unknown(context: Context, seed: str, unknown: str) -> None:
    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        alone, both = graph.pagerank({seed: 1.0}), graph.pagerank({seed: 1.0, unknown: 1.0})
        assert dict(both) == dict(alone), "an unknown seed changes the scores"

    _each(context, "PageRank ignores seeds the graph does not know", check)


@then("every store's graph counts what its neighbours and subgraphs show")
def graph_counts(context: Context) -> None:
    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        uris = [fragment.uko_uri for fragment in _full_texts(subject.store)]
        edges = set(graph.subgraph(uris, _ALL_HOPS))
        nodes = {uri for edge in edges for uri in (edge.source, edge.target)}
        outgoing = {edge for uri in nodes for edge in graph.neighbours(uri, direction="out")}
        incoming = {edge for uri in nodes for edge in graph.neighbours(uri, direction="in")}
        assert outgoing == edges == incoming, "neighbours() and subgraph() see different edges"
        kinds = Counter(getattr(graph.node(uri), "kind", "?") for uri in nodes)
        stats = graph.stats()
        assert stats.edges == dict(sorted(Counter(edge.type for edge in edges).items())), (
            f"stats() counts the edges {stats.edges}, subgraph() shows"
            f" {dict(Counter(edge.type for edge in edges))}"
        )
        assert stats.nodes == dict(sorted(kinds.items())), (
            f"stats() counts the nodes {stats.nodes}, node() and subgraph() show {dict(kinds)}"
        )

    _each(context, "the graph counts what it shows", check)


@then("every store offers the same graph view until the index changes")
def same_graph_view(context: Context) -> None:
    def check(subject: _Subject) -> None:
        first = subject.store.backends().graph
        assert first is not None, "it offers no graph"
        uris = [fragment.uko_uri for fragment in _full_texts(subject.store)]
        first.subgraph(uris, _ALL_HOPS)  # used, as a strategy would, before the index changes
        second = subject.store.backends().graph
        assert first is second, "it makes a new graph view for each request"

    _each(context, "the graph view is kept until the index changes", check)


@then("every store still offers the graph view it offered before")
def still_same_graph_view(context: Context) -> None:
    def check(subject: _Subject) -> None:
        now = subject.store.backends().graph
        assert now is not None and now is subject.kept["graph view"], (
            "an index that changed nothing made a new graph view"
        )

    _each(context, "the graph view is kept until the index changes", check)


@then("every store's graph has these edges:")
def graph_has(context: Context) -> None:
    expected = _edges(context.table)

    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        missing = [edge for edge in expected if edge not in graph.neighbours(edge.source)]
        assert not missing, f"the graph lacks {missing}"

    _each(context, "the graph shows the index as it is now", check)


@then("no store's graph has these edges:")
def graph_lacks(context: Context) -> None:
    unwanted = _edges(context.table)

    def check(subject: _Subject) -> None:
        graph = _read(subject.store).graph
        stale = [edge for edge in unwanted if edge in graph.neighbours(edge.source)]
        assert not stale, f"the graph still has {stale}"

    _each(context, "the graph shows the index as it is now", check)


# -- timeline ------------------------------------------------------------------------------


def _timeline_order_holds(fragments: Sequence[ContextFragment]) -> None:
    """Newest first, ties in fragment id order, each a full text, each once."""
    keys = [(-_modified(f).timestamp(), f.id) for f in fragments]
    assert keys == sorted(keys), (
        f"not newest first, ties by id: {[(f.source.path, f.id) for f in fragments]}"
    )
    depths = {f.detail_depth for f in fragments}
    assert depths <= {9}, f"it lists fragments at depths {sorted(depths)}"
    assert len({f.id for f in fragments}) == len(fragments), "it lists a fragment twice"


def _modified(fragment: ContextFragment) -> datetime:
    moment = fragment.source.modified_at
    assert moment is not None, f"{fragment.uko_uri} has no modification time"
    return moment


def _paths_in_order(fragments: Sequence[ContextFragment]) -> list[str]:
    return list(dict.fromkeys(f.source.path for f in fragments))


@then("every store's timeline lists, newest first:")
def timeline_lists(context: Context) -> None:
    expected = {row["path"]: _moment(row["modified"]) for row in context.table}

    def check(subject: _Subject) -> None:
        listed = _full_texts(subject.store)
        _timeline_order_holds(listed)
        assert _paths_in_order(listed) == list(expected), f"it lists {_paths_in_order(listed)}"
        wrong = [
            (f.source.path, f.source.modified_at)
            for f in listed
            if f.source.modified_at != expected[f.source.path]
        ]
        assert not wrong, f"modification times that are not the files': {wrong[:3]}"

    _each(context, "the timeline lists full texts newest first, ties by id", check)


@then('every fragment a search in every store finds for "{query:Plain}" is on its timeline')
def search_hits_on_timeline(context: Context, query: str) -> None:
    def check(subject: _Subject) -> None:
        listed = {f.id for f in _full_texts(subject.store)}
        hits = _search(subject, query)
        assert hits, "the search finds nothing"
        missing = [hit.fragment.uko_uri for hit in hits if hit.fragment.id not in listed]
        assert not missing, f"the timeline does not list {missing}"

    _each(context, "the timeline lists every full text", check)


@then('every store\'s timeline {bounds:Bounds} lists only "{paths:Plain}"')
def timeline_between(
    context: Context, bounds: tuple[datetime | None, datetime | None], paths: str
) -> None:
    _timeline_between(context, bounds, _listed(paths))


@then("every store's timeline {bounds:Bounds} lists nothing")
def timeline_between_nothing(
    context: Context, bounds: tuple[datetime | None, datetime | None]
) -> None:
    _timeline_between(context, bounds, ())


def _timeline_between(
    context: Context, bounds: tuple[datetime | None, datetime | None], paths: tuple[str, ...]
) -> None:
    def check(subject: _Subject) -> None:
        listed = _read(subject.store).timeline.recent(_ALL, RequestFilters(), *bounds)
        _timeline_order_holds(listed)
        assert _paths_in_order(listed) == list(paths), f"it lists {_paths_in_order(listed)}"

    _each(context, "the timeline keeps to [since, until)", check)


@then("every store's timeline {filters:Filters} lists:")
def timeline_filtered(context: Context, filters: RequestFilters) -> None:
    expected = [row["uri"] for row in context.table]

    def check(subject: _Subject) -> None:
        listed = _full_texts(subject.store, filters)
        assert [f.uko_uri for f in listed] == expected, f"it lists {[f.uko_uri for f in listed]}"

    _each(context, "the timeline keeps to its filters", check)


@then(
    "every store's timeline lists the first fragments of its whole list,"
    " at every limit up to {most:d}"
)
def timeline_limit_prefix(context: Context, most: int) -> None:
    def check(subject: _Subject) -> None:
        timeline = _read(subject.store).timeline
        whole = [f.id for f in timeline.recent(_ALL, RequestFilters())]
        for limit in range(most + 1):
            found = [f.id for f in timeline.recent(limit, RequestFilters())]
            assert found == whole[:limit], f"with the limit {limit} it lists {found} of {whole}"

    _each(context, "the timeline keeps to its limit", check)


@then(
    'every store\'s timeline after "{moment:Plain}"{until:Until} lists, oldest first,'
    ' only "{paths:Plain}"'
)
def timeline_after(context: Context, moment: str, until: datetime | None, paths: str) -> None:
    _timeline_after(context, _moment(moment), until, _listed(paths))


@then('every store\'s timeline after "{moment:Plain}"{until:Until} lists nothing')
def timeline_after_nothing(context: Context, moment: str, until: datetime | None) -> None:
    _timeline_after(context, _moment(moment), until, ())


def _timeline_after(
    context: Context, moment: datetime, until: datetime | None, paths: tuple[str, ...]
) -> None:
    def check(subject: _Subject) -> None:
        timeline = _read(subject.store).timeline
        listed = timeline.after(moment, _ALL, RequestFilters(), until)
        keys = [(_modified(f), f.id) for f in listed]
        assert keys == sorted(keys), f"not oldest first, ties by id: {keys}"
        assert all(moment < when for when, _ in keys), f"it lists {moment} or earlier: {keys}"
        assert {f.detail_depth for f in listed} <= {9}, "it lists what is not a full text"
        assert _paths_in_order(listed) == list(paths), f"it lists {_paths_in_order(listed)}"
        # The same texts as the newest-first read of the same span, in the other order.
        since = moment + timedelta(microseconds=1)
        newest = timeline.recent(_ALL, RequestFilters(), since, until)
        assert sorted(f.id for f in listed) == sorted(f.id for f in newest), (
            f"it lists {[f.id for f in listed]}, the newest-first read {[f.id for f in newest]}"
        )
        for limit in range(len(listed) + 2):
            found = [f.id for f in timeline.after(moment, limit, RequestFilters(), until)]
            assert found == [f.id for f in listed][:limit], f"limit {limit}: {found}"

    _each(context, "the timeline after a time lists what came next, oldest first", check)


# -- readers in worker threads -------------------------------------------------------------


def _answers(store: Store) -> tuple[object, ...]:
    """What a strategy might ask a store, and its answers."""
    read = _read(store)
    full = read.timeline.recent(_ALL, RequestFilters())
    uris = [fragment.uko_uri for fragment in full]
    return (
        [
            (hit.fragment.id, hit.score, hit.matched_terms)
            for hit in read.text.search("budget slug", 10, RequestFilters())
        ],
        [fragment.id for fragment in full],
        {uri: [variant.id for variant in read.fragments.variants(uri)] for uri in uris},
        read.fragments.count(),
        list(read.graph.subgraph(uris[:1], 2)),
        sorted(read.graph.pagerank({uris[0]: 1.0}).items()),
    )


@then(
    "every store answers searches, lookups, timelines and graph questions from {threads:d}"
    " threads at once as from this one"
)
def answers_from_threads(context: Context, threads: int) -> None:
    def check(subject: _Subject) -> None:
        expected = _answers(subject.store)
        with ThreadPoolExecutor(threads) as pool:
            found = list(pool.map(lambda _: _answers(subject.store), range(threads * 2)))
        differing = [n for n, answers in enumerate(found) if answers != expected]
        assert not differing, f"{len(differing)} of {len(found)} threaded readers saw otherwise"

    _each(context, "readers in worker threads see what the caller sees", check)


# -- vectors ---------------------------------------------------------------------------------

_DIMENSION = 8


def _vector(text: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A made-up vector of a text: the same for the same text, length 1."""
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:_DIMENSION], dtype=np.uint8)
    vector = raw.astype(np.float32) - 127.5
    return vector / np.linalg.norm(vector)


def _add_vectors(store: Store, space: str, limit: int) -> None:
    with store.vector_writer(space, _DIMENSION) as writer:
        pending = writer.pending(limit)
        if pending:
            writer.add(
                [digest for digest, _ in pending], np.stack([_vector(text) for _, text in pending])
            )


def _distinct_texts(store: Store) -> dict[str, str]:
    """Every full text once, by content hash."""
    return {fragment.content_hash: fragment.text for fragment in _full_texts(store)}


@step(
    'every store adds vectors of the space "{space:Plain}" for the first {count:d} texts it'
    " says lack one"
)
def add_some_vectors(context: Context, space: str, count: int) -> None:
    _each(context, "vectors can be added", lambda s: _add_vectors(s.store, space, count))


@step('every store adds vectors of the space "{space:Plain}" for every text it says lacks one')
@step('every store has vectors of the space "{space:Plain}" for every full text')
def add_all_vectors(context: Context, space: str) -> None:
    _each(context, "vectors can be added", lambda s: _add_vectors(s.store, space, _ALL))


def _lacking(store: Store, space: str) -> list[tuple[str, str]]:
    with store.vector_writer(space, _DIMENSION) as writer:
        return list(writer.pending(_ALL))


@then(
    'every store has vectors of "{space:Plain}" for {count:d} of its full texts, and lists the'
    " others as lacking one"
)
@then(
    'every store has vectors of "{space:Plain}" for all of its full texts, and lists none as'
    " lacking one"
)
def vectors_held(context: Context, space: str, count: int | None = None) -> None:
    def check(subject: _Subject) -> None:
        texts = _distinct_texts(subject.store)
        held = len(texts) if count is None else count
        index = subject.store.vector_index(space)
        assert index is not None, f"no vectors of {space!r} to search"
        coverage = index.coverage()
        assert (coverage.embedded, coverage.total) == (held, len(texts)), coverage
        lacking = _lacking(subject.store, space)
        assert len(lacking) == len(texts) - held, f"{len(lacking)} listed as lacking a vector"
        assert all(texts.get(digest) == text for digest, text in lacking), "a wrong text listed"
        assert len({digest for digest, _ in lacking}) == len(lacking), "a text listed twice"

    _each(context, "vectors are added for the texts that lack them", check)


@then('every store has no vectors of "{space:Plain}" to search')
def no_vectors_of(context: Context, space: str) -> None:
    def check(subject: _Subject) -> None:
        assert subject.store.vector_index(space) is None, f"vectors of {space!r} are kept"

    _each(context, "a store holds the vectors of one space", check)


def _index(store: Store) -> Any:
    index = store.vector_index("words-8")
    assert index is not None, "no vectors of 'words-8' to search"
    return index


@then('every store\'s nearest text to the vector of "{uri:Plain}" is that text, with similarity 1')
def nearest_is_itself(context: Context, uri: str) -> None:
    def check(subject: _Subject) -> None:
        (text,) = {f.text for f in _full_texts(subject.store) if f.uko_uri == uri}
        hits = _index(subject.store).nearest(_vector(text), 1, RequestFilters())
        assert [h.fragment.uko_uri for h in hits] == [uri], [h.fragment.uko_uri for h in hits]
        assert abs(hits[0].similarity - 1) < 1e-5, hits[0].similarity

    _each(context, "the nearest text to a text's own vector is that text", check)


@then('every store\'s nearest texts in paths "{paths:Plain}" are only from "{path:Plain}"')
def nearest_filtered(context: Context, paths: str, path: str) -> None:
    def check(subject: _Subject) -> None:
        filters = RequestFilters(paths=list(_listed(paths)))
        expected = [f for f in _full_texts(subject.store) if f.source.path == path]
        hits = _index(subject.store).nearest(_vector("budget"), _ALL, filters)
        assert {h.fragment.id for h in hits} == {f.id for f in expected}, [
            h.fragment.source.path for h in hits
        ]

    _each(context, "a vector search keeps to its filters and hides no match", check)


@then(
    "every store's nearest texts at every limit up to {most:d} are the first of its whole list,"
    " most similar first, ties by id"
)
def nearest_limits(context: Context, most: int) -> None:
    def check(subject: _Subject) -> None:
        index = _index(subject.store)
        query = _vector("slug")
        whole = list(index.nearest(query, _ALL, RequestFilters()))
        assert len(whole) == len(_full_texts(subject.store)), "not every full text is listed"
        order = [(-h.similarity, h.fragment.id) for h in whole]
        assert order == sorted(order), "not most similar first, ties by id"
        for limit in range(most + 1):
            ids = [h.fragment.id for h in index.nearest(query, limit, RequestFilters())]
            assert ids == [h.fragment.id for h in whole[:limit]], f"limit {limit}: {ids}"

    _each(context, "nearest texts come in one order whatever the limit", check)


@then(
    "every store gives the similarity of each text to a vector, and none for a text it has no"
    " vector of"
)
def similarities_given(context: Context) -> None:
    def check(subject: _Subject) -> None:
        fragments = list(_full_texts(subject.store))
        stranger = fragments[0].model_copy(update={"content_hash": "0" * 64})
        query = _vector("budget")
        found = _index(subject.store).similarities(query, [*fragments, stranger])
        expected = [float(_vector(f.text) @ query) for f in fragments]
        assert found[-1] is None, found[-1]
        assert all(
            got is not None and abs(got - want) < 1e-5
            for got, want in zip(found[:-1], expected, strict=True)
        ), (found, expected)

    _each(context, "similarities are those of the stored vectors", check)


@then(
    'every store lists exactly the full texts of "{path:Plain}" as lacking a vector of'
    ' "{space:Plain}"'
)
def lacking_changed(context: Context, path: str, space: str) -> None:
    def check(subject: _Subject) -> None:
        changed = {f.content_hash for f in _full_texts(subject.store) if f.source.path == path}
        others = {f.content_hash for f in _full_texts(subject.store) if f.source.path != path}
        lacking = {digest for digest, _ in _lacking(subject.store, space)}
        assert lacking == changed - others, f"{len(lacking)} lacking, {len(changed)} changed"

    _each(context, "a re-index keeps the vectors of unchanged texts", check)


# -- memory, pins and sessions -------------------------------------------------------------


def _memory_ids(fragments: Iterable[ContextFragment]) -> list[str]:
    """The ids of the memory items among `fragments`, sorted (a memory node's URI ends in its
    id).
    """
    return sorted(f.uko_uri.rsplit("/", 1)[-1] for f in fragments if f.source.kind == "memory")


@when("every store keeps the memory items:")
def keep_memory(context: Context) -> None:
    items = [
        MemoryItem(
            row["id"], row["text"], _moment(row["at"]), MemoryScope(row["scope"]), row["owner"]
        )
        for row in context.table
    ]
    _each(context, "memory items can be kept", lambda s: s.pipeline.remember_all(items))

    # Each item as its own scope sees it (no one filter sees them all).
    scopes = {
        RequestFilters(
            session=item.owner if item.scope is MemoryScope.SESSION else None,
            user=item.owner if item.scope is MemoryScope.USER else None,
        )
        for item in items
    }
    for subject in _subjects(context):
        # With the items kept by an earlier step of the scenario.
        found = {f.uko_uri: f for f in subject.kept.get("memory", [])}
        found.update(
            (f.uko_uri, f)
            for filters in scopes
            for f in _full_texts(subject.store, filters)
            if f.source.kind == "memory"
        )
        subject.kept["memory"] = [found[uri] for uri in sorted(found)]


@then('in every store the searches, timelines and tiers for "{query:Plain}" see only this memory:')
@then(
    'in every store the searches, vector searches, timelines and tiers for "{query:Plain}" see'
    " only this memory:"
)
def memory_seen(context: Context, query: str) -> None:
    rows = [
        (row["session"] or None, row["user"] or None, _listed(row["memory"]))
        for row in context.table
    ]

    def check(subject: _Subject) -> None:
        uris = [f.uko_uri for f in subject.kept.get("memory", [])]
        for session, user, expected in rows:
            scope = RequestScope(session=session, user=user)
            read = _read(subject.store, scope)
            index = subject.store.vector_index("words-8", scope)
            filters = RequestFilters(session=session, user=user)
            seen = {
                "search": _memory_ids(h.fragment for h in read.text.search(query, _ALL, filters)),
                "timeline": _memory_ids(read.timeline.recent(_ALL, filters)),
                "timeline after": _memory_ids(read.timeline.after(_EPOCH, _ALL, filters)),
                "recent memory": _memory_ids(read.sessions.recent_memory(_ALL, filters)),
                "named": _memory_ids(read.sessions.named(uris, _ALL, filters)),
            }
            if index is not None:
                found: set[str] = set()
                for fragment in subject.kept.get("memory", []):
                    hits = index.nearest(_vector(fragment.text), _ALL, filters)
                    found.update(_memory_ids(h.fragment for h in hits))
                seen["vector search"] = sorted(found)
            for read_by, ids in seen.items():
                assert ids == sorted(expected), (
                    f"{read_by} for session {session!r}, user {user!r} saw {ids}"
                )

    _each(context, "memory reaches only the requests its scope allows", check)


def _keyword_scores(store: Store, session: str, query: str) -> dict[str, float]:
    """The scores a request of `session` is given for `query`: by its search (a hit's id)
    and by `scores` (`scores:` and the id).
    """
    text = _read(store, RequestScope(session=session)).text
    hits = text.search(query, _ALL, RequestFilters(session=session))
    found = {hit.fragment.id: hit.score for hit in hits}
    scored = text.scores(query, [hit.fragment for hit in hits])
    found.update(
        (f"scores:{hit.fragment.id}", score) for hit, score in zip(hits, scored, strict=True)
    )
    return found


@when(
    'every store notes the keyword scores session "{session:Plain}" is given for'
    " \"{first:Plain}\" and for '{second}'"
)
def note_scores(context: Context, session: str, first: str, second: str) -> None:
    context.noted_queries = (session, first, second)
    for subject in _subjects(context):
        subject.kept["scores"] = [
            _keyword_scores(subject.store, session, query) for query in (first, second)
        ]
        assert all(subject.kept["scores"]), f"{subject.backend}: no hits to note"


@then('every store gives session "{session:Plain}" the keyword scores it noted, to the bit')
def same_scores(context: Context, session: str) -> None:
    _, first, second = context.noted_queries

    def check(subject: _Subject) -> None:
        now = [_keyword_scores(subject.store, session, query) for query in (first, second)]
        assert now == subject.kept["scores"], f"noted {subject.kept['scores']}, now {now}"

    _each(context, "another scope's memory changes no score a request is given", check)


@then("in every store the fragment lookups of the memory items see only this memory:")
def memory_looked_up(context: Context) -> None:
    rows = [
        (row["session"] or None, row["user"] or None, _listed(row["memory"]))
        for row in context.table
    ]

    def check(subject: _Subject) -> None:
        kept: list[ContextFragment] = subject.kept.get("memory", [])
        uris = [f.uko_uri for f in kept]
        assert uris, "no memory item was kept"
        tokenizer = subject.pipeline.settings.tokenizer.name
        for session, user, expected in rows:
            lookup = _read(subject.store, RequestScope(session=session, user=user)).fragments
            filters = RequestFilters(session=session, user=user)
            counted = lookup.token_counts(kept, tokenizer, filters)
            seen = {
                "variants": _memory_ids(f for uri in uris for f in lookup.variants(uri, filters)),
                "variants_many": _memory_ids(
                    f for found in lookup.variants_many(uris, filters).values() for f in found
                ),
                "token_counts": _memory_ids(f for f in kept if f.content_hash in counted),
            }
            seen["variants in the view's scope"] = _memory_ids(
                f for uri in uris for f in lookup.variants(uri)
            )
            for read_by, ids in seen.items():
                assert ids == sorted(expected), (
                    f"{read_by} for session {session!r}, user {user!r} saw {ids}"
                )

    _each(context, "a lookup returns only memory the request's scope allows", check)


@then(
    'in every store a search for "{query:Plain}" within 1 result as session "{session:Plain}"'
    ' finds "{first:Plain}" or "{second:Plain}", never hidden memory'
)
def one_result_in_scope(
    context: Context, query: str, session: str, first: str, second: str
) -> None:
    def check(subject: _Subject) -> None:
        filters = RequestFilters(session=session)
        scope = RequestScope(session=session)
        hits = _read(subject.store, scope).text.search(query, 1, filters)
        assert _memory_ids(h.fragment for h in hits) in ([first], [second]), hits
        index = subject.store.vector_index("words-8", scope)
        if index is not None:
            for fragment in subject.kept["memory"]:
                (hit,) = index.nearest(_vector(fragment.text), 1, filters)
                assert _memory_ids([hit.fragment]) in ([first], [second], []), hit

    _each(context, "hidden memory never takes a place in a cut list", check)


@when('every store forgets the memory of session "{session:Plain}"')
def forget_session_memory(context: Context, session: str) -> None:
    _each(
        context,
        "a session's memory can be forgotten",
        lambda s: s.pipeline.forget_memory(session=session),
    )


@when('every store pins "{first:Plain}" and "{second:Plain}"')
def pin_two(context: Context, first: str, second: str) -> None:
    def pin(subject: _Subject) -> None:
        with subject.store.writer() as writer:
            writer.pin(first)
            writer.pin(second)

    _each(context, "items can be pinned", pin)


@when('every store unpins "{target:Plain}"')
def unpin_one(context: Context, target: str) -> None:
    def unpin(subject: _Subject) -> None:
        with subject.store.writer() as writer:
            assert writer.unpin(target), "it says the target was not pinned"

    _each(context, "a pin can be taken back", unpin)


@then("every store's pinned items are:")
@then('every store\'s pinned items of kinds "{kinds:Plain}" are:')
def pinned_items(context: Context, kinds: str = "") -> None:
    expected = [row["uri"] for row in context.table]
    filters = RequestFilters(kinds=_listed(kinds))

    def check(subject: _Subject) -> None:
        found = [f.uko_uri for f in _read(subject.store).sessions.pinned(_ALL, filters)]
        assert found == expected, found

    _each(context, "pinned items come as full texts in path order", check)


@when('every store logs for session "{session:Plain}" the assemblies:')
def log_assemblies(context: Context, session: str) -> None:
    assemblies = [_listed(row["uris"]) for row in context.table]

    def log(subject: _Subject) -> None:
        for uris in assemblies:
            _read(subject.store, RequestScope(session=session)).sessions.record_use(uris)

    _each(context, "a session's assemblies can be logged", log)


@then('every store\'s recently used items of session "{session:Plain}" are:')
def recently_used(context: Context, session: str) -> None:
    most_recently_used(context, _ALL, session)


@then('every store\'s {count:d} most recently used items of session "{session:Plain}" are:')
def most_recently_used(context: Context, count: int, session: str) -> None:
    expected = [row["uri"] for row in context.table]

    def check(subject: _Subject) -> None:
        sessions = _read(subject.store, RequestScope(session=session)).sessions
        used = sessions.recently_used(count, RequestFilters())
        assert [f.uko_uri for f in used] == expected, [f.uko_uri for f in used]

    _each(context, "the session log gives the latest assemblies' items first", check)
