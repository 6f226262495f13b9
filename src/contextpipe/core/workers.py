"""Daemon threads reused across calls, for code that may hang (a plugin's): a worker
stuck in a call is simply never idle again, and never keeps the process from exiting.

Reused, because a new thread costs more than an instant call, and starts with nothing of
its own: the store's connections and the event loop a thread keeps are made again for it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

#: A call to run on a worker; it returns what wakes its caller with the outcome, called last.
Job = Callable[[], Callable[[], None]]


class DaemonWorkers:
    """Daemon threads that run jobs, reused from one to the next. A worker stuck in a hung
    call is never idle again; a new one starts whenever none is idle, and idle ones leave
    after `idle_seconds`.
    """

    def __init__(self, name: str, idle_seconds: float = 60.0) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # workers waiting for a job that no submit has claimed yet
        self._idle_seconds = idle_seconds

    def submit(self, job: Job) -> None:
        """Run `job` on an idle worker, or on a new one; then call what it returns. A job
        catches its own errors (one that escapes ends its worker).
        """
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                worker = threading.Thread(target=self._work, name=self._name)
                worker.daemon = True
                worker.start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # unclaimed: nobody is about to hand this worker a job
                        self._idle -= 1
                        return
                continue
            notify = job()
            with self._lock:
                self._idle += 1
            # Waking the waiting loop comes last: its thread then runs without having to
            # hand the GIL back to this one for the bookkeeping above.
            notify()
