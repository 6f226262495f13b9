"""The pluggy hook specifications: the one place that says what a plugin can provide.

Third-party packages register a module or object under the entry-point group
`contextpipe.strategies`; the built-in strategies register the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from .config import Settings
from .strategy import ContextStrategy

PROJECT_NAME = "contextpipe"
ENTRY_POINT_GROUP = "contextpipe.strategies"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Return the strategies this plugin provides, configured from `settings`
    (read your own options with `settings.strategy(NAME).options`).
    """
    ...
