"""Bounded memo tables for values that are pure functions of their keys (token counts,
text hashes, word bitsets), or bounds of them that only get better, shared by the threads
of a long-running process.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from itertools import islice
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """A dict that, once it holds `capacity` entries, forgets the oldest quarter of them.
    Safe to share between threads; a value may be computed twice, never stored wrong.

    A quarter at a time, into a fresh dict: forgetting one entry per miss walked past every
    slot earlier deletions had emptied to find the oldest (about 8 µs a miss at 20,000
    entries). Still a plain dict, not an `OrderedDict`: a dict of strings, numbers and
    tuples of them is one the cyclic collector stops tracking, an `OrderedDict` it walks
    entry by entry at every full collection.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._values: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The remembered value for `key`, computed (and remembered) when missing."""
        value = self._values.get(key)
        if value is None:
            value = compute()  # outside the lock: token counting runs without the GIL
            with self._lock:
                self._make_room()
                self._values[key] = value
        return value

    def peek(self, key: K) -> V | None:
        """The remembered value for `key`, or None: nothing is computed."""
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        """Remember `value` for `key`, replacing what was remembered (a better bound)."""
        with self._lock:
            if key not in self._values:
                self._make_room()
            self._values[key] = value

    def _make_room(self) -> None:
        """Forget the oldest quarter when full (called with the lock held). The dict is
        replaced, not emptied in place, so that a reader holding it is not disturbed.
        """
        values = self._values
        if len(values) >= self._capacity:
            self._values = dict(islice(values.items(), max(1, len(values) // 4), None))


def memoised(capacity: int) -> Callable[[Callable[[K], V]], Callable[[K], V]]:
    """`functools.lru_cache` for a pure function of one argument whose results are never
    None, kept in a `BoundedMemo` of `capacity`: an `lru_cache` holds its entries in links
    the cyclic collector walks one by one at every full collection, a dict of strings and
    tuples of them it does not walk at all.
    """

    def decorate(function: Callable[[K], V]) -> Callable[[K], V]:
        memo = BoundedMemo[K, V](capacity)

        @functools.wraps(function)
        def remembered(key: K) -> V:
            found = memo.peek(key)
            return found if found is not None else memo.get(key, functools.partial(function, key))

        return remembered

    return decorate
