"""The read capabilities a store offers a request, as small protocols, and `Backends`,
the typed map of them a store fills in for one request: fragment lookup, text search,
the resolved graph, the timeline, session tiers, and vector search, which the pipeline
adds from the store's `VectorIndex` and the configured embedder. Strategies name the
ones they need in `required_backends`; a missing one is None here, with the reason in
`Backends.reasons` when there is one, and skips them.

Every read view a store hands out is bound to the `RequestScope` it was opened with: it
keeps out memory the scope does not allow, in every answer (hits, fragments, scores,
similarities, token counts, counts), whatever filters a strategy passes; a strategy's
filters can only narrow the scope (`RequestScope.narrow`). The graph holds what files
give, never memory. `SessionTiers` offers pinned items, the scope's session's recently
delivered items and recent memory.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from ..core.models import ContextFragment, RequestFilters
from .records import (
    GraphEdge,
    GraphNode,
    GraphStats,
    TextHit,
    VectorCoverage,
    VectorHit,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


Direction = Literal["out", "in", "both"]


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

    def vectors(self, fragments: Sequence[ContextFragment]) -> Sequence[NDArray[np.float32] | None]:
        """Each fragment's vector, of unit length and as `similarities` scores it (None:
        as `similarities` says).
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

    def vectors(self, fragments: Sequence[ContextFragment]) -> Sequence[NDArray[np.float32] | None]:
        """Each fragment's vector (None: it has none): what tells two texts that say the
        same in other words.
        """
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
