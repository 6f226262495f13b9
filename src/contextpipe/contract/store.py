"""What a store backend implements: a `StoreBackend` (a plugin, entry-point group
`contextpipe.stores`) opens a `Store`, which is opened, checked and closed, reports
`StoreStats`, hands out one `IndexWriter` at a time (everything read from one file
commits together or not at all) and, for each request, the `Backends` it offers.

Vectors are kept per vector space (one embedder's): a `VectorWriter` adds the vectors of
fragments that lack them, a batch at a time, and opening one for another space drops the
old vectors, so two spaces are never mixed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..core.models import RequestScope
from .capabilities import (
    Backends,
    VectorIndex,
)
from .records import (
    CarriedMemory,
    EdgeRecord,
    MemoryItem,
    MemoryScope,
    NewFragment,
    NodeRecord,
    StoredFile,
    StoreStats,
    VectorCoverage,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ..config import Settings


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
