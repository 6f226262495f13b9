"""Worker processes for parsing and token counting: they never run the caller's code and
never outlive the indexer.

Rules:

- A worker is a fresh interpreter running this module (`python -m`, with the indexer's
  `sys.path`, nothing prepended): it never imports the caller's `__main__`. multiprocessing's
  spawn and fork server would, so a script without an `if __name__ == "__main__":` guard ran
  again in every worker, and one with it ran its module code once more per worker.
- Work and results travel as pickles over the worker's stdin and stdout, a batch at a time;
  each worker serves one batch at a time, and results come back in the order of the work.
- A worker ends when its stdin closes. However the indexer ends (SIGKILL, SIGTERM, the OOM
  killer), the system closes its end of the pipes, and each worker exits at its next read
  or write, quietly. No semaphores, fork server or resource tracker are involved, so
  nothing is left behind and nothing warns of leaks.
- An exception raised by the work travels back and is raised in the indexer; a worker that
  dies is an error naming its exit status.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..core.errors import ContextpipeError


class _Worker:
    """One worker process."""

    def __init__(self) -> None:
        # The indexer's own import path, so that the worker finds what the indexer found;
        # -P: not the current folder, whose files could shadow modules.
        paths = os.pathsep.join(entry or str(Path.cwd()) for entry in sys.path)
        self._process = subprocess.Popen(
            [sys.executable, "-P", "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": paths},
        )

    def run(self, function: Callable[..., Any], batch: Sequence[tuple[Any, ...]]) -> list[Any]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None  # both are pipes
        try:
            pickle.dump((function, batch), stdin, pickle.HIGHEST_PROTOCOL)
            stdin.flush()
            failed, value = pickle.load(stdout)
        except (BrokenPipeError, EOFError):
            status = self._process.wait()
            raise ContextpipeError(
                f"a parsing worker process ended unexpectedly (exit status {status})"
            ) from None
        if failed:
            raise value
        return value

    def close(self) -> None:
        if self._process.stdin is not None:
            with suppress(BrokenPipeError):  # it died with work unsent
                self._process.stdin.close()
        self._process.wait()


def run_in_workers(
    function: Callable[..., Any], arguments: Sequence[tuple[Any, ...]], workers: int, batch: int
) -> Iterator[Any]:
    """`function(*each)` for each of `arguments`, in order, computed by `workers` worker
    processes `batch` at a time. `function` must be importable by name (module level).
    """
    batches = [arguments[start : start + batch] for start in range(0, len(arguments), batch)]
    started = [_Worker() for _ in range(workers)]
    idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
    for worker in started:
        idle.put(worker)

    def run(work: Sequence[tuple[Any, ...]]) -> list[Any]:
        worker = idle.get()
        try:
            return worker.run(function, work)
        finally:
            idle.put(worker)

    # A thread per worker feeds it and waits for its results.
    threads = ThreadPoolExecutor(workers, thread_name_prefix="index-worker")
    try:
        for results in threads.map(run, batches):
            yield from results
    finally:
        # Stopped early (an error, Ctrl-C): the batches not started are dropped.
        threads.shutdown(cancel_futures=True)
        for worker in started:
            worker.close()


def serve() -> None:
    """A worker's loop: answer each batch until stdin closes or the indexer is gone."""
    # Ctrl-C reaches the whole process group: the indexer handles it, and closes the pipes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Results go to the indexer through a copy of stdout; anything printed (a log line, a
    # library's message) goes to stderr instead of into the results.
    results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    while True:
        try:
            function, batch = pickle.load(sys.stdin.buffer)
        except (EOFError, pickle.UnpicklingError):  # closed, or cut off by the indexer's end
            return
        try:
            answer = pickle.dumps((False, [function(*each) for each in batch]), -1)
        except Exception as exc:  # raised again in the indexer
            answer = pickle.dumps((True, _picklable(exc)), -1)
        try:
            results.write(answer)
            results.flush()
        except BrokenPipeError:
            os._exit(0)  # the indexer is gone: exit without flushing into the broken pipe


def _picklable(exc: Exception) -> Exception:
    try:
        pickle.dumps(exc)
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


if __name__ == "__main__":
    serve()
