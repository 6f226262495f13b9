"""The store contract as checks any store backend can run: `check_store(NAME)` runs every
promise against the installed backend NAME (`contextpipe store check NAME` on the command
line), each on a temporary project of its own, through the store protocols only.

Each check is a named promise and comes out passed, failed (with what the store did
instead, in one line) or skipped: a check of an optional capability (graph, timeline,
sessions, vectors) the store does not offer. A backend that offers the required ones
(`store` and `text`) and passes every check keeps every promise the pipeline, ingest and
the command line rely on (docs/stores.md). The checks use the backend's default settings
but its own `[store.options]`: those of the configuration when it names the same backend,
and those given (a server backend's address, say), so that a server backend is checked
on the server it will use, and an embedded one never touches a configured store.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

from contextpipe import ContextpipeError, load_settings

from . import _files, _memory, _reads
from ._kit import BrokenPromiseError, NotOfferedError, Subject

#: Every check, in the order run: (the promise, the check).
CHECKS: list[tuple[str, Callable[[Subject], None]]] = [
    *_files.CHECKS,
    *_reads.CHECKS,
    *_memory.CHECKS,
]

#: The promise of a backend that does not even open on a new project.
_OPENS = "it opens on a new project"
#: How long a failure's line may get.
_LONGEST = 300


@dataclass(frozen=True)
class CheckResult:
    """One promise checked: `detail` is what the store did instead (failed) or the optional
    capability it does not offer (skipped).
    """

    promise: str
    outcome: Literal["passed", "failed", "skipped"]
    detail: str = ""


@dataclass(frozen=True)
class StoreCheckReport:
    """What `check_store` found, promise by promise."""

    backend: str
    results: tuple[CheckResult, ...]

    def _count(self, outcome: str) -> int:
        return sum(result.outcome == outcome for result in self.results)

    @property
    def passed(self) -> int:
        return self._count("passed")

    @property
    def failed(self) -> int:
        return self._count("failed")

    @property
    def skipped(self) -> int:
        return self._count("skipped")

    def failures(self) -> list[str]:
        """One line per broken promise: `<backend>: <promise>: <what it did instead>`."""
        return [
            f"{self.backend}: {result.promise}: {result.detail}"
            for result in self.results
            if result.outcome == "failed"
        ]

    def summary(self) -> str:
        """`N passed, M failed`, and how many were skipped when some were."""
        skipped = f", {self.skipped} skipped (capabilities not offered)" if self.skipped else ""
        return f"{self.passed} passed, {self.failed} failed{skipped}"


def installed_store_backends() -> list[str]:
    """The names of the installed store backends (entry-point group `contextpipe.stores`)."""
    return sorted({entry.name for entry in entry_points(group="contextpipe.stores")})


def check_store(
    name: str | None = None,
    config: Path | None = None,
    progress: Callable[[CheckResult], None] | None = None,
    options: Mapping[str, Any] | None = None,
) -> StoreCheckReport:
    """Check every promise of the store contract against the installed backend `name`
    (None: the one `[store] backend` of `config`, else of ./config.toml, names), telling
    `progress` each result as it comes. The backend gets the configuration's `[store.options]`
    when that names the same backend, updated with `options`. An unknown name is a
    `ContextpipeError` naming the installed backends.
    """
    configured = load_settings(config_file=config).settings.store
    backend = name or configured.backend
    installed = installed_store_backends()
    if backend not in installed:
        raise ContextpipeError(
            f"unknown store backend {backend!r}; installed: {', '.join(installed) or 'none'}"
        )
    own = {**(configured.options if backend == configured.backend else {}), **(options or {})}
    overrides = {"store.backend": backend, "store.options": own}
    results: list[CheckResult] = []
    for promise, check in CHECKS:
        result = _checked(overrides, promise, check)
        if result is None:  # it does not open: every other check would say the same
            result = CheckResult(_OPENS, "failed", _opening_failure(overrides))
            results = [result]
            if progress is not None:
                progress(result)
            break
        results.append(result)
        if progress is not None:
            progress(result)
    return StoreCheckReport(backend, tuple(results))


def _checked(
    overrides: Mapping[str, Any], promise: str, check: Callable[[Subject], None]
) -> CheckResult | None:
    """The check run on a temporary project of its own (None: the backend does not open)."""
    with tempfile.TemporaryDirectory(prefix="contextpipe-store-check-") as folder:
        try:
            subject = Subject.on_project(overrides, Path(folder) / "project")
        except Exception:
            return None
        try:
            check(subject)
        except NotOfferedError as exc:
            return CheckResult(promise, "skipped", f"the store offers no {exc}")
        except BrokenPromiseError as exc:
            return CheckResult(promise, "failed", _one_line(str(exc)))
        except Exception as exc:  # an error is a broken promise too
            return CheckResult(promise, "failed", _one_line(f"{type(exc).__name__}: {exc}"))
        finally:
            subject.close()
    return CheckResult(promise, "passed")


def _opening_failure(overrides: Mapping[str, Any]) -> str:
    with tempfile.TemporaryDirectory(prefix="contextpipe-store-check-") as folder:
        try:
            Subject.on_project(overrides, Path(folder) / "project").close()
        except Exception as exc:
            return _one_line(f"{type(exc).__name__}: {exc}")
    return "it opened only on a second try"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _LONGEST else line[: _LONGEST - 3] + "..."


__all__ = ["CHECKS", "CheckResult", "StoreCheckReport", "check_store", "installed_store_backends"]
