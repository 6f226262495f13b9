"""The plugin contract every retrieval strategy fulfils."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..core.models import Candidate, ContextRequest
from .capabilities import Backends

#: The longest note a report keeps of a strategy's `Retrieved.note` (characters).
NOTE_LIMIT = 200


@dataclass(frozen=True)
class Retrieved:
    """What `retrieve` may return instead of a bare list of candidates: the candidates,
    best first, and a short note for the strategy's report, for what a user should know
    about the run that no candidate's reason can say (a focus that names nothing, a
    fallback taken). The note becomes the reason of an `ok` report, one line of at most
    `NOTE_LIMIT` characters (longer notes are cut); the candidates are checked like a
    bare list.
    """

    candidates: Sequence[Candidate]
    note: str = ""


@runtime_checkable
class ContextStrategy(Protocol):
    """A retrieval strategy. `retrieve` may be a plain or an `async` method: the executor
    runs plain ones in worker threads and awaits async ones on its event loop.

    Three members are optional, so not part of the protocol: `options` (its validated
    options model, which `config init` writes), `default_weight` (a finite number >= 0,
    the weight it runs with when `[strategies.NAME] weight` is unset; 1 when absent) and
    `prepare` (see `Preparing`).
    """

    @property
    def name(self) -> str:
        """Unique name, used in config (`[strategies.NAME]`) and reports."""
        ...

    @property
    def quality(self) -> float:
        """Prior quality in [0, 1]; scales this strategy's share of the budget."""
        ...

    @property
    def required_backends(self) -> frozenset[str]:
        """Backends it needs (`store`, `text`, ...); it is skipped when one is missing."""
        ...

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        """Confidence in [0, 1] that it has something useful; 0 means skip it."""
        ...

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate] | Retrieved | Awaitable[Sequence[Candidate] | Retrieved]:
        """Candidates, best first, whose full-text tokens fit in `budget`; or a
        `Retrieved`, the candidates with a note for the report.
        """
        ...

    def explain(self) -> str:
        """What it does and which settings it reads."""
        ...


@runtime_checkable
class Preparing(Protocol):
    """A strategy with work to do before it is asked `can_handle`, which may take long the
    first time only (once per state of the store, such as reading a graph's names): the
    executor calls `prepare` on a worker right before `can_handle`, on the same worker, and
    gives it up to half the request's deadline, so that a one-time wait never fills the
    short window `can_handle` is given, nor makes the same request's plan depend on how
    quick the machine is. What `prepare` raises, or one that is still running then (its
    strategy is then asked on another worker), is left to `can_handle` and `retrieve` to
    meet; a `prepare` that hangs counts against its strategy as a hung call does. A plain
    (not `async`) method.
    """

    def prepare(self, request: ContextRequest, backends: Backends) -> None:
        """Make ready what this request's `can_handle` and `retrieve` will read."""
        ...
