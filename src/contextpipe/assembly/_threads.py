"""Where plugin code runs, so that the request's event loop only waits (see `executor`).

Rules:

- Plain strategy methods run on daemon worker threads, reused across requests (starting a
  thread costs more than an instant strategy); a worker stuck in a hung strategy is never
  idle again, a new one starts whenever none is idle, and idle ones leave after a minute.
- Each of a request's plain calls starts on a worker of its own at once, so that a slow
  or hung strategy holds up no other (`PlainBatch`); a call with a prelude (a strategy's
  `prepare` before its `can_handle`) starts after it on the same worker, without a round
  trip through the caller's loop in between, unless the caller moved it elsewhere first.
- An async strategy runs on an event loop of its own, on a daemon thread of its own, kept
  as long as its executor (`OwnLoop`): one that blocks its loop holds up only itself.
- Each call's outcome arrives on the caller's loop as a future; one that arrives after
  the caller gave up on it (at its deadline) is thrown away.
- A call given up on that has not ended is counted as stuck, by strategy, until it ends
  (`StuckCalls`): a plain one holds its worker thread that long, an async one a task on
  its strategy's loop (or a place in its queue, when the loop is blocked).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ..contract.strategy import ContextStrategy
from ..core.workers import DaemonWorkers

_T = TypeVar("_T")


_WORKERS = DaemonWorkers("contextpipe-strategy")


#: A plain strategy's outcome on its worker: its index, and its error or its return value.
_Result = tuple[int, BaseException | None, object]


class PlainBatch:
    """A request's calls of plain strategy methods (`can_handle`, a plain `retrieve` and the
    check of its answer) on daemon workers, each on its own, with one future each, and
    each after its prelude, if it has one (what a prelude raises is dropped). `started`
    says when each call began on its worker (`time.perf_counter()`), None before.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        calls: Sequence[Callable[[], object]],
        preludes: Sequence[Callable[[], object] | None] = (),
    ):
        self._loop = loop
        self._calls = list(calls)
        self._preludes = list(preludes) or [None] * len(self._calls)
        self.futures: list[asyncio.Future[object]] = [loop.create_future() for _ in calls]
        self.started: list[float | None] = [None] * len(self._calls)
        self._moved: set[int] = set()
        self._lock = threading.Lock()  # a call starts, or is moved, not both
        for index in range(len(self._calls)):
            _WORKERS.submit(functools.partial(self._alone, index))

    def move(self, index: int) -> bool:
        """Whether call `index` had not started (its prelude still running): then it never
        starts here, so that the caller can run it elsewhere.
        """
        with self._lock:
            if self.started[index] is None:
                self._moved.add(index)
                return True
            return False

    def _alone(self, index: int) -> Callable[[], None]:
        prelude = self._preludes[index]
        if prelude is not None:
            with contextlib.suppress(BaseException):  # on a worker: its failure is its own
                prelude()
        with self._lock:
            if index in self._moved:
                return _nothing
            self.started[index] = time.perf_counter()
        try:
            result: _Result = index, None, self._calls[index]()
        except BaseException as exc:  # delivered to the awaiting side, which reports it
            result = index, _bare(exc), None
        return functools.partial(self._post, result)

    def _post(self, result: _Result) -> None:
        # RuntimeError: the loop is gone, the request finished without waiting for us.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._deliver, result)

    def _deliver(self, result: _Result) -> None:
        index, error, value = result
        future = self.futures[index]
        if future.done():  # given up on at its deadline
            return
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)


def _nothing() -> None:
    """What a moved call posts to its caller: nothing."""


def _bare(error: BaseException) -> BaseException:
    """`error` without its traceback and the exception it was raised from. Both hold the
    frames of this call, which hold `error`: a cycle that only a full collection frees,
    with the whole batch in it. The awaiting side reports the message only.
    """
    error.__context__ = error.__cause__ = None
    return error.with_traceback(None)


class Ticket:
    """One call of plugin code: whether it ended, and whether its caller gave up on it
    (then, until it ends, it is counted as stuck). `run` or `awaited` runs the call and
    marks its end, however it ends. An async call always begins, even one cancelled
    before its loop got to it (a task's first step runs before the cancellation reaches
    it), so its end is always marked too.
    """

    __slots__ = ("_abandoned", "_ended", "_stuck", "key")

    def __init__(self, stuck: StuckCalls, key: int) -> None:
        self._stuck = stuck
        self.key = key
        self._ended = False
        self._abandoned = False

    def run(self, call: Callable[[], _T]) -> _T:
        """`call()`, on a worker."""
        try:
            return call()
        finally:
            self._end()

    async def awaited(self, call: Callable[[], Awaitable[_T]]) -> _T:
        """`await call()`, on the strategy's loop."""
        try:
            return await call()
        finally:
            self._end()

    def abandon(self) -> int:
        """The caller gives up on the call: stuck, unless it ended. How many calls of its
        key are stuck now.
        """
        with self._stuck.lock:
            if not self._ended and not self._abandoned:
                self._abandoned = True
                self._stuck.add(self.key, 1)
            return self._stuck.count(self.key)

    def _end(self) -> None:
        with self._stuck.lock:
            self._ended = True
            if self._abandoned:
                self._stuck.add(self.key, -1)


class StuckCalls:
    """Calls of plugin code their callers gave up on (at their deadlines) that have not
    ended yet, counted by key (a strategy's `id()`); their tickets keep the count.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()  # held by a ticket while it changes the count
        self._stuck: dict[int, int] = {}

    def ticket(self, key: int) -> Ticket:
        """A ticket for one call of the plugin code `key` names."""
        return Ticket(self, key)

    def count(self, key: int) -> int:
        """How many calls of `key` are stuck now."""
        return self._stuck.get(key, 0)

    def add(self, key: int, change: int) -> None:
        """Change the count of `key` (under `lock`)."""
        stuck = self._stuck.get(key, 0) + change
        if stuck:
            self._stuck[key] = stuck
        else:
            del self._stuck[key]


class OwnLoop:
    """An event loop on a daemon thread of its own, for one async strategy, kept as long as
    its executor. A strategy that blocks it (a blocking call in async code) holds up only
    itself, and what it binds to its loop (a client session, say) stays usable from one
    request to the next.
    """

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = strategy  # holds on to its id(), the key of this loop
        self.loop = asyncio.new_event_loop()
        thread = threading.Thread(target=self._serve, name=f"contextpipe-async-{strategy.name}")
        thread.daemon = True
        thread.start()

    def _serve(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        loop.run_forever()
        # Stopped: its executor closed. Cancel what is left and let it finish (a strategy
        # that ignores its cancellation keeps this daemon thread until it is done).
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left))
        loop.close()

    def start(self, call: Callable[[], Awaitable[_T]]) -> asyncio.Future[_T]:
        """Run `call()` on this loop; its outcome arrives on the caller's loop."""

        async def awaited() -> _T:
            return await call()  # the coroutine is created, too, on this loop

        started = asyncio.run_coroutine_threadsafe(awaited(), self.loop)
        return asyncio.wrap_future(started)

    def blocked(self) -> bool:
        """Whether one of its tasks is running right now. At a deadline: the strategy is
        holding its loop instead of waiting on it.
        """
        return asyncio.current_task(self.loop) is not None

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)


def stop_loops(own_loops: dict[int, OwnLoop]) -> None:
    """Stop every loop in `own_loops` and forget them."""
    for own in own_loops.values():
        own.stop()
    own_loops.clear()
