"""The pluggy hook specifications: the one place that says what a plugin can provide.

Third-party packages register a module or object under an entry-point group:
`contextpipe.strategies` for retrieval strategies, `contextpipe.stores` for store
backends, `contextpipe.embedders` for embedding models. The built-in strategies, the
embedded store and the built-in embedders register the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ..config import Settings
    from .embedding import Embedder
    from .store import StoreBackend
    from .strategy import ContextStrategy

PROJECT_NAME = "contextpipe"
ENTRY_POINT_GROUP = "contextpipe.strategies"
STORE_ENTRY_POINT_GROUP = "contextpipe.stores"
EMBEDDER_ENTRY_POINT_GROUP = "contextpipe.embedders"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Return the strategies this plugin provides, configured from `settings`
    (read your own options with `settings.strategy(NAME).options`).
    """
    ...


@hookspec
def contextpipe_stores() -> Sequence[StoreBackend]:
    """Return the store backends this plugin provides; `[store] backend` picks one by name."""
    ...


@hookspec
def contextpipe_embedders(settings: Settings) -> Sequence[Embedder]:
    """Return the embedders this plugin provides, configured from `settings`; `[embedding]
    model` picks one by name. Constructing one must be cheap: weights are read in `load()`.
    """
    ...
