"""Helpers shared by the step modules: the scenario's project folder and pipeline, scripted
strategies registered through pluggy hook implementations, and named fragments.

Every scenario works in its own temporary folder (see `environment.py`); nothing is written
into the repository.
"""

from __future__ import annotations

import gc
import importlib
import os
import shutil
import subprocess
import sys
import tomllib
import types
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import parse
from behave import register_type
from behave.runner import Context

from contextpipe import (
    AssembledContext,
    Backends,
    Candidate,
    ContextFragment,
    ContextpipeError,
    ContextRequest,
    Pipeline,
    ResultFragment,
    Settings,
    SourceRef,
    get_tokenizer,
    hookimpl,
)
from contextpipe.core.models import DetailDepth, content_hash, fragment_id
from contextpipe.ingest.indexer import IndexSummary

#: A small documentation set and some code, as a user would index it.
SAMPLE_FILES: dict[str, str] = {
    "docs/budget.md": """\
# Token budgets

contextpipe never exceeds the token budget of a request.

## How the budget is split

The BudgetAllocator splits the usable budget between strategies in proportion to
weight times quality times confidence, with floors and caps from config.toml.

## Leftovers

Tokens a strategy does not use go back to the pool, and the packer fills the budget.
""",
    "docs/strategies.md": """\
# Strategies

Each strategy proposes fragments for a request; the executor runs them concurrently.

## Keyword search

The simple-keyword strategy searches the text index with BM25 and is the fallback.
""",
    "docs/notes.txt": """\
A naïve split of the token budget gives every strategy the same share — 日本語 too.

Fusion merges what several strategies proposed and keeps their provenance.
""",
    "src/allocator.py": '''\
"""Share a token budget between strategies."""

LIMIT = 3


def split_budget(budget: int, weights: dict[str, float]) -> dict[str, int]:
    """Split the budget in proportion to the weights (when budget < 0 & weights: error)."""
    total = sum(weights.values())
    return {name: int(budget * weight / total) for name, weight in weights.items()}


class BudgetAllocator:
    """Floors, caps and leftovers for the token budget."""

    def allocate(self, budget: int) -> int:
        return budget
''',
}

#: Nodes of the sample files, used where a scenario needs URIs the store knows.
SAMPLE_URIS: tuple[str, ...] = (
    "uko://doc/docs/budget.md#token-budgets",
    "uko://doc/docs/budget.md#how-the-budget-is-split",
    "uko://doc/docs/budget.md#leftovers",
    "uko://doc/docs/strategies.md#keyword-search",
    "uko://code/src/allocator.py#split_budget",
    "uko://code/src/allocator.py#BudgetAllocator",
)

DEFAULT_TOKENIZER = "o200k_base"


@parse.with_pattern(r"ok|timeout|skipped|error")
def _status(text: str) -> str:
    return text


@parse.with_pattern(r"ok|broken|disabled")
def _plugin_status(text: str) -> str:
    return text


@parse.with_pattern(r"markdown|xml|json|messages")
def _output(text: str) -> str:
    return text


# `{status:Status}` in a step matches only a strategy status, so steps cannot overlap.
register_type(Status=_status, PluginStatus=_plugin_status, Output=_output)


def toml_value(raw: str) -> Any:
    """A value as config.toml would read it (`200`, `0.5`, `"text"`, `["a"]`)."""
    return tomllib.loads(f"value = {raw}")["value"]


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write text files under `root`, creating folders as needed."""
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


# -- the scenario's pipeline ---------------------------------------------------------------


#: Deadlines and time limits no busy machine runs into. What a scenario asks of a strategy
#: must not depend on how loaded the machine is: a process's first request imports faiss
#: and loads a model inside its strategy's deadline (half a second on a quiet machine,
#: seconds on a busy one), the navigator's first walk waits for the graph's edges within
#: its total limit, and a plugin's import is bounded. Scenarios about deadlines and limits
#: set their own, which win.
UNHURRIED: dict[str, object] = {
    "executor.deadline_ms": 120_000,
    "executor.strategy_deadline_ms": 60_000,
    "plugins.load_timeout_ms": 60_000,
    "strategies.breadth-depth-navigator.options.time_limit_ms": 30_000,
    "strategies.breadth-depth-navigator.options.total_limit_ms": 50_000,
}


def unhurried(overrides: dict[str, Any]) -> dict[str, Any]:
    """`overrides` over the deadlines no busy machine runs into (`UNHURRIED`)."""
    return {**UNHURRIED, **overrides}


def pipeline(context: Context) -> Pipeline:
    """The scenario's pipeline, opened on first use with its overrides and environment."""
    if context.pipeline is None:
        context.pipeline = Pipeline.open(
            project_dir=context.project,
            overrides=unhurried(context.overrides),
            environ=dict(context.environ),
        )
        context.add_cleanup(context.pipeline.close)
    return context.pipeline


def require_closed_pipeline(context: Context, what: str) -> None:
    """Settings must be given before the pipeline opens; say so when a scenario is misordered."""
    if context.pipeline is not None:
        raise AssertionError(f"{what} must come before the pipeline is opened")


def result(context: Context) -> AssembledContext:
    """The last assembled context; re-raise the error if the assembly failed."""
    if context.error is not None:
        raise AssertionError(
            f"the assembly failed: {type(context.error).__name__}: {context.error}"
        ) from context.error
    assert context.result is not None, "no context was assembled"
    return context.result


def assemble(context: Context, request: ContextRequest | str, **fields: Any) -> None:
    """Assemble (a request, or a query with fields, as `Pipeline.assemble` takes them),
    keeping the result or the error for the Then steps. How long it took is not kept: no
    scenario asserts a wall-clock bound, which a busy machine can break.
    """
    context.result, context.error = None, None
    try:
        context.result = pipeline(context).assemble(request, **fields)
    except Exception as exc:  # the Then steps say whether an error was expected
        context.error = exc


def left_for_the_collector(context: Context, run: Callable[[], None]) -> None:
    """Run `run` with the collector off, and keep in `context.cycles` what it left in
    reference cycles, by type: garbage only a full collection frees, in a pause that
    stops every request of the process (40-50 ms per request seen in a service).
    Only what `run` made counts: an earlier scenario's objects that became garbage
    meanwhile (its worker finishing late, or leaving after its idle minute) are not
    `run`'s, and made this flaky on a busy machine.
    """
    gc.collect()
    older = {id(found) for found in gc.get_objects()}
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collection finds is kept, to be named
    try:
        run()
        gc.collect()
        context.cycles = Counter(_named(found) for found in gc.garbage if id(found) not in older)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _named(found: object) -> str:
    """A garbage object's type, and a frame's function: where the cycle was made."""
    if isinstance(found, types.FrameType):
        return f"frame of {found.f_code.co_qualname}"
    return type(found).__qualname__


def report(context: Context, name: str) -> Any:
    """The strategy report called `name` in the last context."""
    for strategy_report in result(context).strategies:
        if strategy_report.name == name:
            return strategy_report
    names = [r.name for r in result(context).strategies]
    raise AssertionError(f"no report for strategy {name!r}; reports: {names}")


# -- fragments -----------------------------------------------------------------------------


def make_fragment(
    uri: str,
    text: str,
    path: str,
    start_line: int,
    end_line: int,
    depth: DetailDepth = 9,
    metadata: dict[str, str] | None = None,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> ContextFragment:
    """A fragment with an honest token count and content hash."""
    return ContextFragment(
        id=fragment_id(uri, depth),
        uko_uri=uri,
        detail_depth=depth,
        text=text,
        token_count=get_tokenizer(tokenizer).count(text),
        source=SourceRef(
            uri=uri, path=path, start_line=start_line, end_line=end_line, kind="section"
        ),
        content_hash=content_hash(text),
        metadata=metadata or {},
    )


def fragments_from_table(context: Context) -> list[ContextFragment]:
    """Fragments from a `| fragment | path | lines | text |` table, remembered by name."""
    fragments: list[ContextFragment] = []
    for row in context.table:
        name, path = row["fragment"], row["path"]
        start, _, end = row["lines"].partition("-")
        depth: DetailDepth = 9
        if "depth" in row.headings:
            depth = cast(DetailDepth, int(row["depth"]))
        fragment = make_fragment(
            f"uko://doc/{path}#{name}", row["text"], path, int(start), int(end or start), depth
        )
        context.fragments.setdefault(name, fragment)
        fragments.append(fragment)
    return fragments


def named(context: Context, name: str) -> ContextFragment:
    """A fragment a scenario named in a table."""
    try:
        return context.fragments[name]
    except KeyError:
        raise AssertionError(f"no fragment named {name!r} in this scenario") from None


def in_context(context: Context, name: str) -> ResultFragment | None:
    """The result fragment for the node of the named fragment, if it was packed."""
    uri = named(context, name).uko_uri
    return next((f for f in result(context).fragments if f.uko_uri == uri), None)


def names_in_context(context: Context) -> list[str]:
    """Names of the scenario's fragments in the order the context holds them."""
    by_uri = {fragment.uko_uri: name for name, fragment in context.fragments.items()}
    return [by_uri.get(f.uko_uri, f.uko_uri) for f in result(context).fragments]


# -- scripted strategies -------------------------------------------------------------------

Behaviour = Callable[[ContextRequest, int], object]


def propose(fragments: Sequence[ContextFragment]) -> Behaviour:
    """A behaviour proposing these fragments, best first."""

    def behaviour(request: ContextRequest, budget: int) -> list[Candidate]:
        return [
            Candidate(fragment=f, score=float(len(fragments) - rank), reason=f"scripted #{rank}")
            for rank, f in enumerate(fragments, start=1)
        ]

    return behaviour


@dataclass
class ScriptedStrategy:
    """A strategy whose `retrieve` does whatever the scenario scripted."""

    name: str
    behaviour: Behaviour
    quality: float = 1.0
    confidence: float = 1.0
    required_backends: frozenset[str] = field(default_factory=frozenset[str])
    calls: list[int] = field(default_factory=list[int])

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return self.confidence

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> object:
        self.calls.append(budget)
        return self.behaviour(request, budget)

    def explain(self) -> str:
        return f"{self.name}: a strategy scripted by a scenario"


class ScriptedAsyncStrategy(ScriptedStrategy):
    """A scripted strategy whose `retrieve` is an `async def` running the behaviour."""

    async def retrieve(  # type: ignore[override]
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> object:
        return super().retrieve(request, backends, budget)


class StrategiesPlugin:
    """A plugin object whose hook implementation returns what `provide` returns."""

    def __init__(self, provide: Callable[[], object]) -> None:
        self._provide = provide

    @hookimpl
    def contextpipe_strategies(self, settings: Settings) -> object:
        return self._provide()


def plugin_of(strategies: Iterable[object]) -> StrategiesPlugin:
    """A well-behaved plugin providing these strategies."""
    provided = list(strategies)
    return StrategiesPlugin(lambda: provided)


def register_strategy(context: Context, strategy: object, plugin_name: str | None = None) -> None:
    """Register one strategy through its own plugin (named `<strategy>-plugin`)."""
    name = str(getattr(strategy, "name", "strategy"))
    info = pipeline(context).registry.register(
        plugin_of([strategy]), plugin_name or f"{name}-plugin"
    )
    assert info.status == "ok", f"{info.name} did not register: {info.error}"


# -- installed distributions ---------------------------------------------------------------


def install_distribution(
    context: Context,
    distribution: str,
    module: str,
    source: str,
    group: str = "contextpipe.strategies",
) -> None:
    """Make `distribution` look installed until the scenario ends: a module plus a dist-info
    folder declaring its entry point in `group`, in the run's site folder (on sys.path for
    the whole run, see environment.py), removed with its compiled copy afterwards.
    """
    site: Path = context.site
    source_file = site / f"{module}.py"
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    context.add_cleanup(_uninstall, source_file, info)
    source_file.write_text(source, encoding="utf-8")
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{group}]\n{distribution} = {module}\n", encoding="utf-8"
    )
    importlib.invalidate_caches()
    context.installed = True
    context.add_cleanup(sys.modules.pop, module, None)


def _uninstall(source_file: Path, info: Path) -> None:
    """Remove a throwaway plugin: its module, its compiled copies (a later scenario may
    write another module of the same name within the same second) and its dist-info.
    """
    source_file.unlink(missing_ok=True)
    for compiled in (source_file.parent / "__pycache__").glob(f"{source_file.stem}.*.pyc"):
        compiled.unlink(missing_ok=True)
    shutil.rmtree(info, ignore_errors=True)
    importlib.invalidate_caches()


# -- indexing and the UKO graph ------------------------------------------------------------


def index_project(context: Context, folder: str = "") -> None:
    """Index the project (or one of its folders), keeping the summary or the error for the
    Then steps the way `index_steps.py` does.
    """
    context.index_error = None
    try:
        (context.summary,) = pipeline(context).index([context.project / folder])
    except ContextpipeError as exc:
        context.index_error = exc


def index_summary(context: Context) -> IndexSummary:
    """The summary `index_project` kept, after checking that its file counts add up: every
    file seen is indexed, unchanged or skipped.
    """
    assert context.index_error is None, f"indexing failed: {context.index_error}"
    summary: IndexSummary = context.summary
    parts = summary.indexed + summary.unchanged + len(summary.skipped_files)
    assert summary.files_seen == parts, f"seen {summary.files_seen} != {parts}: {summary}"
    return summary


def set_mtime(path: Path, when: datetime) -> None:
    """Give a file this modification time (and access time)."""
    stamp = int(when.timestamp() * 1_000_000_000)
    os.utime(path, ns=(stamp, stamp))


def git(project: Path, *args: str, when: datetime | None = None) -> str:
    """Run git in `project` with a throwaway identity and no user or system config; commits
    made `when` carry that author and committer date.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key != "EMAIL"
    }
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if when is not None:
        env |= {"GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": when.isoformat()}
    identity = ["-c", "user.name=Scenario", "-c", "user.email=scenario@example.com"]
    done = subprocess.run(
        ["git", *identity, "-c", "commit.gpgsign=false", "-C", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"
    return done.stdout.strip()


def run_contextpipe(
    context: Context, args: Sequence[str], extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed `contextpipe ARGS` in the scenario's project folder, as a user runs it:
    no contextpipe settings from the calling environment, only `extra_env`.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    return subprocess.run(
        [str(Path(sys.executable).with_name("contextpipe")), *args],
        cwd=context.project,
        env={**env, **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
