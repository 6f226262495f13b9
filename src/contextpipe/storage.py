"""The storage seam: what a store offers, as small protocols. Everything above the store
(ingest, planning, strategies, the command line and the services) talks to it through
these, never to a concrete backend.

- A `StoreBackend` (a plugin, entry-point group `contextpipe.stores`) opens a `Store`.
- A `Store` is opened, checked and closed; it reports `StoreStats`; it hands out one
  `IndexWriter` at a time and, for each request, the `Backends` it offers.
- An `IndexWriter` writes whole files (`StoredFile`, `NewFragment`, `NodeRecord`,
  `EdgeRecord`): everything read from one file commits together or not at all.
- `Backends` is the typed map of read capabilities a store fills in for one request:
  fragment lookup, text search, the resolved graph, the timeline, and vector search,
  which the pipeline adds from the store's `VectorIndex` and the configured embedder.
  Strategies name the ones they need in `required_backends`; a missing one is None here,
  with the reason in `Backends.reasons` when there is one, and skips them.
- Memory items (`MemoryItem`: text with a time and a scope) are written by the same
  `IndexWriter` as files, and read like any fragment, never as a file: their stored
  paths are their node URIs, which no file's path can be. Every read view a store hands
  out (`backends`, `vector_index`) is bound to the `RequestScope` it was opened with: it
  keeps out memory the scope does not allow, in every answer (hits, fragments, scores,
  similarities, token counts, counts), whatever filters a strategy passes; a strategy's
  filters can only narrow the scope (`RequestScope.narrow`). The graph holds what files
  give, never memory. `SessionTiers` offers pinned items, the scope's session's recently
  delivered items and recent memory.
- Vectors are kept per vector space (one embedder's): a `VectorWriter` adds the vectors
  of fragments that lack them, a batch at a time, and opening one for another space
  drops the old vectors, so two spaces are never mixed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, runtime_checkable

from .config import Settings
from .models import ContextFragment, RequestFilters, RequestScope

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# -- what an index writer writes ---------------------------------------------------------


class SkipReason(StrEnum):
    """Why a file's content is not in the index (kept, so the next run need not read it)."""

    TOO_LARGE = "too-large"
    BINARY = "binary"


@dataclass(frozen=True)
class StoredFile:
    """What a store remembers about an indexed file, to skip unchanged ones: its size, mtime
    and content hash, the tokenizer that counted its fragments' tokens, and why its content
    was left out, if it was (`sha256` is then '' for a file too large to read).
    """

    size: int
    mtime_ns: int
    sha256: str
    tokenizer: str
    skipped: SkipReason | None = None


@dataclass(frozen=True)
class NewFragment:
    """A fragment to write, with the fields the store indexes. `search_text` is what the
    text index sees (None: not searchable at all).
    """

    fragment: ContextFragment
    title: str
    language: str
    search_text: str | None


class NodeRecord(NamedTuple):
    """A UKO node as a store keeps it (the graph is built from these and the edges). A named
    tuple: a large store reads hundreds of thousands of them at once.
    """

    uri: str
    kind: str
    name: str
    path: str
    start_line: int
    end_line: int
    parent: str | None


class TargetForm(StrEnum):
    """How the graph finds what a declared edge points at."""

    NODE = "node"  #: a node URI of the same file
    SYMBOL = "symbol"  #: a definition's name
    LOCAL = "local"  #: a builtin's name: only a definition in the file or one it imports
    MEMBER = "member"  #: a definition's name in the Python module `near` (`math.floor`)
    FILE = "file"  #: a file path, relative to the project
    PYTHON = "python"  #: a dotted Python module name
    JAVA = "java"  #: a dotted Java class name
    INCLUDE = "include"  #: a C/C++ header, looked for next to `near` first
    GO = "go"  #: a Go import path
    RUST = "rust"  #: a Rust `crate::a::b` path


class EdgeTarget(NamedTuple):
    """What a declared edge points at: `names` are alternatives, the first that resolves
    wins; `near` is the folder an `include "x.h"` is looked for in first, or the dotted
    module a `member` is defined in.
    """

    form: TargetForm
    names: tuple[str, ...]
    near: str = ""


class EdgeRecord(NamedTuple):
    """A typed edge as its source file declared it; the graph resolves `target`."""

    source: str
    type: str
    target: EdgeTarget
    path: str


class DeclaredEdges(NamedTuple):
    """The edges of one type that one file declares to one target, from its distinct
    `sources`, as a store reads them back for the graph to resolve: the target is resolved
    once for all of them (a large file calls the same name hundreds of times).
    """

    sources: tuple[str, ...]
    type: str
    target: EdgeTarget
    path: str


class MemoryScope(StrEnum):
    """Who may see a memory item: one session, one user, or every request."""

    SESSION = "session"
    USER = "user"
    GLOBAL = "global"


#: The source kind of memory items (`RequestFilters.kinds` selects them by it).
MEMORY_KIND = "memory"
#: How every memory item's node URI starts; its stored path is that URI, which no file's
#: path can be (a file's path is normalised: it never holds `//`).
MEMORY_URI_PREFIX = "uko://memory/"


@dataclass(frozen=True)
class MemoryItem:
    """A memory item as a store keeps it: its id (unique within its scope and owner), when
    it was said or noted, who may see it (`owner`: the session or user id, '' for global),
    and who said it ('' when nobody in particular).
    """

    id: str
    text: str
    at: datetime
    scope: MemoryScope
    owner: str = ""
    speaker: str = ""

    def __post_init__(self) -> None:
        # A scope named by its value ("global") is the scope itself, not a plain string.
        try:
            scope = MemoryScope(self.scope)
        except ValueError:
            known = ", ".join(scope.value for scope in MemoryScope)
            raise ValueError(
                f"memory item {self.id!r}: scope {self.scope!r} is not one of {known}"
            ) from None
        object.__setattr__(self, "scope", scope)


# -- the resolved graph ------------------------------------------------------------------


class GraphEdge(NamedTuple):
    """A resolved edge between two graph nodes."""

    source: str
    type: str
    target: str


class GraphNode(NamedTuple):
    """A node of the resolved graph (files, definitions, sections, folders, the repository).
    A named tuple, as `GraphEdge` is: a walk looks up hundreds per request, and a tuple is
    made three times faster than a frozen dataclass, and is not tracked by the collector.
    """

    uri: str
    kind: str
    name: str
    path: str
    start_line: int = 0
    end_line: int = 0


@dataclass(frozen=True)
class GraphStats:
    """Node counts by kind and edge counts by type, both sorted by name."""

    nodes: dict[str, int]
    edges: dict[str, int]


Direction = Literal["out", "in", "both"]


# -- read capabilities -------------------------------------------------------------------


@dataclass(frozen=True)
class TextHit:
    """One text-search result: the fragment, its lexical score, the query terms it matched."""

    fragment: ContextFragment
    score: float
    matched_terms: tuple[str, ...]


@runtime_checkable
class FragmentLookup(Protocol):
    """Fragments by node."""

    def variants(
        self, uko_uri: str, filters: RequestFilters | None = None
    ) -> Sequence[ContextFragment]:
        """Every stored depth of one node, deepest first; none when the node is memory the
        view's scope, narrowed by `filters` (None: not narrowed), does not allow.
        """
        ...

    def variants_many(
        self, uko_uris: Collection[str], filters: RequestFilters | None = None
    ) -> Mapping[str, Sequence[ContextFragment]]:
        """`variants` of several nodes in one read, by URI; a node with none is left out."""
        ...

    def count(self) -> int:
        """How many fragments (all depths) the store holds that the view's scope allows."""
        ...

    def token_counts(
        self,
        fragments: Collection[ContextFragment],
        tokenizer: str,
        filters: RequestFilters | None = None,
    ) -> Mapping[str, int]:
        """The token counts the store holds for these fragments' texts, by content hash:
        for each fragment stored under its id with its content hash, in a file whose
        texts `tokenizer` counted; the others, and memory the view's scope (narrowed by
        `filters`) does not allow, are left out. Acceptance takes them as the texts' real
        counts instead of counting the texts again.
        """
        ...


@runtime_checkable
class TextSearch(Protocol):
    """Lexical search over full-text fragments."""

    def search(self, query: str, limit: int, filters: RequestFilters) -> Sequence[TextHit]:
        """Best matches first; user text is never interpreted as query syntax."""
        ...

    def scores(self, query: str, fragments: Sequence[ContextFragment]) -> Sequence[float]:
        """The score `search` gives each fragment for `query`, whatever its rank (0 for one
        that matches no query term, is not searchable, or is memory the view's scope does
        not allow).
        """
        ...


@runtime_checkable
class GraphView(Protocol):
    """The resolved UKO graph of everything indexed, kept until the index changes."""

    def node(self, uri: str) -> GraphNode | None:
        """The node with this URI, if there is one."""
        ...

    def neighbours(
        self, uri: str, edge_types: Collection[str] = (), direction: Direction = "both"
    ) -> Sequence[GraphEdge]:
        """Edges at `uri` (of these types; all when empty), sorted."""
        ...

    def subgraph(self, uris: Iterable[str], hops: int) -> Sequence[GraphEdge]:
        """Edges among the nodes within `hops` of `uris`, either direction, sorted."""
        ...

    def pagerank(self, seeds: Mapping[str, float], damping: float = 0.85) -> Mapping[str, float]:
        """Personalised PageRank seeded at `seeds` (node URI to weight), by node."""
        ...

    def stats(self) -> GraphStats:
        """How many nodes of each kind and edges of each type the graph holds."""
        ...

    def lookup(self, name: str) -> Sequence[GraphNode]:
        """The nodes a user may mean by `name`, sorted by URI: the node with that URI; else
        the files whose path ends with the longest matching tail of `name` (a path, or a
        dotted module name); else the definitions of that qualified (`Class.method`) or
        plain name, within the module a dotted name starts with when it names one, and for
        a plain name also the files of that name without its ending (`termui`: termui.py,
        _termui.py; a package: its __init__.py).
        """
        ...


@runtime_checkable
class Timeline(Protocol):
    """Fragments in order of their source's modification time."""

    def recent(
        self,
        limit: int,
        filters: RequestFilters,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Sequence[ContextFragment]:
        """Full-text fragments modified within [since, until), newest first, ties by id."""
        ...

    def after(
        self,
        moment: datetime,
        limit: int,
        filters: RequestFilters,
        until: datetime | None = None,
    ) -> Sequence[ContextFragment]:
        """Full-text fragments modified after `moment` (not at it) and before `until`,
        oldest first, ties by id: what came next, read from `moment` on.
        """
        ...


@runtime_checkable
class SessionTiers(Protocol):
    """Pinned items, what each session's assemblies delivered, and recent memory."""

    def pinned(self, limit: int, filters: RequestFilters) -> Sequence[ContextFragment]:
        """Full texts of the pinned items (config globs or URIs, and pins), by path and id."""
        ...

    def named(
        self, targets: Sequence[str], limit: int, filters: RequestFilters
    ) -> Sequence[ContextFragment]:
        """Full texts of the nodes (URIs) and files (paths, folders, globs) named, by path."""
        ...

    def recently_used(self, limit: int, filters: RequestFilters) -> Sequence[ContextFragment]:
        """Full texts of the nodes the recent assemblies of the view's session delivered,
        latest first (none for a scope of no session).
        """
        ...

    def recent_memory(
        self, limit: int, filters: RequestFilters, until: datetime | None = None
    ) -> Sequence[ContextFragment]:
        """Memory items in the filters' scope from before `until`, newest first, ties by id."""
        ...

    def record_use(self, uris: Sequence[str]) -> None:
        """Log that an assembly of the view's session delivered these nodes (a bounded
        log; nothing for a scope of no session).
        """
        ...


@dataclass(frozen=True)
class VectorHit:
    """One vector-search result: the fragment and its cosine similarity to the query."""

    fragment: ContextFragment
    similarity: float


@dataclass(frozen=True)
class VectorCoverage:
    """How many of the full-text fragments have a vector of the space searched."""

    embedded: int
    total: int
    #: Searched through an approximate index: similarities are exact, but a text near the
    #: query may be missed.
    approximate: bool = False

    @property
    def share(self) -> float:
        """The embedded share, 0 to 1 (1 for an empty store)."""
        return self.embedded / self.total if self.total else 1.0

    def remark(self) -> str:
        """For a strategy's reasons: '' when every text has a vector and search is exact;
        else how many have one, and that search is approximate.
        """
        partial = (
            ""
            if self.embedded >= self.total
            else f"; {self.share:.0%} of the store has vectors so far"
        )
        return partial + ("; approximate search" if self.approximate else "")


@runtime_checkable
class VectorIndex(Protocol):
    """A store's vectors of one space, searched with query vectors."""

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space."""
        ...

    def nearest(
        self, vector: NDArray[np.float32], limit: int, filters: RequestFilters
    ) -> Sequence[VectorHit]:
        """The most similar full-text fragments first, ties by id."""
        ...

    def similarities(
        self, vector: NDArray[np.float32], fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `vector` (None: no text the view's scope allows
        has its content hash and a vector).
        """
        ...


@runtime_checkable
class VectorSearch(Protocol):
    """Search by meaning: query texts are embedded by the configured embedder and matched
    against the store's vectors of that embedder's space.
    """

    @property
    def embedder(self) -> str:
        """The name of the embedder that made the vectors."""
        ...

    def coverage(self) -> VectorCoverage:
        """How much of the store has vectors to search."""
        ...

    def nearest(self, query: str, limit: int, filters: RequestFilters) -> Sequence[VectorHit]:
        """The fragments most similar to `query` first, ties by id."""
        ...

    def similarities(
        self, query: str, fragments: Sequence[ContextFragment]
    ) -> Sequence[float | None]:
        """Each fragment's similarity to `query` (None: it has no vector)."""
        ...


#: Capability names strategies use in `required_backends`.
STORE = "store"
TEXT = "text"
GRAPH = "graph"
TIMELINE = "timeline"
VECTORS = "vectors"
SESSIONS = "sessions"


@dataclass(frozen=True)
class Backends:
    """The read capabilities a store offers for one request; absent ones are None."""

    fragments: FragmentLookup | None = None
    text: TextSearch | None = None
    graph: GraphView | None = None
    timeline: Timeline | None = None
    vectors: VectorSearch | None = None
    sessions: SessionTiers | None = None
    #: Why a capability is missing, by name, when more can be said than that it is.
    reasons: Mapping[str, str] = field(default_factory=lambda: {})

    def available(self) -> frozenset[str]:
        """Names of the capabilities present: `store` (fragment lookup), `text`, `graph`,
        `timeline`, `vectors`, `sessions`.
        """
        offered = (
            (STORE, self.fragments),
            (TEXT, self.text),
            (GRAPH, self.graph),
            (TIMELINE, self.timeline),
            (VECTORS, self.vectors),
            (SESSIONS, self.sessions),
        )
        return frozenset(name for name, backend in offered if backend is not None)


# -- stores ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreStats:
    """What a store holds."""

    location: str
    files: int
    fragments: int
    searchable: int


@dataclass(frozen=True)
class CarriedMemory:
    """What `Store.carry_memory` copied from a moved-aside store: memory items, pins and
    logged uses of sessions, and what it could not read there (None: it read everything).
    """

    items: int
    pins: int
    uses: int
    left: str | None = None

    def summary(self, previous: str) -> str | None:
        """One line saying what was kept and what was not (None: there was nothing)."""
        kept = (
            f"{_counted(self.items, 'memory item')}, {_counted(self.pins, 'pin')} and"
            f" {_counted(self.uses, 'logged use')}"
        )
        if self.left is not None and not (self.items or self.pins or self.uses):
            return f"memory, pins and session logs not kept: {self.left}; they stay in {previous}"
        if self.left is not None:
            return f"kept {kept} from {previous}; not kept: {self.left}; it stays there"
        if self.items or self.pins or self.uses:
            return f"kept {kept} from {previous}"
        return None


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}" if count == 1 else f"{count} {thing}s"


class IndexWriter(Protocol):
    """Changes inside a write session; a file's changes commit together or not at all."""

    def files(self) -> Mapping[str, StoredFile]:
        """Every indexed file, by its stored path."""
        ...

    def touch_file(self, path: str, stored: StoredFile) -> None:
        """Record a new size and mtime for a file whose content did not change."""
        ...

    def remove_file(self, path: str) -> int:
        """Forget a file and everything read from it; returns how many fragments went."""
        ...

    def replace_file(
        self,
        path: str,
        stored: StoredFile,
        fragments: Iterable[NewFragment],
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
    ) -> None:
        """Write a file's fragments, nodes and edges, replacing what was indexed from it."""
        ...

    def commit(self) -> None:
        """Commit what was done so far and go on; another writer may take its turn between."""
        ...

    def add_memory(self, item: MemoryItem, fragment: NewFragment, node: NodeRecord) -> None:
        """Keep a memory item (replacing one of the same id, scope and owner), stored under
        its node URI (`MEMORY_URI_PREFIX`), which its fragment's path must be; `files`,
        `replace_file` and `remove_file` never see it.
        """
        ...

    def remove_memory(
        self, scope: MemoryScope | None, owner: str | None, ids: Collection[str] = ()
    ) -> int:
        """Forget memory items (of `scope` and `owner` when given; only `ids` when given);
        returns how many went.
        """
        ...

    def pin(self, target: str) -> None:
        """Pin a node URI, a path or a glob of paths."""
        ...

    def unpin(self, target: str) -> bool:
        """Unpin a target; whether it was pinned."""
        ...


class VectorWriter(Protocol):
    """Adds the vectors of one space to a store, a batch at a time."""

    def pending(self, limit: int) -> Sequence[tuple[str, str]]:
        """Up to `limit` full-text fragments without a vector, as (content hash, text), in
        a stable order; a text stored twice comes once.
        """
        ...

    def add(self, content_hashes: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Keep the vectors (one row per hash) and commit them: a batch is all or nothing."""
        ...

    def coverage(self) -> VectorCoverage:
        """How much of the store has a vector of this space now."""
        ...


class Store(Protocol):
    """An opened store: checked on use, written through one writer, read through backends."""

    @property
    def location(self) -> str:
        """Where the store is, as messages show it."""
        ...

    @property
    def local_folders(self) -> Sequence[Path]:
        """Folders the store keeps on this machine: never indexed."""
        ...

    @property
    def folder_marker(self) -> str | None:
        """The name of the file that marks a folder as a store of this kind, wherever it is
        (None: this kind keeps nothing in folders); `index` never walks such a folder.
        """
        ...

    def exists(self) -> bool:
        """Whether an index has been written here."""
        ...

    def check(self) -> None:
        """Raise `StoreError` (saying what to run) unless the index exists and is whole."""
        ...

    def damage(self) -> str | None:
        """What is wrong with the store, in a few words (None: nothing, or no store)."""
        ...

    def verify(self) -> str:
        """Check the whole store, reading everything it holds (slow; `index --check`):
        what was checked, in one line, or a `StoreError` naming the damage and what to run.
        """
        ...

    def move_aside(self) -> str | None:
        """Keep the current index under another name, so that the next index starts empty;
        returns where it went (None: there was nothing to move).
        """
        ...

    def carry_memory(self, previous: str) -> CarriedMemory:
        """Copy into this store what no file can give back from the store `move_aside`
        moved to `previous`: memory items (their texts, what they are searched by, times,
        scope, speakers, nodes), pins and each session's access log. `previous` is only
        read; what cannot be read there is left there, and said in `CarriedMemory.left`.
        Vectors come with the next embedding, as a file's do.
        """
        ...

    def stats(self) -> StoreStats:
        """How many files and fragments the store holds."""
        ...

    def writer(self) -> AbstractContextManager[IndexWriter]:
        """A write session; what it did commits at `commit` and at its end, and an error
        rolls back only what was not committed yet.
        """
        ...

    def vector_writer(self, space: str, dimension: int) -> AbstractContextManager[VectorWriter]:
        """A session adding vectors of `space` (`dimension` wide). Vectors of any other space
        are dropped first: the store holds one space at a time.
        """
        ...

    def vector_index(self, space: str, scope: RequestScope | None = None) -> VectorIndex | None:
        """The store's vectors of `space` for searching within `scope` (None: a request of
        no session and no user); None when it holds none of them.
        """
        ...

    def backends(self, scope: RequestScope | None = None) -> Backends:
        """The read capabilities for one request of `scope` (None: no session and no
        user), every read bound to it; empty when nothing is indexed yet.
        """
        ...

    def prefetch(self, limit: int) -> int:
        """Read the files the store keeps on this machine, at most `limit` bytes in all, so
        that the operating system's cache holds them and a long-running process's first
        requests do not wait for the disk; returns the bytes read (0 for a store that keeps
        nothing here, or holds no index yet). Changes nothing.
        """
        ...

    def close(self) -> None:
        """Release connections; the store reopens on next use."""
        ...


@runtime_checkable
class StoreBackend(Protocol):
    """A kind of store, registered by a plugin: `[store] backend` names it."""

    @property
    def name(self) -> str:
        """The name `[store] backend` uses."""
        ...

    def open(self, settings: Settings, project_dir: Path) -> Store:
        """The store `settings` describe, for the project in `project_dir`."""
        ...
