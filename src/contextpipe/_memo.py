"""Bounded memo tables for values that are pure functions of their keys (token counts,
text hashes, word bitsets), or bounds of them that only get better, shared by the threads
of a long-running process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """A dict that forgets its oldest entries beyond `capacity`. Safe to share between
    threads; a value may be computed twice, never stored wrong.
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
                if len(self._values) >= self._capacity:
                    del self._values[next(iter(self._values))]
                self._values[key] = value
        return value

    def peek(self, key: K) -> V | None:
        """The remembered value for `key`, or None: nothing is computed."""
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        """Remember `value` for `key`, replacing what was remembered (a better bound)."""
        with self._lock:
            if key not in self._values and len(self._values) >= self._capacity:
                del self._values[next(iter(self._values))]
            self._values[key] = value
