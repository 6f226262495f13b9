"""Index runs started over HTTP (`POST /v1/index`), one at a time, on a thread of their
own, with their progress readable while they run (`GET /v1/jobs/{id}`).

Only the roots `[service] index_roots` names may be indexed: a request names one of them
as written there, and no other path is ever read on an API call's behalf.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ... import ContextpipeError, Pipeline


class JobRefusedError(ContextpipeError):
    """The root is not one the configuration allows (403), or a run is going on (409)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class IndexJobs:
    def __init__(self, pipeline: Pipeline, roots: list[str]) -> None:
        self._pipeline = pipeline
        self._roots = roots
        self._jobs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def start(self, root: str) -> dict[str, Any]:
        """A new job indexing `root`, one of the configured roots, running."""
        if root not in self._roots:
            allowed = ", ".join(self._roots) or "none (set [service] index_roots)"
            raise JobRefusedError(
                403, f"root {root!r} is not one of service.index_roots: {allowed}"
            )
        with self._lock:
            if any(job["status"] == "running" for job in self._jobs.values()):
                raise JobRefusedError(409, "an index run is going on; wait for its job to end")
            job: dict[str, Any] = {
                "id": uuid.uuid4().hex,
                "root": root,
                "status": "running",
                "files_total": 0,
                "files_done": 0,
                "summary": None,
                "error": None,
            }
            self._jobs[job["id"]] = job
        path = Path(self._pipeline.loaded.project_dir) / root
        threading.Thread(target=self._run, args=(job, path), daemon=True).start()
        return dict(job)

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return dict(job) if job is not None else None

    def _run(self, job: dict[str, Any], path: Path) -> None:
        progress = _Progress(job, self._lock)
        try:
            [summary] = self._pipeline.index([path], progress)
            found = {**asdict(summary), "skipped_files": len(summary.skipped_files)}
            done = {"status": "done", "summary": found}
        except Exception as exc:  # a job that fails says so, never stays "running"
            error = (
                str(exc) if isinstance(exc, ContextpipeError) else f"{type(exc).__name__}: {exc}"
            )
            done = {"status": "failed", "error": error}
        with self._lock:
            job.update(done)


class _Progress:
    def __init__(self, job: dict[str, Any], lock: threading.Lock) -> None:
        self._job = job
        self._lock = lock

    def started(self, root: str, total: int, /) -> None:
        with self._lock:
            self._job["files_total"] = total

    def file(self, path: str, /) -> None:
        with self._lock:
            self._job["files_done"] += 1
