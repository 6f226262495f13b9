"""What acceptance and packing ask of a store's fragment lookup: the stored depths of a
node as one request may see them, and which of them a fragment may fall back to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from ..contract.capabilities import FragmentLookup
from ..core.models import ContextFragment, RequestFilters

#: Every stored depth of a node, deepest first (`FragmentLookup.variants`, or a stand-in).
VariantLookup = Callable[[str], Sequence[ContextFragment]]


class RequestVariants:
    """A store's fragment lookup as one request sees it: memory its scope does not allow
    left out, and the nodes read ahead in one batch kept for the rest of the request, so
    that packing's fallbacks cost one read, not one per node.
    """

    def __init__(self, lookup: FragmentLookup | None, filters: RequestFilters) -> None:
        self._lookup = lookup
        self._filters = filters
        # Each node read ahead, with the answer of the read that held it: a store may make
        # a node's fragments only when they are asked for.
        self._ahead: dict[str, Mapping[str, Sequence[ContextFragment]]] = {}

    def __call__(self, uko_uri: str) -> Sequence[ContextFragment]:
        """Every stored depth of one node the request may see, deepest first."""
        found = self._ahead.get(uko_uri)
        if found is not None:
            return found.get(uko_uri, ())
        if self._lookup is None:
            return ()
        return self._lookup.variants(uko_uri, self._filters)

    def token_counts(
        self, fragments: Collection[ContextFragment], tokenizer: str
    ) -> Mapping[str, int]:
        """The store's token counts of these fragments' texts, by content hash
        (`FragmentLookup.token_counts`); none without a store.
        """
        if self._lookup is None or not fragments:
            return {}
        return self._lookup.token_counts(fragments, tokenizer, self._filters)

    def read_ahead(self, uko_uris: Iterable[str]) -> None:
        """Read these nodes' variants at once, for the calls to come."""
        wanted = list(dict.fromkeys(uri for uri in uko_uris if uri not in self._ahead))
        if self._lookup is None or not wanted:
            return
        found = self._lookup.variants_many(wanted, self._filters)
        for uri in wanted:
            self._ahead[uri] = found


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
