"""The in-memory store (`[store] backend = "memory"`): every promise of the store contract
kept with plain dicts and lists.

Nothing persists across processes: what a store holds lives in this process only (two
stores opened on the same project in one process share it). `contextpipe index` and then
`contextpipe query` in another process finds nothing indexed; the store is for tests and
as the model a backend author copies (docs/stores.md). Like a third-party backend it
imports only the package root and the toolkit `contextpipe.stores.graph`, and it does
nothing for speed: every read looks at every fragment.

How it keeps the promises:

1. Whole files: a write session changes a copy of what the store holds (`_Held`);
   `commit`, and the session's end, make the copy what readers see, and an error drops
   what was not committed yet. One write session at a time.
2. Memory scope: `backends(scope)` and `vector_index(space, scope)` hand out views bound to
   `scope`. Each read narrows the filters it is given to that scope (`RequestScope.narrow`)
   and sees only what `_visible` allows them: a strategy's filters can only narrow. Keyword
   statistics and vector coverage are counted over what the scope sees, so other scopes'
   memory changes no score or count; the graph holds files only.
3. The graph is resolved by the toolkit (`ResolvedGraph`, `resolve`) once per change of
   the files, and the same view is handed out until they change again.
4. Vectors are kept by content hash, one space at a time, each batch all or nothing.
"""

from __future__ import annotations

import fnmatch
import math
import re
import threading
from collections.abc import Collection, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from contextpipe import (
    MEMORY_URI_PREFIX,
    Backends,
    CarriedMemory,
    ContextFragment,
    DeclaredEdges,
    EdgeRecord,
    EdgeTarget,
    MemoryItem,
    MemoryScope,
    NewFragment,
    NodeRecord,
    RequestFilters,
    RequestScope,
    StoredFile,
    StoreError,
    StoreStats,
    TextHit,
    VectorCoverage,
    VectorHit,
    hookimpl,
    identifier_words,
    matched_terms,
    query_terms,
)
from contextpipe.stores.graph import ResolvedGraph, resolve

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from contextpipe import Settings, StoreBackend

#: The depth of a node's whole text: what the timeline, the tiers and vectors list.
_FULL_TEXT = 9
#: When a fragment without a modification time was modified.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WORD = re.compile(r"\w+")
#: BM25's constants, as usual.
_K1, _B = 1.2, 0.75


class _Text(NamedTuple):
    """A stored fragment, as reads give it, with what searching it needs."""

    fragment: ContextFragment
    #: Its searched words, lower-cased (None: not searchable).
    words: tuple[str, ...] | None
    #: The tokenizer that counted its tokens.
    tokenizer: str
    #: The memory item it is (None: it was read from a file).
    memory: MemoryItem | None


@dataclass(frozen=True)
class _Record:
    """Everything read from one file, or one memory item, under its stored path."""

    stored: StoredFile
    texts: tuple[_Text, ...]
    nodes: tuple[NodeRecord, ...]
    edges: tuple[EdgeRecord, ...]
    memory: MemoryItem | None = None


@dataclass
class _Held:
    """What a store holds; a write session changes a copy (rule 1)."""

    records: dict[str, _Record] = field(default_factory=dict[str, _Record])
    #: Pinned targets, in the order pinned (a dict as an ordered set).
    pins: dict[str, None] = field(default_factory=dict[str, None])
    #: Grows with each change of a file: the graph is resolved again (rule 3).
    files_changed: int = 0

    def copy(self) -> _Held:
        """A copy to change: the records themselves are never changed, only replaced."""
        return _Held(dict(self.records), dict(self.pins), self.files_changed)

    def texts(self) -> Iterator[_Text]:
        for record in self.records.values():
            yield from record.texts


@dataclass
class _Vectors:
    """The vectors of one space, by content hash."""

    space: str
    dimension: int
    by_hash: dict[str, NDArray[np.float32]] = field(default_factory=lambda: {})


@dataclass
class _Place:
    """One store's contents in this process."""

    held: _Held | None = None
    #: Each session's logged assemblies, oldest first.
    uses: dict[str, list[tuple[str, ...]]] = field(default_factory=lambda: {})
    vectors: _Vectors | None = None
    graph: tuple[int, ResolvedGraph] | None = None
    writing: threading.Lock = field(default_factory=threading.Lock)
    #: Guards `uses`, `vectors` and `graph`, which change outside write sessions.
    lock: threading.Lock = field(default_factory=threading.Lock)


#: Every store of this process by location, and the stores moved aside, by where they went.
_PLACES: dict[str, _Place] = {}
_PLACES_LOCK = threading.Lock()


def _utc(moment: datetime) -> datetime:
    """`moment` in UTC (a naive time is taken as UTC)."""
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _when(fragment: ContextFragment) -> datetime:
    modified = fragment.source.modified_at
    return _EPOCH if modified is None else _utc(modified)


def _visible(text: _Text, filters: RequestFilters) -> bool:
    """Whether a request of these (narrowed) filters may see the text: files and global
    memory always, a session's or a user's memory only by its own session or user, and
    nothing modified after their `as_of`.
    """
    memory = text.memory
    if memory is not None:
        if memory.scope is MemoryScope.SESSION and memory.owner != filters.session:
            return False
        if memory.scope is MemoryScope.USER and memory.owner != filters.user:
            return False
    return filters.as_of is None or _when(text.fragment) <= _utc(filters.as_of)


def _fits(fragment: ContextFragment, filters: RequestFilters) -> bool:
    """Whether the fragment keeps to the filters' path globs and kinds."""
    source = fragment.source
    in_paths = not filters.paths or any(
        fnmatch.fnmatchcase(source.path, glob) for glob in filters.paths
    )
    return in_paths and (not filters.kinds or source.kind in filters.kinds)


def _words(text: str) -> tuple[str, ...]:
    """The searched words of a text: its words, then those of its identifiers."""
    return (*_WORD.findall(text.lower()), *identifier_words(text).split())


def _occurrences(term: str, words: tuple[str, ...]) -> int:
    """How often a term (a word, or a phrase of several) occurs in `words`."""
    parts = tuple(term.split())
    if len(parts) == 1:
        return words.count(term)
    return sum(words[start : start + len(parts)] == parts for start in range(len(words)))


def _bm25(terms: Sequence[str], texts: Iterable[_Text]) -> list[tuple[_Text, float]]:
    """The searchable texts that hold a term, with their BM25 score for the OR of the
    terms; the statistics are those of `texts` alone.
    """
    searchable = [(text, text.words) for text in texts if text.words is not None]
    if not searchable or not terms:
        return []
    average = sum(len(words) for _, words in searchable) / len(searchable) or 1.0
    counts = [[_occurrences(term, words) for term in terms] for _, words in searchable]
    holding = [sum(1 for row in counts if row[place]) for place in range(len(terms))]
    idf = [math.log(1 + (len(searchable) - n + 0.5) / (n + 0.5)) for n in holding]
    scored: list[tuple[_Text, float]] = []
    for (text, words), row in zip(searchable, counts, strict=True):
        norm = _K1 * (1 - _B + _B * len(words) / average)
        score = sum(idf[p] * tf * (_K1 + 1) / (tf + norm) for p, tf in enumerate(row) if tf)
        if score > 0:
            scored.append((text, score))
    return scored


def _newest_first(fragments: Iterable[ContextFragment]) -> list[ContextFragment]:
    """Newest first, ties by id (a sort is stable, also reversed)."""
    return sorted(sorted(fragments, key=lambda f: f.id), key=_when, reverse=True)


def _oldest_first(fragments: Iterable[ContextFragment]) -> list[ContextFragment]:
    return sorted(fragments, key=lambda f: (_when(f), f.id))


def _names(target: str, fragment: ContextFragment) -> bool:
    """Whether a pinned or named target (a node URI, a folder ending in '/', a path or a
    glob of paths) names the fragment's node.
    """
    if target.startswith("uko://"):
        return fragment.uko_uri == target
    glob = f"{target}*" if target.endswith("/") else target
    return fnmatch.fnmatchcase(fragment.source.path, glob)


def _cosine(query: NDArray[np.float32], stored: NDArray[np.float32]) -> float:
    norms = float(np.linalg.norm(query) * np.linalg.norm(stored))
    return float(np.dot(query, stored)) / norms if norms else 0.0


class _Reads:
    """Fragment lookup, text search, timeline and session tiers for one request's scope
    (rule 2).
    """

    def __init__(self, store: MemoryStore, scope: RequestScope) -> None:
        self._store = store
        self._scope = scope

    def _seen(self, filters: RequestFilters | None) -> tuple[list[_Text], RequestFilters]:
        """Every text the scope, narrowed by `filters`, may see, and the narrowed filters."""
        narrowed = self._scope.narrow(filters)
        held = self._store.place.held
        texts = [] if held is None else [t for t in held.texts() if _visible(t, narrowed)]
        return texts, narrowed

    def full_texts(self, filters: RequestFilters | None) -> list[_Text]:
        """The full texts the scope may see that keep to the filters' paths and kinds (None:
        the scope's own filters).
        """
        texts, narrowed = self._seen(filters)
        return [
            text
            for text in texts
            if text.fragment.detail_depth == _FULL_TEXT and _fits(text.fragment, narrowed)
        ]

    # -- FragmentLookup

    def variants(
        self, uko_uri: str, filters: RequestFilters | None = None
    ) -> list[ContextFragment]:
        texts, _ = self._seen(filters)
        found = [text.fragment for text in texts if text.fragment.uko_uri == uko_uri]
        return sorted(found, key=lambda fragment: -fragment.detail_depth)

    def variants_many(
        self, uko_uris: Collection[str], filters: RequestFilters | None = None
    ) -> dict[str, list[ContextFragment]]:
        found = {uri: self.variants(uri, filters) for uri in dict.fromkeys(uko_uris)}
        return {uri: variants for uri, variants in found.items() if variants}

    def count(self) -> int:
        return len(self._seen(None)[0])

    def token_counts(
        self,
        fragments: Collection[ContextFragment],
        tokenizer: str,
        filters: RequestFilters | None = None,
    ) -> dict[str, int]:
        held = {text.fragment.id: text for text in self._seen(filters)[0]}
        counts: dict[str, int] = {}
        for fragment in fragments:
            text = held.get(fragment.id)
            if (
                text is not None
                and text.fragment.content_hash == fragment.content_hash
                and text.tokenizer == tokenizer
            ):
                counts[fragment.content_hash] = text.fragment.token_count
        return counts

    # -- TextSearch

    def search(self, query: str, limit: int, filters: RequestFilters) -> list[TextHit]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        texts, narrowed = self._seen(filters)
        hits = [
            TextHit(text.fragment, score, matched_terms(terms, text.fragment.text))
            for text, score in _bm25(terms, texts)
            if _fits(text.fragment, narrowed)
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.fragment.id))
        return hits[:limit]

    def scores(self, query: str, fragments: Sequence[ContextFragment]) -> list[float]:
        scored = _bm25(query_terms(query), self._seen(None)[0])
        by_id = {text.fragment.id: score for text, score in scored}
        return [by_id.get(fragment.id, 0.0) for fragment in fragments]

    # -- Timeline

    def recent(
        self,
        limit: int,
        filters: RequestFilters,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        found = [
            text.fragment
            for text in self.full_texts(filters)
            if (since is None or _when(text.fragment) >= _utc(since))
            and (until is None or _when(text.fragment) < _utc(until))
        ]
        return _newest_first(found)[: max(limit, 0)]

    def after(
        self,
        moment: datetime,
        limit: int,
        filters: RequestFilters,
        until: datetime | None = None,
    ) -> list[ContextFragment]:
        found = [
            text.fragment
            for text in self.full_texts(filters)
            if _when(text.fragment) > _utc(moment)
            and (until is None or _when(text.fragment) < _utc(until))
        ]
        return _oldest_first(found)[: max(limit, 0)]

    # -- SessionTiers

    def pinned(self, limit: int, filters: RequestFilters) -> list[ContextFragment]:
        held = self._store.place.held
        stored = () if held is None else tuple(held.pins)
        return self.named(list(dict.fromkeys((*self._store.pinned, *stored))), limit, filters)

    def named(
        self, targets: Sequence[str], limit: int, filters: RequestFilters
    ) -> list[ContextFragment]:
        if not targets or limit <= 0:
            return []
        found = [
            text.fragment
            for text in self.full_texts(filters)
            if any(_names(target, text.fragment) for target in targets)
        ]
        found.sort(key=lambda f: (f.source.path, f.source.start_line, f.id))
        return found[:limit]

    def recently_used(self, limit: int, filters: RequestFilters) -> list[ContextFragment]:
        session = self._scope.session
        if session is None or limit <= 0:
            return []
        place = self._store.place
        with place.lock:
            logged = list(place.uses.get(session, []))
        by_uri: dict[str, list[ContextFragment]] = {}
        for text in self.full_texts(filters):
            by_uri.setdefault(text.fragment.uko_uri, []).append(text.fragment)
        # Each node at its latest assembly, the assemblies latest first, ties by id.
        found: list[ContextFragment] = []
        seen: set[str] = set()
        for assembly in reversed(logged):
            fresh = [uri for uri in assembly if uri not in seen]
            seen.update(fresh)
            found += sorted((f for uri in fresh for f in by_uri.get(uri, [])), key=lambda f: f.id)
        return found[:limit]

    def recent_memory(
        self, limit: int, filters: RequestFilters, until: datetime | None = None
    ) -> list[ContextFragment]:
        found = [
            text.fragment
            for text in self.full_texts(filters)
            if text.memory is not None and (until is None or _when(text.fragment) < _utc(until))
        ]
        return _newest_first(found)[: max(limit, 0)]

    def record_use(self, uris: Sequence[str]) -> None:
        session, most = self._scope.session, self._store.assemblies
        if session is None or most <= 0 or not uris:
            return
        place = self._store.place
        with place.lock:
            logged = place.uses.setdefault(session, [])
            logged.append(tuple(dict.fromkeys(uris)))
            del logged[:-most]


class _ScopedVectors:
    """The store's vectors of one space, as one request's scope allows them (rule 2)."""

    def __init__(self, store: MemoryStore, space: str, scope: RequestScope) -> None:
        self._store = store
        self._space = space
        self._reads = _Reads(store, scope)

    def _by_hash(self) -> Mapping[str, NDArray[np.float32]]:
        vectors = self._store.place.vectors
        return vectors.by_hash if vectors is not None and vectors.space == self._space else {}

    def coverage(self) -> VectorCoverage:
        return self._store.coverage(self._by_hash(), self._reads.full_texts(None))

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> list[VectorHit]:
        by_hash = self._by_hash()
        hits = [
            VectorHit(text.fragment, _cosine(vector, by_hash[text.fragment.content_hash]))
            for text in self._reads.full_texts(filters)
            if text.fragment.content_hash in by_hash
        ]
        hits.sort(key=lambda hit: (-hit.similarity, hit.fragment.id))
        return hits[: max(limit, 0)]

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> list[float | None]:
        return [
            None if stored is None else _cosine(vector, stored)
            for stored in self._stored(fragments)
        ]

    def vectors(self, fragments: Sequence[ContextFragment]) -> list[NDArray[np.float32] | None]:
        return [
            None if stored is None else (stored / np.linalg.norm(stored)).astype(np.float32)
            for stored in self._stored(fragments)
        ]

    def _stored(self, fragments: Sequence[ContextFragment]) -> list[NDArray[np.float32] | None]:
        """Each fragment's vector, if a full text the scope allows has its content hash."""
        by_hash = self._by_hash()
        seen = {text.fragment.content_hash for text in self._reads.full_texts(None)}
        return [by_hash.get(f.content_hash) if f.content_hash in seen else None for f in fragments]


class _VectorWriter:
    """Adds the vectors of one space, a batch at a time (rule 4)."""

    def __init__(self, store: MemoryStore, vectors: _Vectors) -> None:
        self._store = store
        self._vectors = vectors

    def pending(self, limit: int) -> list[tuple[str, str]]:
        held = self._store.place.held
        texts = {
            text.fragment.content_hash: text.fragment.text
            for text in (held.texts() if held is not None else ())
            if text.fragment.detail_depth == _FULL_TEXT
        }
        lacking = sorted(item for item in texts.items() if item[0] not in self._vectors.by_hash)
        return lacking[: max(limit, 0)]

    def add(self, content_hashes: Sequence[str], vectors: NDArray[np.float32]) -> None:
        rows = np.asarray(vectors, dtype=np.float32)
        wanted = (len(content_hashes), self._vectors.dimension)
        if rows.shape != wanted:
            raise StoreError(
                f"{self._store.location}: vectors of shape {rows.shape} for"
                f" {len(content_hashes)} texts of space {self._vectors.space!r}; expected {wanted}"
            )
        added = dict(zip(content_hashes, rows.copy(), strict=True))
        with self._store.place.lock:  # one new dict: a reader sees the batch whole or not at all
            self._vectors.by_hash = {**self._vectors.by_hash, **added}

    def coverage(self) -> VectorCoverage:
        return self._store.coverage(self._vectors.by_hash)


def _texts(
    fragments: Iterable[NewFragment], tokenizer: str, memory: MemoryItem | None = None
) -> tuple[_Text, ...]:
    """The fragments as reads give them: with their title and language in their metadata
    (rendering and strategies read them there), and their searched words.
    """
    return tuple(
        _Text(
            item.fragment.model_copy(
                update={
                    "metadata": {
                        **item.fragment.metadata,
                        "title": item.title,
                        "language": item.language,
                    }
                }
            ),
            None if item.search_text is None else _words(f"{item.title}\n{item.search_text}"),
            tokenizer,
            memory,
        )
        for item in fragments
    )


def _declared(path: str, edges: Iterable[EdgeRecord]) -> list[DeclaredEdges]:
    """A file's edges, one group per type and target with its distinct sources, as the
    graph resolves them.
    """
    groups: dict[tuple[str, EdgeTarget], set[str]] = {}
    for edge in edges:
        groups.setdefault((edge.type, edge.target), set()).add(edge.source)
    return [
        DeclaredEdges(tuple(sorted(sources)), kind, target, path)
        for (kind, target), sources in groups.items()
    ]


def _not_memory(path: str) -> None:
    if path.startswith(MEMORY_URI_PREFIX):
        raise ValueError(f"{path}: a memory item's name, not a file's")


class _Writer:
    """Changes inside one write session, made to a copy of what the store holds (rule 1)."""

    def __init__(self, place: _Place) -> None:
        self._place = place
        self._work = (place.held or _Held()).copy()

    def files(self) -> dict[str, StoredFile]:
        records = sorted(self._work.records.items())
        return {path: record.stored for path, record in records if record.memory is None}

    def touch_file(self, path: str, stored: StoredFile) -> None:
        _not_memory(path)
        record = self._work.records.get(path)
        if record is None:
            raise ValueError(f"{path}: not an indexed file; write it with replace_file")
        self._work.records[path] = replace(record, stored=stored)

    def remove_file(self, path: str) -> int:
        _not_memory(path)
        record = self._work.records.pop(path, None)
        if record is None:
            return 0
        self._work.files_changed += 1
        return len(record.texts)

    def replace_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
    ) -> None:
        _not_memory(path)
        texts = _texts(fragments, stored.tokenizer)
        self._work.records[path] = _Record(stored, texts, tuple(nodes), tuple(edges))
        self._work.files_changed += 1

    def commit(self) -> None:
        self._place.held = self._work
        self._work = self._work.copy()

    def add_memory(self, item: MemoryItem, fragment: NewFragment, node: NodeRecord) -> None:
        path = fragment.fragment.source.path
        if path != node.uri or not path.startswith(MEMORY_URI_PREFIX):
            raise ValueError(f"memory item {item.id!r}: its stored path must be its node URI")
        tokenizer = fragment.fragment.metadata.get("tokenizer", "")
        text = fragment.fragment.text
        stored = StoredFile(len(text.encode()), 0, fragment.fragment.content_hash, tokenizer)
        texts = _texts([fragment], tokenizer, item)
        self._work.records[path] = _Record(stored, texts, (node,), (), item)

    def remove_memory(
        self, scope: MemoryScope | None, owner: str | None, ids: Collection[str] = ()
    ) -> int:
        gone = [
            path
            for path, record in self._work.records.items()
            if (memory := record.memory) is not None
            and (scope is None or memory.scope is scope)
            and (owner is None or memory.owner == owner)
            and (not ids or memory.id in ids)
        ]
        for path in gone:
            del self._work.records[path]
        return len(gone)

    def pin(self, target: str) -> None:
        self._work.pins[target] = None

    def unpin(self, target: str) -> bool:
        if target not in self._work.pins:
            return False
        del self._work.pins[target]
        return True

    def keep(self, path: str, record: _Record) -> None:
        """Keep a record as another store held it (`carry_memory`)."""
        self._work.records[path] = record


class MemoryStore:
    """A store held in this process's memory (see the module docstring)."""

    def __init__(self, folder: Path, pinned: Sequence[str], assemblies: int) -> None:
        self.location = f"memory:{folder}"
        #: The configured pinned targets, and how many assemblies a session's log keeps.
        self.pinned = tuple(pinned)
        self.assemblies = assemblies
        with _PLACES_LOCK:
            self.place = _PLACES.setdefault(self.location, _Place())

    @property
    def local_folders(self) -> Sequence[Path]:
        return ()  # nothing on disk

    @property
    def folder_marker(self) -> str | None:
        return None

    def exists(self) -> bool:
        return self.place.held is not None

    def check(self) -> None:
        if self.place.held is None:
            raise StoreError(
                f"{self.location}: nothing indexed in this process; run `contextpipe index"
                " PATH` (the memory store keeps nothing across processes)"
            )

    def verify(self) -> str:
        self.check()
        stats = self.stats()
        return (
            f"{self.location}: {stats.files} files, {stats.fragments} fragments, all held in"
            " memory (nothing on disk to check)"
        )

    def move_aside(self) -> str | None:
        with self.place.writing, self.place.lock:
            if self.place.held is None:
                return None
            with _PLACES_LOCK:
                number = 1
                while f"{self.location} (moved aside {number})" in _PLACES:
                    number += 1
                moved = f"{self.location} (moved aside {number})"
                place = self.place
                _PLACES[moved] = _Place(place.held, place.uses, place.vectors)
            place.held, place.uses, place.vectors, place.graph = None, {}, None, None
        return moved

    def carry_memory(self, previous: str) -> CarriedMemory:
        with _PLACES_LOCK:
            old = _PLACES.get(previous)
        if old is None or old.held is None:
            return CarriedMemory(0, 0, 0, f"no store of this process was moved to {previous}")
        items = [(path, r) for path, r in old.held.records.items() if r.memory is not None]
        with old.lock:
            uses = {session: list(logged) for session, logged in old.uses.items()}
        with self.writer() as writer:
            for path, record in items:
                writer.keep(path, record)
            for target in old.held.pins:
                writer.pin(target)
        with self.place.lock:
            for session, logged in uses.items():
                self.place.uses[session] = [*logged, *self.place.uses.get(session, [])]
        count = sum(len(assembly) for logged in uses.values() for assembly in logged)
        return CarriedMemory(len(items), len(old.held.pins), count)

    def stats(self) -> StoreStats:
        held = self.place.held
        if held is None:
            return StoreStats(self.location, 0, 0, 0)
        files = sum(record.memory is None for record in held.records.values())
        texts = list(held.texts())
        searchable = sum(text.words is not None for text in texts)
        return StoreStats(self.location, files, len(texts), searchable)

    @contextmanager
    def writer(self) -> Generator[_Writer]:
        with self.place.writing:
            writer = _Writer(self.place)
            yield writer
            writer.commit()  # only when the session ended without an error

    @contextmanager
    def vector_writer(self, space: str, dimension: int) -> Generator[_VectorWriter]:
        self.check()
        with self.place.lock:
            vectors = self.place.vectors
            if vectors is None or (vectors.space, vectors.dimension) != (space, dimension):
                vectors = self.place.vectors = _Vectors(space, dimension)
        yield _VectorWriter(self, vectors)

    def vector_index(self, space: str, scope: RequestScope | None = None) -> _ScopedVectors | None:
        vectors = self.place.vectors
        if self.place.held is None or vectors is None or vectors.space != space:
            return None
        return _ScopedVectors(self, space, scope or RequestScope())

    def coverage(
        self, by_hash: Mapping[str, object], seen: Iterable[_Text] | None = None
    ) -> VectorCoverage:
        """How many of the distinct full texts (those `seen`, else all) have a vector in
        `by_hash`.
        """
        held = self.place.held
        texts = seen if seen is not None else (held.texts() if held is not None else ())
        hashes = {
            text.fragment.content_hash for text in texts if text.fragment.detail_depth == _FULL_TEXT
        }
        return VectorCoverage(len(hashes & by_hash.keys()), len(hashes))

    def backends(self, scope: RequestScope | None = None) -> Backends:
        if self.place.held is None:
            return Backends()
        reads = _Reads(self, scope or RequestScope())
        return Backends(
            fragments=reads, text=reads, graph=self._graph(), timeline=reads, sessions=reads
        )

    def _graph(self) -> ResolvedGraph:
        """The graph of the files held now, the same view until they change (rule 3)."""
        held = self.place.held or _Held()
        with self.place.lock:
            kept = self.place.graph
            if kept is not None and kept[0] == held.files_changed:
                return kept[1]
            files = sorted((path, r) for path, r in held.records.items() if r.memory is None)
            nodes = sorted(
                (node for _, record in files for node in record.nodes),
                key=lambda node: (node.path, node.start_line, node.uri),
            )
            declared = [group for path, record in files for group in _declared(path, record.edges)]
            graph = ResolvedGraph(lambda: (nodes, resolve(nodes, declared)))
            self.place.graph = (held.files_changed, graph)
            return graph

    def prefetch(self, limit: int) -> int:
        return 0  # nothing on disk to read ahead

    def close(self) -> None:
        """Nothing to release: what the store holds stays for the rest of the process."""


class MemoryBackend:
    """The in-memory store: one per project and `[store] path`, in this process."""

    name = "memory"

    def open(self, settings: Settings, project_dir: Path) -> MemoryStore:
        return MemoryStore(
            (project_dir / settings.store.path).resolve(),
            settings.memory.pinned,
            settings.memory.access_log_assemblies,
        )


@hookimpl
def contextpipe_stores() -> list[StoreBackend]:
    """The in-memory store, registered like any other store plugin."""
    return [MemoryBackend()]
