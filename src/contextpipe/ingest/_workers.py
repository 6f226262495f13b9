"""Worker processes for parsing and token counting, which never outlive the indexer.

The pool's workers start from a fork server (clean processes, whatever threads the indexer
runs: progress bars). If the indexer is killed (SIGKILL, the OOM killer), nothing tells
them: each would wait for work forever, and with them the fork server and the resource
tracker, which stay up while any worker holds their pipes. So every worker watches the
indexer's process and exits as soon as it is gone; the fork server and the resource
tracker then see their pipes close and exit too.

Watching uses a pidfd (Linux 5.3+: readable the moment the process exits, no polling); where
there is none, the worker checks every half second.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading
import time
from concurrent.futures import ProcessPoolExecutor

_POLL_SECONDS = 0.5


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` processes that exit when this process does, however it ends."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )


def _watch_parent(pid: int) -> None:
    """Pool initializer: exit this worker as soon as process `pid` is gone."""
    threading.Thread(target=_exit_with, args=(pid,), name="watch-indexer", daemon=True).start()


def _exit_with(pid: int) -> None:
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)  # already gone
    except (AttributeError, OSError):
        while _alive(pid):
            time.sleep(_POLL_SECONDS)
        os._exit(1)
    select.select([handle], [], [])
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
