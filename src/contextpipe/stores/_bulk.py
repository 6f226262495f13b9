"""Building hundreds of thousands of small objects at once (a large store's nodes and
edges) without the cyclic garbage collector.

Every few hundred new container objects the collector runs, and each run of the oldest
generation walks everything alive: reading 350k edges as tuples spent more time there
than in SQLite. None of those objects can be part of a cycle, so the collector is paused
while they are built and resumed afterwards, as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Generator[None]:
    """Pause the cyclic collector inside, unless it was already off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
