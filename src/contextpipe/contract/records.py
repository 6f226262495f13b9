"""The value types a store writes and reads back: what an `IndexWriter` writes for one
file (`StoredFile`, `NewFragment`, `NodeRecord`, `EdgeRecord` with its `EdgeTarget`),
memory items (`MemoryItem`), the resolved graph's nodes and edges, and what searches and
counts return (`TextHit`, `VectorHit`, `VectorCoverage`, `StoreStats`).

Memory items are written by the same `IndexWriter` as files, and read like any fragment,
never as a file: their stored paths are their node URIs, which no file's path can be.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from ..core.models import ContextFragment

if TYPE_CHECKING:
    pass


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


@dataclass(frozen=True)
class TextHit:
    """One text-search result: the fragment, its lexical score, the query terms it matched."""

    fragment: ContextFragment
    score: float
    matched_terms: tuple[str, ...]


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
