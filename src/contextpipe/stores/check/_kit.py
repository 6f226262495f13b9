"""What every check uses: a `Subject` (one backend's store on a temporary project, reached
through the store protocols only), the project the checks index, and ways to read back and
compare what a store shows.

A check signals a broken promise with `BrokenPromiseError` (what the store did instead, in
one line), and one it cannot make, the store not offering an optional capability, with
`NotOfferedError`. Full texts are listed through the fragment lookup of every node ever
written, not through the timeline, so that a store without a timeline can be checked too.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from contextpipe import (
    Backends,
    CarriedMemory,
    ContextFragment,
    EdgeRecord,
    FragmentLookup,
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
    StoredFile,
    StoreStats,
    TextSearch,
    Timeline,
    VectorIndex,
    VectorWriter,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from contextpipe import Store

#: A limit no check's project reaches: "everything".
ALL = 100_000
#: Hops enough to reach every node of a check's graph.
ALL_HOPS = 100
#: The width of the made-up vectors checks add.
DIMENSION = 8
#: The vector space the checks add, and the tokenizer the project is counted with.
SPACE = "words-8"
TOKENIZER = "o200k_base"
#: Before anything a store holds.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class BrokenPromiseError(Exception):
    """A promise the store broke; the message says what it did instead."""


class NotOfferedError(Exception):
    """The check needs an optional capability the store does not offer."""


def expect(condition: bool, instead: str) -> None:
    """Go on if `condition` holds; else the promise is broken: `instead` says how."""
    if not condition:
        raise BrokenPromiseError(instead)


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


#: The project every check starts from, and when its files were last modified.
PROJECT = {
    "app/main.py": (
        'from app import util\n\n\ndef run() -> str:\n    return util.slug("Hello World")\n'
    ),
    "app/util.py": (
        '"""Make kebab-case slugs and titles."""\n\n\n'
        "def slug(text: str) -> str:\n"
        '    return text.lower().replace(" ", "-")\n\n\n'
        "def title(text: str) -> str:\n"
        "    return text.title()\n"
    ),
    "docs/budget.md": (
        "# Token budgets\n\n"
        "contextpipe never exceeds the token budget of a request. Call `run` to see it.\n\n"
        "## Leftovers\n\n"
        "Tokens a strategy does not use go back to the pool, and the packer fills the budget.\n"
    ),
}
MODIFIED = {
    "docs/budget.md": moment("2024-03-03T12:00:00+00:00"),
    "app/util.py": moment("2024-03-02T12:00:00+00:00"),
    "app/main.py": moment("2024-03-01T12:00:00+00:00"),
}


def set_mtime(path: Path, when: datetime) -> None:
    stamp = int(when.timestamp() * 1_000_000_000)
    os.utime(path, ns=(stamp, stamp))


def fits(fragment: ContextFragment, filters: RequestFilters) -> bool:
    """Whether a fragment keeps to the filters' path globs and kinds."""
    path, kind = fragment.source.path, fragment.source.kind
    return (
        not filters.paths or any(fnmatch.fnmatchcase(path, glob) for glob in filters.paths)
    ) and (not filters.kinds or kind in filters.kinds)


def when(fragment: ContextFragment) -> datetime:
    modified = fragment.source.modified_at
    if modified is None:
        raise BrokenPromiseError(f"{fragment.uko_uri} has no modification time")
    return modified


def memory_ids(fragments: Iterable[ContextFragment]) -> list[str]:
    """The ids of the memory items among `fragments`, sorted (a memory node's URI ends in
    its id).
    """
    return sorted(f.uko_uri.rsplit("/", 1)[-1] for f in fragments if f.source.kind == "memory")


def vector(text: str) -> NDArray[np.float32]:
    """A made-up vector of a text: the same for the same text, length 1."""
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:DIMENSION], dtype=np.uint8)
    made = raw.astype(np.float32) - np.float32(127.5)
    return made / np.float32(np.linalg.norm(made))


def memory_items(rows: Iterable[tuple[str, str, str, str, str]]) -> list[MemoryItem]:
    """Items from (id, text, scope, owner, time) rows."""
    return [
        MemoryItem(id_, text, moment(at), MemoryScope(scope), owner)
        for id_, text, scope, owner, at in rows
    ]


class _RecordingWriter:
    """An index writer that notes the nodes written, and the changes asked when asked to."""

    def __init__(self, writer: IndexWriter, subject: Subject) -> None:
        self._writer = writer
        self._subject = subject

    def _note(self, change: str) -> None:
        if self._subject.changes is not None:
            self._subject.changes.append(change)

    def files(self) -> Mapping[str, StoredFile]:
        return self._writer.files()

    def touch_file(self, path: str, stored: StoredFile) -> None:
        self._note(f"touch {path}")
        self._writer.touch_file(path, stored)

    def remove_file(self, path: str) -> int:
        self._note(f"remove {path}")
        return self._writer.remove_file(path)

    def replace_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
    ) -> None:
        self._note(f"replace {path}")
        fragments = list(fragments)
        self._subject.written.update(item.fragment.uko_uri for item in fragments)
        self._writer.replace_file(path, stored, fragments, nodes, edges)

    def commit(self) -> None:
        self._writer.commit()

    def add_memory(self, item: MemoryItem, fragment: NewFragment, node: NodeRecord) -> None:
        self._subject.written.add(fragment.fragment.uko_uri)
        self._writer.add_memory(item, fragment, node)

    def remove_memory(
        self, scope: MemoryScope | None, owner: str | None, ids: Collection[str] = ()
    ) -> int:
        return self._writer.remove_memory(scope, owner, ids)

    def pin(self, target: str) -> None:
        self._writer.pin(target)

    def unpin(self, target: str) -> bool:
        return self._writer.unpin(target)


class _RecordingStore:
    """The store, with write sessions that note what they write (`_RecordingWriter`)."""

    def __init__(self, store: Store, subject: Subject) -> None:
        self.inner = store
        self._subject = subject

    @property
    def location(self) -> str:
        return self.inner.location

    @property
    def local_folders(self) -> Sequence[Path]:
        return self.inner.local_folders

    @property
    def folder_marker(self) -> str | None:
        return self.inner.folder_marker

    def exists(self) -> bool:
        return self.inner.exists()

    def check(self) -> None:
        self.inner.check()

    def verify(self) -> str:
        return self.inner.verify()

    def move_aside(self) -> str | None:
        return self.inner.move_aside()

    def carry_memory(self, previous: str) -> CarriedMemory:
        return self.inner.carry_memory(previous)

    def stats(self) -> StoreStats:
        return self.inner.stats()

    @contextmanager
    def writer(self) -> Generator[IndexWriter]:
        with self.inner.writer() as writer:
            yield _RecordingWriter(writer, self._subject)

    def vector_writer(self, space: str, dimension: int) -> AbstractContextManager[VectorWriter]:
        return self.inner.vector_writer(space, dimension)

    def vector_index(self, space: str, scope: RequestScope | None = None) -> VectorIndex | None:
        return self.inner.vector_index(space, scope)

    def backends(self, scope: RequestScope | None = None) -> Backends:
        return self.inner.backends(scope)

    def prefetch(self, limit: int) -> int:
        return self.inner.prefetch(limit)

    def close(self) -> None:
        self.inner.close()


class Subject:
    """One backend's store on a project of its own, reached through the protocols only."""

    def __init__(self, overrides: Mapping[str, Any], project: Path) -> None:
        """`overrides` are the settings that differ from the defaults (`[store] backend`
        and its options).
        """
        self.overrides = overrides
        self.project = project
        #: The node URIs ever written, and what the last index run did, root by root.
        self.written: set[str] = set()
        self.summaries: list[IndexSummary] = []
        #: The changes write sessions were asked to make, while being recorded (else None).
        self.changes: list[str] | None = None
        #: Everything ever indexed from each path: node URI -> full text.
        self.seen: dict[str, dict[str, str]] = {}
        self.pipeline = Pipeline.open(project_dir=project, overrides=overrides, environ={})
        self.store: Store = _RecordingStore(self.pipeline.store, self)
        self.pipeline.store = self.store

    @classmethod
    def on_project(cls, overrides: Mapping[str, Any], project: Path) -> Subject:
        """A subject on the check project, written to `project`."""
        write_files(project, PROJECT)
        for path, modified in MODIFIED.items():
            set_mtime(project / path, modified)
        return cls(overrides, project)

    def close(self) -> None:
        self.pipeline.close()

    # -- the project

    def write(self, path: str, text: str) -> None:
        write_files(self.project, {path: text})

    def change(self, path: str, text: str) -> None:
        """Rewrite a file a second later than it was last modified: a change any index
        sees, however coarse the file system's clock.
        """
        target = self.project / path
        before = target.stat().st_mtime_ns
        self.write(path, text)
        os.utime(target, ns=(before + 1_000_000_000, before + 1_000_000_000))

    def touch(self, path: str) -> None:
        target = self.project / path
        later = target.stat().st_mtime_ns + 1_000_000_000
        os.utime(target, ns=(later, later))

    def index(self) -> None:
        self.summaries = self.pipeline.index([self.project])
        for fragment in self.full_texts():
            self.seen.setdefault(fragment.source.path, {})[fragment.uko_uri] = fragment.text

    # -- the read capabilities: `store` and `text` are required, the others optional

    def _backends(self, scope: RequestScope | None) -> Backends:
        return self.store.backends(scope)

    def lookup(self, scope: RequestScope | None = None) -> FragmentLookup:
        found = self._backends(scope).fragments
        expect(found is not None, "an indexed store offers no fragment lookup (`store`)")
        assert found is not None
        return found

    def text(self, scope: RequestScope | None = None) -> TextSearch:
        found = self._backends(scope).text
        expect(found is not None, "an indexed store offers no text search (`text`)")
        assert found is not None
        return found

    def graph(self) -> GraphView:
        found = self._backends(None).graph
        if found is None:
            raise NotOfferedError("graph")
        return found

    def timeline(self, scope: RequestScope | None = None) -> Timeline:
        found = self._backends(scope).timeline
        if found is None:
            raise NotOfferedError("timeline")
        return found

    def sessions(self, scope: RequestScope | None = None) -> SessionTiers:
        found = self._backends(scope).sessions
        if found is None:
            raise NotOfferedError("sessions")
        return found

    def vectors(self, scope: RequestScope | None = None, space: str = SPACE) -> VectorIndex:
        found = self.store.vector_index(space, scope)
        if found is None:
            raise NotOfferedError("vectors")
        return found

    def offers(self, capability: str) -> bool:
        return capability in self._backends(None).available()

    def search(
        self, query: str, limit: int = ALL, filters: RequestFilters | None = None
    ) -> Sequence[ContextFragment]:
        return [
            hit.fragment for hit in self.text().search(query, limit, filters or RequestFilters())
        ]

    # -- reading back

    def full_texts(self, filters: RequestFilters | None = None) -> list[ContextFragment]:
        """Every full text a request of the filters' session and user may see that keeps
        to their paths and kinds, newest first, ties by id: what the timeline lists.
        """
        filters = filters or RequestFilters()
        lookup = self.lookup(RequestScope(session=filters.session, user=filters.user))
        found = [
            variant
            for variants in lookup.variants_many(sorted(self.written), filters).values()
            for variant in variants
            if variant.detail_depth == 9 and fits(variant, filters)
        ]
        return sorted(sorted(found, key=lambda f: f.id), key=when, reverse=True)

    def variants_held(self) -> int:
        """How many fragments the variants of the full texts' nodes hold, all depths."""
        lookup = self.lookup()
        return sum(len(lookup.variants(fragment.uko_uri)) for fragment in self.full_texts())

    def stored_files(self) -> dict[str, StoredFile]:
        with self.store.writer() as writer:
            return dict(writer.files())

    def contents(self) -> dict[str, object]:
        """Everything the store shows through its protocols, apart from where it is."""
        stats = self.store.stats()
        full = self.full_texts()
        uris = sorted({fragment.uko_uri for fragment in full})
        lookup = self.lookup()
        shown: dict[str, object] = {
            "files": (stats.files, stats.fragments, stats.searchable),
            "stored files": self.stored_files(),
            "full texts": full,
            "variants": {uri: list(lookup.variants(uri)) for uri in uris},
            "fragment count": lookup.count(),
        }
        if self.offers("graph"):
            graph = self.graph()
            shown["graph edges"] = list(graph.subgraph(uris, ALL_HOPS))
            shown["graph counts"] = graph.stats()
        if self.offers("timeline"):
            shown["timeline"] = list(self.timeline().recent(ALL, RequestFilters()))
        return shown

    def fresh_contents(self, copy: Path, without: str | None = None) -> dict[str, object]:
        """What the same backend holds after indexing a copy of the project (`without` one
        of its folders) into a new store.
        """
        skipped = {Path(folder).resolve() for folder in self.store.local_folders}

        def store_folders(folder: str, names: list[str]) -> list[str]:
            return [name for name in names if (Path(folder) / name).resolve() in skipped]

        shutil.copytree(self.project, copy, ignore=store_folders)
        if without is not None:
            shutil.rmtree(copy / without)
        fresh = Subject(self.overrides, copy)
        try:
            fresh.index()
            return fresh.contents()
        finally:
            fresh.close()

    # -- vectors

    def add_vectors(self, space: str = SPACE, limit: int = ALL) -> None:
        with self.store.vector_writer(space, DIMENSION) as writer:
            pending = writer.pending(limit)
            if pending:
                rows = np.stack([vector(text) for _, text in pending])
                writer.add([digest for digest, _ in pending], rows)

    def lacking(self, space: str = SPACE) -> list[tuple[str, str]]:
        with self.store.vector_writer(space, DIMENSION) as writer:
            return list(writer.pending(ALL))


def write_files(root: Path, files: Mapping[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def differences(found: Mapping[str, object], expected: Mapping[str, object]) -> list[str]:
    """What differs between two `Subject.contents`, a few words for each part."""
    lines: list[str] = []
    for part, value in expected.items():
        got = found.get(part)
        if got == value:
            continue
        if isinstance(value, list) and isinstance(got, list):
            had, has = cast(list[object], value), cast(list[object], got)
            extra = [_short(item) for item in has if item not in had][:3]
            lacking = [_short(item) for item in had if item not in has][:3]
            lines.append(f"{part}: has {extra} too many, lacks {lacking}")
        elif isinstance(value, dict) and isinstance(got, dict):
            wanted, held = cast(dict[object, object], value), cast(dict[object, object], got)
            keys = sorted({*map(str, wanted), *map(str, held)})
            wrong = [k for k in keys if _by_name(held, k) != _by_name(wanted, k)][:3]
            lines.append(f"{part}: differs at {wrong}")
        else:
            lines.append(f"{part}: {got} instead of {value}")
    return lines


def _by_name(table: Mapping[object, object], name: str) -> object:
    return next((value for key, value in table.items() if str(key) == name), None)


def _short(item: object) -> str:
    """A fragment by its id, anything else as it prints."""
    return item.id if isinstance(item, ContextFragment) else str(item)
