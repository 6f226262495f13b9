"""Backend protocols strategies retrieve through, and the bundle handed to each strategy.

A strategy names the backends it needs (`required_backends`); the executor skips it with a
reason when the store in use does not offer them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .models import ContextFragment, RequestFilters

TEXT = "text"
STORE = "store"


@dataclass(frozen=True)
class TextHit:
    """One text-search result: the fragment, its lexical score, the query terms it matched."""

    fragment: ContextFragment
    score: float
    matched_terms: tuple[str, ...]


@runtime_checkable
class FragmentStore(Protocol):
    """Fragments by id and by node."""

    def variants(self, uko_uri: str) -> Sequence[ContextFragment]:
        """Every stored depth of one node, deepest first."""
        ...

    def count(self) -> int:
        """How many fragments (all depths) the store holds."""
        ...


#: Every stored depth of a node, deepest first (`FragmentStore.variants`, or a stand-in).
VariantLookup = Callable[[str], Sequence[ContextFragment]]


def stored_shallower(fragment: ContextFragment, variants: VariantLookup) -> list[ContextFragment]:
    """The stored depths of the fragment's node shallower than it, deepest first, when the
    fragment is that node's text as stored; none otherwise. A strategy that proposed
    other text for a node is not credited with the store's skeleton of it.
    """
    stored = variants(fragment.uko_uri)
    if not any(
        v.detail_depth == fragment.detail_depth and v.content_hash == fragment.content_hash
        for v in stored
    ):
        return []
    return [v for v in stored if v.detail_depth < fragment.detail_depth]


@runtime_checkable
class TextBackend(Protocol):
    """Lexical search over full-text fragments."""

    def search(self, query: str, limit: int, filters: RequestFilters) -> Sequence[TextHit]:
        """Best matches first; user text is never interpreted as query syntax."""
        ...


@dataclass(frozen=True)
class Backends:
    """The backends available to strategies for one request; absent ones are None."""

    fragments: FragmentStore | None = None
    text: TextBackend | None = None
    extra: dict[str, object] = field(default_factory=dict[str, object])

    def available(self) -> frozenset[str]:
        """Names of the backends present (`store`, `text`, and any extra ones)."""
        names = {name for name, backend in ((STORE, self.fragments), (TEXT, self.text)) if backend}
        return frozenset(names | set(self.extra))
