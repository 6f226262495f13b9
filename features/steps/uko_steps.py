"""Steps for the UKO nodes, their fragments at each detail depth, and the graph."""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing

from behave import given, step, then
from behave.runner import Context
from testkit import index_summary, pipeline

from contextpipe import GraphStats, NodeRecord
from contextpipe.stores.embedded._resolution import stored_resolution
from contextpipe.stores.graph import resolve

#: Nodes that are the file itself or pieces of it, not definitions in it.
_NOT_DEFINITIONS = frozenset({"module", "block", "document", "section", "paragraph", "part"})
#: Nodes that carry a skeleton (depth 4) besides their full text and listing.
_WITH_SKELETON = frozenset({"module", "document", "section"})


def _nodes(context: Context, path: str | None = None) -> list[NodeRecord]:
    nodes = pipeline(context).store.nodes()
    return [n for n in nodes if path is None or n.path == path]


def _lines(node: NodeRecord) -> str:
    return f"{node.start_line}-{node.end_line}"


def _edges(context: Context) -> set[tuple[str, str, str]]:
    return set(pipeline(context).graph().edges())


def _edge_rows(context: Context) -> list[tuple[str, str, str]]:
    return [(row["from"], row["type"], row["to"]) for row in context.table]


def _show(edges: set[tuple[str, str, str]]) -> str:
    return "\n".join(f"  {s} -{t}-> {o}" for s, t, o in sorted(edges) if t != "contains")


# -- nodes -------------------------------------------------------------------------------------


@then('the definitions in "{path}" are:')
def definitions_are(context: Context, path: str) -> None:
    found = [
        (n.uri, n.kind, _lines(n))
        for n in sorted(_nodes(context, path), key=lambda n: (n.start_line, n.uri))
        if n.kind not in _NOT_DEFINITIONS
    ]
    expected = [(row["uri"], row["kind"], row["lines"]) for row in context.table]
    assert found == expected, "found:\n" + "\n".join(f"  {row}" for row in found)


@then('the nodes of "{path}" are:')
def nodes_are(context: Context, path: str) -> None:
    found = [
        (n.uri, n.kind, _lines(n), n.parent or "")
        for n in sorted(_nodes(context, path), key=lambda n: (n.start_line, n.uri))
    ]
    expected = [(row["uri"], row["kind"], row["lines"], row["inside"]) for row in context.table]
    assert found == expected, "found:\n" + "\n".join(f"  {row}" for row in found)


@then('nothing from "{path}" is a node')
def no_node_from(context: Context, path: str) -> None:
    found = [n.uri for n in _nodes(context, path)]
    assert not found, found


@then("the fragments record these languages:")
def fragment_languages(context: Context) -> None:
    store = pipeline(context).store
    for row in context.table:
        languages = {v.metadata.get("language") for v in store.variants(row["uri"])}
        assert languages == {row["language"]}, f"{row['uri']}: {languages}"


@then('the text of "{uri}" at depth {depth:d} is:')
def text_at_depth(context: Context, uri: str, depth: int) -> None:
    variants = {v.detail_depth: v for v in pipeline(context).store.variants(uri)}
    assert depth in variants, f"{uri} has depths {sorted(variants)}"
    text = variants[depth].text
    assert text == context.text, f"the depth {depth} text of {uri} is:\n{text}"


@then("every module, definition, document and section has fragments at depths 9, 4 and 0")
def depths_of_every_node(context: Context) -> None:
    nodes = _nodes(context)
    assert nodes, "the store holds no node"
    store = pipeline(context).store
    wrong: list[str] = []
    for node in nodes:
        depths = [v.detail_depth for v in store.variants(node.uri)]
        if node.kind in _WITH_SKELETON or node.kind not in _NOT_DEFINITIONS:
            expected = [9, 4, 0]
        else:
            expected = [9, 0]  # blocks, paragraphs and parts: full text and listing
        if depths != expected:
            wrong.append(f"{node.kind} {node.uri}: depths {depths}")
    assert not wrong, "\n".join(wrong)


@then("every node's one-line listing names its kind, name, path and lines")
def every_listing(context: Context) -> None:
    store = pipeline(context).store
    wrong: list[str] = []
    for node in _nodes(context):
        listing = next(v.text for v in store.variants(node.uri) if v.detail_depth == 0)
        location = f"({node.path}:{_lines(node)})"
        if node.kind in _WITH_SKELETON or node.kind not in _NOT_DEFINITIONS:
            ok = listing == f"{node.kind} {node.name} {location}"
        else:  # a block of module code, a paragraph, a part of a data file
            ok = listing.startswith(f"{node.kind} ") and listing.endswith(location)
        if not ok or "\n" in listing:
            wrong.append(f"{node.uri}: {listing!r}")
    assert not wrong, "\n".join(wrong)


@then('the full text of "{uri}" starts with "{start}" and ends with "{end}"')
def full_text_bounds(context: Context, uri: str, start: str, end: str) -> None:
    full = pipeline(context).store.variants(uri)[0]
    assert full.detail_depth == 9, full
    assert full.text.startswith(start) and full.text.endswith(end), full.text


# -- the graph ---------------------------------------------------------------------------------


@step("the graph has these edges:")
def graph_has_edges(context: Context) -> None:
    edges = _edges(context)
    missing = [row for row in _edge_rows(context) if row not in edges]
    assert not missing, f"missing: {missing}\nthe graph has:\n{_show(edges)}"


@then('the {kind:w} edges from "{uri}" go to:')
def edges_from(context: Context, kind: str, uri: str) -> None:
    found = sorted(
        target for source, key, target in _edges(context) if (source, key) == (uri, kind)
    )
    expected = sorted(row["to"] for row in context.table)
    assert found == expected, f"{kind} edges from {uri} go to {found}"


@step("the graph has none of these edges:")
def graph_lacks_edges(context: Context) -> None:
    edges = _edges(context)
    present = [row for row in _edge_rows(context) if row in edges]
    assert not present, f"present: {present}"


@then('the only edges of type "{kind}" in the graph are:')
def only_edges_of_type(context: Context, kind: str) -> None:
    found = {edge for edge in _edges(context) if edge[1] == kind}
    expected = set(_edge_rows(context))
    assert found == expected, (
        f"missing: {sorted(expected - found)}\nunexpected: {sorted(found - expected)}"
    )


@then('no edge of the graph touches "{path}"')
def no_edge_touches(context: Context, path: str) -> None:
    graph = pipeline(context).graph().networkx
    touching = [
        (s, k, t)
        for s, t, k in graph.edges(keys=True)
        if graph.nodes[s].get("path") == path or graph.nodes[t].get("path") == path
    ]
    assert not touching, touching


def _stats(context: Context) -> GraphStats:
    """`graph_stats`, after checking that it counts what the loaded graph holds."""
    view = pipeline(context).graph()
    stats = view.stats()
    graph = view.networkx
    nodes = Counter(str(kind) for _, kind in graph.nodes(data="kind"))
    edges = Counter(str(key) for _, _, key in graph.edges(keys=True))
    assert (stats.nodes, stats.edges) == (dict(nodes), dict(edges)), (stats, nodes, edges)
    return stats


@step("the graph counts these nodes by kind:")
def graph_counts_nodes(context: Context) -> None:
    stats = _stats(context)
    expected = {row["kind"]: int(row["count"]) for row in context.table}
    assert stats.nodes == expected, stats.nodes


@step("the graph counts these edges by type:")
def graph_counts_edges(context: Context) -> None:
    stats = _stats(context)
    expected = {row["type"]: int(row["count"]) for row in context.table}
    assert stats.edges == expected, stats.edges


@then("the graph counts the nodes and edges it holds")
def graph_counts_what_it_holds(context: Context) -> None:
    _stats(context)


@given("the graph's edges and counts are noted")
def note_graph(context: Context) -> None:
    context.noted_graph = (_edges(context), _stats(context))


@then("the graph's edges and counts are the ones noted")
def graph_as_noted(context: Context) -> None:
    edges, stats = context.noted_graph
    assert _edges(context) == edges, f"lost: {edges - _edges(context)}"
    assert _stats(context) == stats, (_stats(context), stats)


@then('the neighbourhood of "{uri}" within {hops:d} hop is:')
@then('the neighbourhood of "{uri}" within {hops:d} hops is:')
def neighbourhood_is(context: Context, uri: str, hops: int) -> None:
    found = pipeline(context).graph().subgraph([uri], hops)
    expected = _edge_rows(context)
    assert found == sorted(expected), "found:\n" + "\n".join(f"  {row}" for row in found)


@then("the index summary's nodes are the graph's indexed nodes")
def summary_nodes_are_graphs(context: Context) -> None:
    stats = _stats(context)
    indexed = sum(stats.nodes.values()) - stats.nodes["repository"] - stats.nodes["directory"]
    assert index_summary(context).nodes_written == indexed, (index_summary(context), stats)


@then("the store holds the resolved graph of its current state")
def stored_graph_is_current(context: Context) -> None:
    store = pipeline(context).store
    with closing(sqlite3.connect(store.database)) as connection:
        stored = stored_resolution(connection)
    assert stored is not None, "the store keeps no resolution of its current state"
    assert sorted(stored) == sorted(resolve(store.nodes(), store.edges()))
