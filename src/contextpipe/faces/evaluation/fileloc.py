"""File localisation on a repository's history: `contextpipe eval fileloc`.

A task is one JSON object a line: `id`, `base` (the commit to check out), `query` (an
issue-like text, such as a commit message) and `gold_files` (the files that had to
change, relative to the repository). The question it asks: checked out at `base`, given
`query`, are the gold files at the top of the assembled context?

Method (figures are only comparable when measured the same way):

1. The repository (a git repository or bundle) is cloned once into a temporary work
   folder; each task's `base` is checked out there in turn, in the tasks' order, and the
   store beside it is brought up to date incrementally (`Pipeline.index`, then
   `Pipeline.embed` unless `[embedding] enabled` is false), under the user's settings
   with the store path replaced.
2. Each task's query is assembled as a code question (`prefer_source`) at `budget`
   tokens (16,000 by default). Its files are ranked by their best fragment: by the
   highest fused score among the fragments the context holds from each, ties by the
   first position in the context.
3. Acc@k is the share of tasks whose gold files are all within the top k files
   (k = 1, 3, 5, 10); a task whose context misses a gold file counts 0 at every k.
4. The default mix is a request that names no strategy. Each loaded strategy is also
   measured alone (a request naming only it); for a task where the mix ran that strategy
   and no other, the mix's result is its own. A strategy that ran for no task has no
   figures: `not_run` says why.
5. Index time is the mean wall time per task of checking out, indexing and embedding;
   query time the mean wall time of one assembly. Figures are rounded to 4 decimals.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, cast

from contextpipe import ContextpipeError, Pipeline, StrategySelection

from ._common import json_objects, why_not
from .measure import EvalProgress

#: The budget of the assembled context whose files are ranked (as the issue measured).
FILELOC_BUDGET = 16000
#: The k of Acc@k.
ACCURACY_AT = (1, 3, 5, 10)


@dataclass(frozen=True)
class FilelocTask:
    """One question: at commit `base`, which files does `query` need changed?"""

    id: str
    base: str
    query: str
    gold_files: tuple[str, ...]


def read_tasks(path: Path, limit: int | None = None) -> list[FilelocTask]:
    """The tasks of a JSON-lines file, the first `limit` of them; a malformed line is an
    error naming the file, line and key.
    """
    if not path.is_file():
        raise ContextpipeError(f"{path}: no such file (a JSON-lines file of fileloc tasks)")
    tasks: list[FilelocTask] = []
    for number, record in json_objects(path):
        if limit is not None and len(tasks) >= limit:
            break
        tasks.append(_task(f"{path}:{number}", record))
    if not tasks:
        raise ContextpipeError(f"{path}: no task (one JSON object a line)")
    return tasks


def _task(where: str, record: Mapping[str, object]) -> FilelocTask:
    fields: dict[str, str] = {}
    for key in ("id", "base", "query"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ContextpipeError(f'{where}: "{key}" must be a non-empty string')
        fields[key] = value
    gold = record.get("gold_files")
    if (
        not isinstance(gold, list)
        or not gold
        or not all(isinstance(item, str) and item for item in cast(list[object], gold))
    ):
        raise ContextpipeError(f'{where}: "gold_files" must be a non-empty list of paths')
    return FilelocTask(fields["id"], fields["base"], fields["query"], tuple(cast(list[str], gold)))


@dataclass(frozen=True)
class LocFigures:
    """What one configuration scored over the tasks."""

    tasks: int
    accuracy: Mapping[int, float]
    query_ms: float

    def as_json(self) -> dict[str, int | float]:
        """The figures under the keys of `contextpipe eval fileloc --format json`."""
        shares = {f"acc@{k}": share for k, share in self.accuracy.items()}
        return {"tasks": self.tasks, **shares, "query_ms_per_task": self.query_ms}


@dataclass(frozen=True)
class FilelocEvaluation:
    """The default mix's figures, each strategy's alone, why some have none, and the mean
    index time per task.
    """

    mix: LocFigures
    per_strategy: Mapping[str, LocFigures]
    not_run: Mapping[str, str]
    index_seconds: float

    def as_json(self) -> dict[str, object]:
        """`contextpipe eval fileloc --format json`."""
        per_strategy = {name: figures.as_json() for name, figures in self.per_strategy.items()}
        return {
            **self.mix.as_json(),
            "index_seconds_per_task": self.index_seconds,
            "per_strategy": per_strategy,
            "not_run": dict(self.not_run),
        }


class _Outcome(NamedTuple):
    """One task under one configuration: its ranked files, the time it took, the
    strategies that ran (status ok) and every strategy's (status, reason).
    """

    files: tuple[str, ...]
    seconds: float
    ran: frozenset[str]
    reports: Mapping[str, tuple[str, str]]


def evaluate_fileloc(
    tasks: Sequence[FilelocTask],
    repository: Path,
    config: Path | None,
    progress: EvalProgress | None = None,
    budget: int = FILELOC_BUDGET,
) -> FilelocEvaluation:
    """The figures of the default mix and of each loaded strategy alone (module rules)."""
    outcomes: dict[str, list[_Outcome]] = {}
    index_seconds = 0.0
    if progress is not None:
        progress.started("tasks", len(tasks))
    with _work_folder(repository) as work:
        store = work.parent / "store"
        pipeline = Pipeline.open(store=store, config=config, project_dir=work)
        try:
            names = [registered.strategy.name for registered in pipeline.strategies]
            for task in tasks:
                index_seconds += _check_out(pipeline, work, task)
                mix = _outcome(pipeline, task, budget, None)
                outcomes.setdefault("", []).append(mix)
                for name in names:
                    alone = (
                        mix
                        if mix.ran == frozenset({name})
                        else _outcome(pipeline, task, budget, name)
                    )
                    outcomes.setdefault(name, []).append(alone)
                if progress is not None:
                    progress.advance()
        finally:
            pipeline.close()
    per_strategy: dict[str, LocFigures] = {}
    not_run: dict[str, str] = {}
    for name in names:
        if any(name in outcome.ran for outcome in outcomes[name]):
            per_strategy[name] = _figures(tasks, outcomes[name])
        else:
            not_run[name] = why_not(name, (o.reports for o in outcomes[name]))
    return FilelocEvaluation(
        _figures(tasks, outcomes[""]),
        per_strategy,
        not_run,
        round(index_seconds / len(tasks), 4),
    )


def _git(*arguments: str) -> None:
    """Run git; a failure is a `ContextpipeError` with git's last line of complaint."""
    done = subprocess.run(["git", *arguments], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        problem = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise ContextpipeError(problem)


@contextmanager
def _work_folder(repository: Path) -> Generator[Path]:
    """A temporary folder holding a clone of `repository` (nothing checked out yet) in
    `repository/` and the store in `store/`; it goes when the block ends.
    """
    if not repository.exists():
        raise ContextpipeError(f"{repository}: no such git repository or bundle")
    with tempfile.TemporaryDirectory(prefix="contextpipe-fileloc-") as folder:
        checkout = Path(folder) / "repository"
        try:
            _git("clone", "--quiet", "--no-checkout", str(repository), str(checkout))
        except ContextpipeError as exc:
            raise ContextpipeError(
                f"{repository}: not a git repository or bundle ({exc})"
            ) from None
        yield checkout


def _check_out(pipeline: Pipeline, work: Path, task: FilelocTask) -> float:
    """Check out the task's base and bring the store up to date; the seconds it took."""
    started = time.perf_counter()
    try:
        _git("-C", str(work), "checkout", "--quiet", "--force", "--detach", task.base)
        _git("-C", str(work), "clean", "--quiet", "-fdx")
    except ContextpipeError as exc:
        raise ContextpipeError(f"task {task.id}: base {task.base}: {exc}") from None
    pipeline.index([work])
    if pipeline.settings.embedding.enabled:
        pipeline.embed()
    return time.perf_counter() - started


def _outcome(pipeline: Pipeline, task: FilelocTask, budget: int, alone: str | None) -> _Outcome:
    selection = None if alone is None else {alone: StrategySelection()}
    started = time.perf_counter()
    context = pipeline.assemble(task.query, budget=budget, strategies=selection, prefer_source=True)
    seconds = time.perf_counter() - started
    best: dict[str, tuple[float, int]] = {}
    for position, fragment in enumerate(context.fragments):
        path = fragment.source.path
        earlier = best.get(path)
        if earlier is None or fragment.score > earlier[0]:
            best[path] = (fragment.score, earlier[1] if earlier else position)
    files = tuple(sorted(best, key=lambda path: (-best[path][0], best[path][1])))
    reports = {r.name: (r.status, r.reason) for r in context.strategies}
    ran = frozenset(name for name, (status, _) in reports.items() if status == "ok")
    return _Outcome(files, seconds, ran, reports)


def _figures(tasks: Sequence[FilelocTask], outcomes: Sequence[_Outcome]) -> LocFigures:
    count = len(tasks)
    accuracy: dict[int, float] = {}
    for k in ACCURACY_AT:
        found = sum(
            set(task.gold_files) <= set(outcome.files[:k])
            for task, outcome in zip(tasks, outcomes, strict=True)
        )
        accuracy[k] = round(found / count, 4)
    query_ms = round(1000 * sum(o.seconds for o in outcomes) / count, 4)
    return LocFigures(count, accuracy, query_ms)
