"""What acceptance and packing ask of a store's fragment lookup: the stored depths of a
node as one request may see them, and which of them a fragment may fall back to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from ..contract.capabilities import FragmentLookup
from ..core.models import ContextFragment, RequestFilters

#: Every stored depth of a node, deepest first (`FragmentLookup.variants`, or a stand-in).
VariantLookup = Callable[[str], Sequence[ContextFragment]]


class RequestVariants:
    """A store's fragment lookup as one request sees it: memory its scope does not allow
    left out.
    """

    def __init__(self, lookup: FragmentLookup | None, filters: RequestFilters) -> None:
        self._lookup = lookup
        self._filters = filters

    def __call__(self, uko_uri: str) -> Sequence[ContextFragment]:
        """Every stored depth of one node the request may see, deepest first."""
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
