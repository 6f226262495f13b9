"""Steps for the store contract (`store_contract.feature`): `contextpipe store check` run
against the bundled backends, and against broken ones installed as throwaway plugins.

The broken backends are the memory store with one flaw each. They reach into its private
classes, as no real backend would: a flaw is then one method, and what fails is exactly
the promise that flaw breaks.
"""

from __future__ import annotations

import re

from behave import given, then, when
from behave.runner import Context
from testkit import install_distribution

from contextpipe import Pipeline
from contextpipe.stores.check import CHECKS

_PLUGIN = """
from contextlib import contextmanager

import contextpipe.stores.memory.backend as memory
from contextpipe import Backends, RequestScope, hookimpl


class FlawedStore(memory.MemoryStore):
{flaw}


class FlawedBackend(memory.MemoryBackend):
    name = "{backend}"

    def open(self, settings, project_dir):
        opened = super().open(settings, project_dir)
        return FlawedStore(
            (project_dir / settings.store.path).resolve(), opened.pinned, opened.assemblies
        )


@hookimpl
def contextpipe_stores():
    return [FlawedBackend()]
"""

#: Each flaw: what the memory store does instead, as the methods of `FlawedStore`.
_FLAWS = {
    # Reads that take a strategy's filters as they come, instead of narrowing them to the
    # view's scope: a request of one session asking for another's memory is given it.
    "trusting the session a strategy's filters name": """
    def backends(self, scope=None):
        offered = super().backends(scope)
        if offered.fragments is None:
            return offered
        reads = Trusting(self, scope or RequestScope())
        return Backends(fragments=reads, text=reads, graph=offered.graph,
                        timeline=reads, sessions=reads)


class Trusting(memory._Reads):
    def _seen(self, filters):
        filters = filters or self._scope.narrow(None)
        held = self._store.place.held
        texts = [] if held is None else [t for t in held.texts() if memory._visible(t, filters)]
        return texts, filters
""",
    # A commit that keeps the changes for the session's end: a failure later loses them.
    "committing only when a write session ends": """
    @contextmanager
    def writer(self):
        with self.place.writing:
            writer = Forgetful(self.place)
            yield writer
            memory._Writer.commit(writer)


class Forgetful(memory._Writer):
    def commit(self):
        pass
""",
    # The required capabilities only: no graph, timeline, sessions or vectors to search.
    "offering only fragment lookup and text search": """
    def backends(self, scope=None):
        offered = super().backends(scope)
        return Backends(fragments=offered.fragments, text=offered.text)

    def vector_index(self, space, scope=None):
        return None
""",
}


@given('the installed store plugin "{backend}": the memory store, but {flaw}')
def flawed_store(context: Context, backend: str, flaw: str) -> None:
    assert flaw in _FLAWS, f"no such flaw: {flaw!r}; known: {sorted(_FLAWS)}"
    source = _PLUGIN.replace("{flaw}", _FLAWS[flaw]).replace("{backend}", backend)
    install_distribution(context, backend, f"{backend}_store", source, "contextpipe.stores")


_KEYED = """
from pydantic import BaseModel, ConfigDict

import contextpipe.stores.memory.backend as memory
from contextpipe import ContextpipeError, hookimpl, store_options


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str


class KeyedBackend(memory.MemoryBackend):
    name = "{backend}"

    def open(self, settings, project_dir):
        if store_options(settings, Options).token != "{token}":
            raise ContextpipeError("store.options.token: the server refuses it")
        return super().open(settings, project_dir)


@hookimpl
def contextpipe_stores():
    return [KeyedBackend()]
"""


@given(
    'the installed store plugin "{backend}": the memory store, opening only with the option'
    ' token = "{token}", as a server would'
)
def keyed_store(context: Context, backend: str, token: str) -> None:
    source = _KEYED.replace("{backend}", backend).replace("{token}", token)
    install_distribution(context, backend, f"{backend}_store", source, "contextpipe.stores")


_SUMMARY = re.compile(
    r"(\d+) passed, (\d+) failed(?:, (\d+) skipped \(capabilities not offered\))?"
)


def _outcome(context: Context) -> tuple[int, int, int, list[str]]:
    """Passed, failed and skipped as the last line says, and the lines before it."""
    *lines, last = context.done.stdout.splitlines() or [""]
    found = _SUMMARY.fullmatch(last)
    assert found, f"the last line is {last!r}: {context.done.stderr}"
    passed, failed, skipped = (int(group or 0) for group in found.groups())
    assert passed + failed + skipped == len(CHECKS), f"{last!r}, and there are {len(CHECKS)} checks"
    return passed, failed, skipped, lines


@then("every check of the store contract passed")
def every_check_passed(context: Context) -> None:
    passed, _, _, lines = _outcome(context)
    assert context.done.returncode == 0, f"exit {context.done.returncode}: {lines}"
    assert passed == len(CHECKS) and not lines, context.done.stdout


@then("every check of the store contract passed but those of the capabilities not offered, skipped")
def passed_but_skipped(context: Context) -> None:
    passed, failed, skipped, lines = _outcome(context)
    assert context.done.returncode == 0, f"exit {context.done.returncode}: {lines}"
    assert failed == 0 and skipped > 0, context.done.stdout
    assert passed + skipped == len(CHECKS), f"{len(CHECKS)} checks: {context.done.stdout}"


@then('the check "{promise}" failed, saying "{words}"')
def check_failed(context: Context, promise: str, words: str) -> None:
    _, failed, _, lines = _outcome(context)
    assert context.done.returncode == 1, f"exit {context.done.returncode}"
    assert failed >= 1, context.done.stdout
    backend = context.done.args[-1]
    start = f"{backend}: {promise}: "
    said = [line for line in lines if line.startswith(start)]
    assert said, f"no line starts {start!r}: {lines}"
    assert words in said[0], f"{words!r} not in {said[0]!r}"
    context.failed_lines = lines


@then("only that check failed")
def only_that_failed(context: Context) -> None:
    _, failed, _, lines = _outcome(context)
    assert failed == 1 and len(lines) == 1, lines


@when(
    'the project is indexed into the "{backend}" store and asked for "{query}" as session'
    ' "{session}"'
)
def ask_store(context: Context, backend: str, query: str, session: str) -> None:
    pipeline = Pipeline.open(
        project_dir=context.project, overrides={"store.backend": backend}, environ={}
    )
    context.add_cleanup(pipeline.close)
    pipeline.index([context.project])
    context.error = None
    context.result = pipeline.assemble(query, budget=2000, session=session)


@then("the strategies' reports say:")
def reports_say(context: Context) -> None:
    reports = {report.name: report for report in context.result.strategies}
    for row in context.table:
        report = reports[row["strategy"]]
        assert report.status == row["status"], f"{report.name}: {report.status} {report.reason}"
        assert row["reason"] in (report.reason or ""), f"{report.name}: {report.reason!r}"


@then('the check says "{backend}" does not open, saying "{words}"')
def does_not_open(context: Context, backend: str, words: str) -> None:
    *lines, last = context.done.stdout.splitlines() or [""]
    assert context.done.returncode == 1, f"exit {context.done.returncode}: {context.done.stdout}"
    assert last == "0 passed, 1 failed", context.done.stdout
    assert len(lines) == 1 and lines[0].startswith(f"{backend}: it opens on a new project: "), lines
    assert words in lines[0], f"{words!r} not in {lines[0]!r}"
