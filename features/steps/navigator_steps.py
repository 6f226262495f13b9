"""Steps of code navigation and code questions: focus, the navigator's options, query
analysis, code mentions and source roles.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from behave import given, then, when
from behave.runner import Context
from testkit import assemble, pipeline, result, toml_value

from contextpipe import (
    Backends,
    ContextRequest,
    GraphView,
    RequestScope,
    ResultFragment,
    StoreError,
    StrategySelection,
    code_mentions,
    query_terms,
    source_role,
)

NAVIGATOR = "breadth-depth-navigator"

_LONG_ISSUE = """<!-- Thank you for reporting a bug: https://example.com/guide -->
### Describe the bug
A clear and concise description of what the bug is, as the template asks of every report.
- [x] I searched the tracker before filing this report and found nothing similar at all
- OS version: Ubuntu 22.04.3
Python 3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0] on linux
Type "help", "copyright", "credits" or "license" for more information.
The widths of columns come out wrong when a row of the table is empty: render_table
"""


def _only(name: str) -> dict[str, StrategySelection]:
    return {name: StrategySelection()}


@given('the navigator option "{key}" is {value}')
def navigator_option(context: Context, key: str, value: str) -> None:
    _reopened_with(context, f"strategies.{NAVIGATOR}.options.{key}", toml_value(value))


class _SlowEdges:
    """A graph whose edges are ready `delay` seconds after they are first asked for, as a
    large repository's are in a new process, or (`delay` None) once `released` is set; its
    nodes and names are ready at once.
    """

    def __init__(
        self, inner: GraphView, delay: float | None, released: threading.Event | None = None
    ) -> None:
        self._inner, self._delay = inner, delay
        self._released = released or threading.Event()
        self._ready = threading.Event()

    def _edges(self) -> GraphView:
        if not self._ready.is_set():
            self._released.wait(self._delay)
            self._ready.set()
        return self._inner

    def neighbours(self, *args: Any, **kwargs: Any) -> Any:
        return self._edges().neighbours(*args, **kwargs)

    def subgraph(self, *args: Any, **kwargs: Any) -> Any:
        return self._edges().subgraph(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # node, lookup, stats: no edges needed
        return getattr(self._inner, name)


class _FailingEdges:
    """A graph whose edges cannot be read (a store damaged under a running service)."""

    def __init__(self, inner: GraphView, message: str) -> None:
        self._inner, self._message = inner, message

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreError(self._message)

    neighbours = subgraph = _fail

    def __getattr__(self, name: str) -> Any:  # node, lookup, stats: no edges needed
        return getattr(self._inner, name)


class _SlowNames:
    """A graph whose names are ready `delay` seconds after they are first looked up, as a
    large repository's are in a new process.
    """

    def __init__(self, inner: GraphView, delay: float) -> None:
        self._inner, self._delay = inner, delay
        self._lock = threading.Lock()
        self._ready = False

    def lookup(self, name: str) -> Any:
        with self._lock:  # a second caller waits for the same load
            if not self._ready:
                time.sleep(self._delay)
                self._ready = True
        return self._inner.lookup(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@given("the graph's edges take {seconds:g} seconds to be ready")
def slow_edges(context: Context, seconds: float) -> None:
    _slow_graph(context, lambda graph: _SlowEdges(graph, seconds))


@given("the graph's edges are not ready before the scenario ends")
def edges_never_ready(context: Context) -> None:
    released = threading.Event()
    context.add_cleanup(released.set)  # the thread reading them ends with the scenario
    _slow_graph(context, lambda graph: _SlowEdges(graph, None, released))


@given('the graph\'s edges fail to load with "{message}"')
def failing_edges(context: Context, message: str) -> None:
    _slow_graph(context, lambda graph: _FailingEdges(graph, message))
    # Every thread that ends with an error from now on, as threading would print it.
    context.thread_errors = []
    previous = threading.excepthook
    threading.excepthook = lambda args: context.thread_errors.append(
        f"{args.thread.name if args.thread else '?'}: {args.exc_value!r}"
    )
    context.add_cleanup(setattr, threading, "excepthook", previous)


@then("no thread ended with an error")
def no_thread_errors(context: Context) -> None:
    # A thread still reading would end after this step: wait for the navigator's own.
    for thread in threading.enumerate():
        if thread.name == "navigator-edges":
            thread.join(5)
    assert not context.thread_errors, f"threads ended with errors: {context.thread_errors}"


@given("the graph's names take {seconds:g} seconds to be ready")
def slow_names(context: Context, seconds: float) -> None:
    _slow_graph(context, lambda graph: _SlowNames(graph, seconds))


def _slow_graph(context: Context, slowed: Callable[[GraphView], object]) -> None:
    """The store's graph, as every request from now on sees it, made slow."""
    store = pipeline(context).store
    backends: Callable[[RequestScope | None], Backends] = store.backends
    graphs: dict[int, object] = {}  # one slow graph per graph, as a process keeps one

    def slow(scope: RequestScope | None = None) -> Backends:
        offered = backends(scope)
        assert offered.graph is not None, "the store offers no graph"
        if id(offered.graph) not in graphs:
            graphs[id(offered.graph)] = slowed(offered.graph)
        return dataclasses.replace(offered, graph=graphs[id(offered.graph)])

    store.backends = slow  # type: ignore[method-assign]


@given('a file "{path}" whose function "start" calls {count:d} functions f00, f01 and on')
def file_of_callees(context: Context, path: str, count: int) -> None:
    names = [f"f{number:02d}" for number in range(count)]
    lines = ["def start():", "    return " + " + ".join(f"{name}()" for name in names), ""]
    for number, name in enumerate(names):
        lines += [
            "",
            f"def {name}():",
            f'    """Part {number} of the sum."""',
            f"    return {number}",
            "",
        ]
    (context.project / path).write_text("\n".join(lines), encoding="utf-8")


@given('a file "{path}" whose function "{name}" adds up {count:d} lines of a ledger')
def file_of_a_long_function(context: Context, path: str, name: str, count: int) -> None:
    lines = [f"def {name}(lines):", '    """Add up every line of a ledger."""', "    total = 0"]
    lines += [f"    total += lines[{n}].price * lines[{n}].count  # line {n}" for n in range(count)]
    (context.project / path).write_text("\n".join([*lines, "    return total", ""]), "utf-8")


def _proposed(context: Context) -> set[str]:
    """The nodes ("path#anchor") the last request proposed: in the context or dropped."""
    assembled = result(context)
    uris = [f.uko_uri for f in assembled.fragments] + [d.uko_uri for d in assembled.dropped]
    return {uri.split("/", 3)[3] for uri in uris}


@then('the navigator proposed "{first}" but not "{second}"')
def proposed_not(context: Context, first: str, second: str) -> None:
    proposed = sorted(_proposed(context))
    assert first in proposed and second not in proposed, f"it proposed {proposed}"


@given("the packer weighs relevance only")
def relevance_only(context: Context) -> None:
    _reopened_with(context, "packing.mmr_lambda", 1.0)


@given("the packer values a {depth} at {value:g}")
def packer_values_depth(context: Context, depth: str, value: float) -> None:
    _reopened_with(context, f"packing.depth_value_{depth}", value)


def _reopened_with(context: Context, key: str, value: object) -> None:
    """A setting override, read when the pipeline (not the store) opens again."""
    if context.pipeline is not None:
        context.pipeline.close()
        context.pipeline = None
    context.overrides[key] = value


@when('I ask for "{query}" within {budget:d} tokens focused on "{focus}" using only the navigator')
def ask_focused(context: Context, query: str, budget: int, focus: str) -> None:
    items = tuple(item.strip() for item in focus.split(","))
    request = ContextRequest(query=query, budget=budget, focus=items, strategies=_only(NAVIGATOR))
    assemble(context, request)


@when('I ask for "{query}" within {budget:d} tokens using only the navigator')
def ask_navigator(context: Context, query: str, budget: int) -> None:
    context.request = ContextRequest(query=query, budget=budget, strategies=_only(NAVIGATOR))
    assemble(context, context.request)


@when("I ask using only the navigator within {budget:d} tokens for:")
def ask_navigator_text(context: Context, budget: int) -> None:
    assemble(
        context, ContextRequest(query=context.text, budget=budget, strategies=_only(NAVIGATOR))
    )


@when('I ask for "{query}" as a code question within {budget:d} tokens using only the navigator')
def ask_navigator_code(context: Context, query: str, budget: int) -> None:
    request = ContextRequest(
        query=query, budget=budget, prefer_source=True, strategies=_only(NAVIGATOR)
    )
    assemble(context, request)


@when(
    'I ask for "{query}" as a code question within {budget:d} tokens '
    'using only the strategy "{name}"'
)
def ask_code_question(context: Context, query: str, budget: int, name: str) -> None:
    request = ContextRequest(query=query, budget=budget, prefer_source=True, strategies=_only(name))
    assemble(context, request)


@when('I ask for this within {budget:d} tokens using only the strategy "{name}":')
def ask_text(context: Context, budget: int, name: str) -> None:
    assemble(context, ContextRequest(query=context.text, budget=budget, strategies=_only(name)))


def _fragments(context: Context, node: str) -> list[ResultFragment]:
    """The context's fragments of a node named by path and anchor ("a/b.py#name"), or of a
    whole file ("a/b.py").
    """
    path, _, anchor = node.partition("#")
    return [
        fragment
        for fragment in result(context).fragments
        if fragment.source.path == path and fragment.uko_uri.partition("#")[2] == anchor
    ]


def _listing(context: Context) -> list[str]:
    return [
        f"{f.source.path}#{f.uko_uri.partition('#')[2]}@{f.detail_depth}"
        for f in result(context).fragments
    ]


@then('the context holds "{node}" at depth {depth:d}')
def holds_at_depth(context: Context, node: str, depth: int) -> None:
    depths = [fragment.detail_depth for fragment in _fragments(context, node)]
    assert depths == [depth], f"{node} is in the context at depths {depths}: {_listing(context)}"


@then('the context holds "{nodes}", each at depth {depth:d}')
def all_at_depth(context: Context, nodes: str, depth: int) -> None:
    for node in nodes.split(","):
        holds_at_depth(context, node.strip(), depth)


@then('the context holds "{node}"')
def holds_node(context: Context, node: str) -> None:
    assert _fragments(context, node), f"{node} is not in the context: {_listing(context)}"


@then('the text of "{node}" takes at most a {share:d}th of the {budget:d} tokens')
def share_of_node(context: Context, node: str, share: int, budget: int) -> None:
    used = sum(fragment.token_count for fragment in _fragments(context, node))
    assert used <= budget / share, f"{node} takes {used} tokens: {_listing(context)}"


@then('the context does not hold "{node}"')
def lacks_node(context: Context, node: str) -> None:
    assert not _fragments(context, node), f"{node} is in the context: {_listing(context)}"


def _reason(context: Context, node: str) -> str:
    fragments = _fragments(context, node)
    assert fragments, f"{node} is not in the context: {_listing(context)}"
    reasons = [p.reason for p in fragments[0].provenance]
    assert len(reasons) == 1, f"{node} has {len(reasons)} reasons: {reasons}"
    return reasons[0]


@then('the reason of "{node}" is "{text}"')
def reason_is(context: Context, node: str, text: str) -> None:
    reason = _reason(context, node).split("; score ")[0]
    assert reason == text, f"the reason of {node} is {reason!r}"


@then('the reason of "{node}" mentions "{text}"')
def reason_mentions(context: Context, node: str, text: str) -> None:
    reason = _reason(context, node)
    assert text in reason, f"the reason of {node} is {reason!r}"


@then('"{first}" comes before "{second}" in the navigator\'s list')
def comes_before(context: Context, first: str, second: str) -> None:
    ranks: dict[str, int] = {}
    for fragment in result(context).fragments:
        node = f"{fragment.source.path}#{fragment.uko_uri.partition('#')[2]}".rstrip("#")
        for vote in fragment.provenance:
            if vote.strategy == NAVIGATOR:
                ranks[node] = min(ranks.get(node, vote.rank), vote.rank)
    assert first in ranks and second in ranks, f"ranks: {ranks}"
    assert ranks[first] < ranks[second], f"ranks: {ranks}"


@then('the first fragment of the context is "{node}" at depth {depth:d}')
def first_fragment(context: Context, node: str, depth: int) -> None:
    fragments = result(context).fragments
    assert fragments, "the context is empty"
    best = max(fragments, key=lambda f: f.score)
    path, _, anchor = node.partition("#")
    found = f"{best.source.path}#{best.uko_uri.partition('#')[2]}@{best.detail_depth}"
    assert found == f"{path}#{anchor}@{depth}", f"the first is {found}: {_listing(context)}"


@then('the best fragments of the context, in any order, are "{nodes}" at depth {depth:d}')
def best_fragments(context: Context, nodes: str, depth: int) -> None:
    expected = sorted(f"{node.strip()}@{depth}" for node in nodes.split(","))
    best = sorted(result(context).fragments, key=lambda f: -f.score)[: len(expected)]
    found = sorted(f"{f.source.path}#{f.uko_uri.partition('#')[2]}@{f.detail_depth}" for f in best)
    assert found == expected, f"the best are {found}: {_listing(context)}"


@then('the first fragment of the context is not from "{path}"')
def first_not_from(context: Context, path: str) -> None:
    fragments = result(context).fragments
    assert fragments, "the context is empty"
    best = max(fragments, key=lambda f: f.score)
    assert best.source.path != path, f"the first is from {path}: {_listing(context)}"


@then("asking again gives a byte-identical context")
def asking_again(context: Context) -> None:
    first = result(context).model_dump_json(exclude={"elapsed_ms", "timings_ms", "strategies"})
    assemble(context, context.request)
    again = result(context).model_dump_json(exclude={"elapsed_ms", "timings_ms", "strategies"})
    assert first == again, "the second context differs"


@then("a pipeline opened anew and warmed up gives the same context")
def same_once_warm(context: Context) -> None:
    fields = {"elapsed_ms", "timings_ms", "strategies"}
    first = result(context).model_dump_json(exclude=fields)
    context.pipeline.close()
    context.pipeline = None
    pipeline(context).warm_up()  # a graph with its names and edges ready, and no slow one
    assemble(context, context.request)
    again = result(context).model_dump_json(exclude=fields)
    assert first == again, "the context differs once the graph is ready"


@then('the search terms of a long issue text {have} "{term}"')
def long_terms(context: Context, have: str, term: str) -> None:
    terms = query_terms(_LONG_ISSUE)
    present = term in terms
    assert present == (have == "include"), f"{term!r} {'not ' * (not present)}in {terms}"


@then('the search terms of "{query}" are "{terms}"')
def short_terms(context: Context, query: str, terms: str) -> None:
    found = ", ".join(query_terms(query.replace('\\"', '"')))
    assert found == terms, f"the terms are {found!r}"


@then("the code mentions of this text are:")
def mentions_of_text(context: Context) -> None:
    context.mentions = code_mentions(context.text)


@then("they are:")
def mentions_are(context: Context) -> None:
    mentions = context.mentions
    found = [
        *(("path", p) for p in mentions.paths),
        *(
            ("location", f"{m.path}:{m.line}" + (f" in {m.function}" if m.function else ""))
            for m in mentions.locations
        ),
        *(("dotted", d) for d in mentions.dotted),
        *(("symbol", s) for s in mentions.symbols),
        *(("callers of", name) for name in mentions.callers_of),
    ]
    expected = [(row["kind"], row["value"]) for row in context.table]
    assert found == expected, f"found {found}"


@then('the path "{path}" is {role}')
def path_role(context: Context, path: str, role: str) -> None:
    assert source_role(path) == role, f"{path} is {source_role(path)}"


@when(
    'I ask for "{query}" as a code question within {budget:d} tokens '
    'using only the strategies "{names}"'
)
def ask_code_question_of(context: Context, query: str, budget: int, names: str) -> None:
    chosen = {name.strip(): StrategySelection() for name in names.split(",")}
    assemble(
        context, ContextRequest(query=query, budget=budget, prefer_source=True, strategies=chosen)
    )


@when('I ask for "{query}" within {budget:d} tokens using only the strategies "{names}"')
def ask_strategies(context: Context, query: str, budget: int, names: str) -> None:
    chosen = {name.strip(): StrategySelection() for name in names.split(",")}
    assemble(context, ContextRequest(query=query, budget=budget, strategies=chosen))


@then('the fragments of the context by fused score are "{nodes}"')
def by_fused_score(context: Context, nodes: str) -> None:
    ordered = sorted(result(context).fragments, key=lambda f: -f.score)
    found = ", ".join(f"{f.source.path}#{f.uko_uri.partition('#')[2]}" for f in ordered)
    assert found == nodes, f"by fused score: {found}"
