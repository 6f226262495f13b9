"""Bounded concurrency: at most `running` requests assembled at once and `queued` waiting
for a turn; one more is refused at once (`BusyError`), never left to wait without bound.

A request waits in arrival order (asyncio's semaphore is fair); a refused request loses
nothing, as it changed nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager


class BusyError(Exception):
    """Every slot is taken and the queue is full."""


class Admission:
    def __init__(self, running: int, queued: int) -> None:
        self._slots = asyncio.Semaphore(running)
        self._queued = queued
        self.waiting = 0
        self.in_flight = 0

    @asynccontextmanager
    async def admitted(self, wait_s: float | None = None) -> AsyncGenerator[None]:
        """Hold a slot inside; raise `BusyError` when none is free and the queue is full,
        and `TimeoutError` when no slot came free within `wait_s` seconds (None: no limit).
        """
        if self._slots.locked() and self.waiting >= self._queued:
            raise BusyError
        self.waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), wait_s)
        finally:
            self.waiting -= 1
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            self._slots.release()
