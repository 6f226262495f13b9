"""One event loop per calling thread, reused by `Pipeline.assemble`.

Setting a loop up and tearing it down costs a good part of a millisecond, as much as
fusing hundreds of candidates. Not `asyncio.run` either: on Python 3.11/3.12 its teardown
formats the whole result as a string (restoring the SIGINT handler), which costs more than
the packing itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class ThreadLoops:
    """Runs coroutines to completion on the calling thread's own, kept event loop."""

    def __init__(self) -> None:
        self._loops: dict[int, asyncio.AbstractEventLoop] = {}

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """The coroutine's result, run on this thread's loop."""
        loop = self._loops.get(threading.get_ident())
        if loop is None or loop.is_closed():
            loop = self._loops[threading.get_ident()] = asyncio.new_event_loop()
        return loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close every loop that is not running."""
        for loop in list(self._loops.values()):
            if not loop.is_running():
                loop.close()
        self._loops.clear()
