"""Checks of what a store answers: text search, the graph view, the timeline, and readers
in worker threads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from contextpipe import (
    ContextFragment,
    Direction,
    GraphEdge,
    RequestFilters,
    TextHit,
    query_terms,
)

from ._kit import ALL, ALL_HOPS, Subject, expect, fits, moment, when, write_files


def _ids(hits: Sequence[TextHit]) -> list[str]:
    return [hit.fragment.id for hit in hits]


def _hits(
    subject: Subject, query: str, limit: int = ALL, filters: RequestFilters | None = None
) -> Sequence[TextHit]:
    return subject.text().search(query, limit, filters or RequestFilters())


# -- text search ---------------------------------------------------------------------------


def search_finds_best_first(subject: Subject) -> None:
    subject.index()
    hits = _hits(subject, "pool")
    expect(bool(hits), "searching 'pool' finds nothing")
    first = hits[0]
    expect(
        (first.fragment.uko_uri, first.matched_terms, first.fragment.detail_depth)
        == ("uko://doc/docs/budget.md#leftovers", ("pool",), 9),
        f"searching 'pool' finds {first.fragment.uko_uri} first (depth"
        f" {first.fragment.detail_depth}), matching {first.matched_terms}",
    )
    terms = query_terms("budget slug")
    hits = _hits(subject, "budget slug")
    expect(len(hits) > 1, f"searching 'budget slug' finds {len(hits)} hits")
    scores = [hit.score for hit in hits]
    expect(scores == sorted(scores, reverse=True), f"scores in this order: {scores}")
    for hit in hits:
        expect(
            bool(hit.matched_terms) and set(hit.matched_terms) <= set(terms),
            f"{hit.fragment.uko_uri} matched {hit.matched_terms}, not terms of {terms}",
        )


def scores_as_search_does(subject: Subject) -> None:
    subject.index()
    query = "budget slug tokens"
    text = subject.text()
    full = subject.full_texts()
    hits = {hit.fragment.id: hit.score for hit in _hits(subject, query)}
    expect(bool(hits) and len(hits) < len(full), "the query must match some texts, not all")
    wanted = [hits.get(f.id, 0.0) for f in full]
    expect(list(text.scores(query, full)) == wanted, "scores() are not the scores search gives")
    for fragment in reversed(full):  # asked alone and in another order: each its own
        (score,) = text.scores(query, [fragment])
        expect(score == hits.get(fragment.id, 0.0), f"{fragment.id} alone scores {score}")
    last = _hits(subject, query)[-1]
    (score,) = text.scores(query, [last.fragment])
    expect(score == last.score, "the last hit of a search is scored other than it ranks")


#: Queries with what looks like query syntax, and the plain words each must find as.
_NO_SYNTAX = (
    ("budget OR pool", "budget pool"),
    ("budget AND NOT pool", "budget and not pool"),
    ('"token budget', "token budget"),
    ('pool"', "pool"),
    ("title:leftovers", "title leftovers"),
    ("{title text}: budget", "title text budget"),
    ("NEAR(token budget, 2)", "near token budget 2"),
    ("^budget + pool", "budget pool"),
    ("(budget", "budget"),
    ("-pool", "pool"),
)


def user_text_is_never_syntax(subject: Subject) -> None:
    subject.index()
    wrong: list[str] = []
    for query, words in _NO_SYNTAX:
        try:
            found = _ids(_hits(subject, query))
        except Exception as exc:  # a syntax error is the broken promise itself
            wrong.append(f"{query!r} raises {type(exc).__name__}: {exc}")
            continue
        plain = _ids(_hits(subject, words))
        if not plain or found != plain:
            wrong.append(f"{query!r} finds {len(found)} hits, {words!r} finds {len(plain)}")
    expect(not wrong, "; ".join(wrong))
    for query in ("keba*", "slu*"):
        expect(not _hits(subject, query), f"{query!r} finds what a prefix would")


def search_keeps_to_filters_and_limit(subject: Subject) -> None:
    subject.index()
    for filters in (
        RequestFilters(paths=("docs/*",)),
        RequestFilters(kinds=("function",)),
        RequestFilters(paths=("app/*", "docs/*"), kinds=("function", "section")),
    ):
        hits = _hits(subject, "budget text", filters=filters)
        expect(bool(hits), f"it finds nothing that fits {filters}")
        misfits = [h.fragment.source.path for h in hits if not fits(h.fragment, filters)]
        expect(not misfits, f"it finds {misfits}, which do not fit {filters}")
    for limit in (1, 0):
        found = len(_hits(subject, "budget text", limit))
        expect(found == limit, f"with the limit {limit} it finds {found} hits")


def filter_hides_no_match(subject: Subject) -> None:
    sections = "\n\n".join(
        f"## Budget {n}\n\nThe budget, the budget and the budget of part {n}." for n in range(30)
    )
    write_files(
        subject.project,
        {
            "docs/many.md": f"# Budgets\n\n{sections}\n",
            "notes/one.md": "# Aside\n\nA long note that says budget once, among many other"
            " words about other things.\n",
            "app/pay.py": 'def pay(amount: int) -> int:\n    """Pay an amount; whether it'
            ' fits the budget is checked elsewhere, with other things."""\n    return amount\n',
        },
    )
    subject.index()
    for filters in (RequestFilters(paths=("notes/*",)), RequestFilters(kinds=("function",))):
        fitting = [hit for hit in _hits(subject, "budget") if fits(hit.fragment, filters)]
        expect(bool(fitting), f"nothing it finds fits {filters}")
        for limit in range(1, 4):
            found = _ids(_hits(subject, "budget", limit, filters))
            expect(
                found == _ids(fitting[:limit]),
                f"with {filters} and the limit {limit} it finds {found}; the best that fit are"
                f" {_ids(fitting[:limit])}",
            )


def ties_in_id_order(subject: Subject) -> None:
    note = "# Notes\n\nThe quokka naps all day.\n"
    write_files(subject.project, {f"notes/{name}.md": note for name in "abcdef"})
    subject.index()
    hits = _hits(subject, "quokka")
    scores = {hit.score for hit in hits}
    expect(len(hits) == 6 and len(scores) == 1, f"{len(hits)} hits scoring {sorted(scores)}")
    expect(_ids(hits) == sorted(_ids(hits)), f"ids in this order: {_ids(hits)}")
    whole = _ids(hits)
    for limit in range(7):
        found = _ids(_hits(subject, "quokka", limit))
        expect(found == whole[:limit], f"with the limit {limit} it finds {found} of {whole}")


# -- graph view ----------------------------------------------------------------------------

_SLUG = "uko://code/app/util.py#slug"
_RUN = "uko://code/app/main.py#run"
_NOWHERE = "uko://code/app/nowhere.py"


def _edges(*rows: tuple[str, str, str]) -> list[GraphEdge]:
    return sorted(GraphEdge(*row) for row in rows)


def graph_knows_nodes_and_edges(subject: Subject) -> None:
    subject.index()
    graph = subject.graph()
    node = graph.node(_SLUG)
    expect(node is not None, f"node() does not know {_SLUG}")
    assert node is not None
    found = (node.kind, node.name, node.path, node.start_line, node.end_line)
    expect(found == ("function", "slug", "app/util.py", 4, 5), f"node() gives {node}")
    expect(graph.node(_NOWHERE) is None and not graph.neighbours(_NOWHERE), "it knows nowhere.py")
    doc = "uko://doc/docs/budget.md#token-budgets"
    asked: list[tuple[str, Collection[str], Direction, list[GraphEdge]]] = [
        (
            _SLUG,
            (),
            "in",
            _edges((_RUN, "calls", _SLUG), ("uko://code/app/util.py", "contains", _SLUG)),
        ),
        (_SLUG, (), "out", []),
        (_RUN, ("calls",), "both", _edges((_RUN, "calls", _SLUG))),
        (
            "uko://code/app/main.py",
            ("imports", "mentions"),
            "out",
            _edges(("uko://code/app/main.py", "imports", "uko://code/app/util.py")),
        ),
        (_RUN, ("mentions",), "both", _edges((doc, "mentions", _RUN))),
    ]
    for uri, types, direction, wanted in asked:
        found_edges = list(graph.neighbours(uri, types, direction))
        expect(found_edges == sorted(found_edges), f"neighbours() are not sorted: {found_edges}")
        expect(
            found_edges == wanted,
            f"neighbours({uri!r}, {sorted(types)}, {direction!r}) are {found_edges}",
        )


def subgraph_within_hops(subject: Subject) -> None:
    subject.index()
    graph = subject.graph()
    main, util = "uko://code/app/main.py", "uko://code/app/util.py"
    asked: list[tuple[str, int, list[GraphEdge]]] = [
        (_SLUG, 1, _edges((_RUN, "calls", _SLUG), (util, "contains", _SLUG))),
        (
            _SLUG,
            2,
            _edges(
                (main, "contains", _RUN),
                (main, "imports", util),
                (_RUN, "calls", _SLUG),
                (util, "contains", f"{util}#module"),
                (util, "contains", _SLUG),
                (util, "contains", f"{util}#title"),
                ("uko://dir/app/", "contains", util),
                ("uko://doc/docs/budget.md#token-budgets", "mentions", _RUN),
            ),
        ),
        (_NOWHERE, 2, []),
    ]
    for uri, hops, wanted in asked:
        found = list(graph.subgraph([uri], hops))
        expect(found == sorted(found), f"subgraph() is not sorted: {found}")
        expect(found == wanted, f"subgraph([{uri!r}], {hops}) is {found}")


def graph_counts_what_it_shows(subject: Subject) -> None:
    subject.index()
    graph = subject.graph()
    uris = [fragment.uko_uri for fragment in subject.full_texts()]
    edges = set(graph.subgraph(uris, ALL_HOPS))
    nodes = {uri for edge in edges for uri in (edge.source, edge.target)}
    outgoing = {edge for uri in nodes for edge in graph.neighbours(uri, direction="out")}
    incoming = {edge for uri in nodes for edge in graph.neighbours(uri, direction="in")}
    expect(outgoing == edges == incoming, "neighbours() and subgraph() show different edges")
    kinds = Counter(getattr(graph.node(uri), "kind", "?") for uri in nodes)
    stats = graph.stats()
    shown = dict(sorted(Counter(edge.type for edge in edges).items()))
    expect(stats.edges == shown, f"stats() counts the edges {stats.edges}, it shows {shown}")
    expect(
        stats.nodes == dict(sorted(kinds.items())),
        f"stats() counts the nodes {stats.nodes}, it shows {dict(kinds)}",
    )


def graph_view_kept_until_the_index_changes(subject: Subject) -> None:
    subject.index()
    first = subject.graph()
    first.subgraph([fragment.uko_uri for fragment in subject.full_texts()], ALL_HOPS)
    expect(subject.graph() is first, "it makes a new graph view for each request")
    subject.change(
        "app/main.py",
        "def shout(text: str) -> str:\n    return text.upper()\n\n\n"
        'def run() -> str:\n    return shout("Hello World")\n',
    )
    subject.index()
    graph = subject.graph()
    new = GraphEdge(_RUN, "calls", "uko://code/app/main.py#shout")
    expect(new in graph.neighbours(_RUN), f"after a change the graph lacks {new}")
    for stale in (
        GraphEdge("uko://code/app/main.py", "imports", "uko://code/app/util.py"),
        GraphEdge(_RUN, "calls", _SLUG),
    ):
        expect(stale not in graph.neighbours(stale.source), f"after a change it still has {stale}")


# -- timeline ------------------------------------------------------------------------------


def _paths_in_order(fragments: Sequence[ContextFragment]) -> list[str]:
    return list(dict.fromkeys(f.source.path for f in fragments))


def _newest_first(fragments: Sequence[ContextFragment]) -> None:
    keys = [(-when(f).timestamp(), f.id) for f in fragments]
    expect(keys == sorted(keys), f"not newest first, ties by id: {_paths_in_order(fragments)}")
    expect({f.detail_depth for f in fragments} <= {9}, "it lists what is not a full text")
    expect(len({f.id for f in fragments}) == len(fragments), "it lists a fragment twice")


def timeline_lists_every_full_text(subject: Subject) -> None:
    subject.index()
    listed = subject.timeline().recent(ALL, RequestFilters())
    _newest_first(listed)
    expect(
        _paths_in_order(listed) == ["docs/budget.md", "app/util.py", "app/main.py"],
        f"it lists {_paths_in_order(listed)}",
    )
    expect(list(listed) == subject.full_texts(), "it lists other full texts than the lookup holds")
    wrong = [f.source.path for f in listed if when(f) != _MODIFIED[f.source.path]]
    expect(not wrong, f"modification times that are not the files': {wrong[:3]}")


_MODIFIED = {
    "docs/budget.md": moment("2024-03-03T12:00:00+00:00"),
    "app/util.py": moment("2024-03-02T12:00:00+00:00"),
    "app/main.py": moment("2024-03-01T12:00:00+00:00"),
}


def timeline_keeps_to_bounds_filters_and_limit(subject: Subject) -> None:
    subject.index()
    timeline = subject.timeline()
    asked: list[tuple[str | None, str | None, list[str]]] = [
        ("2024-03-02T12:00:00+00:00", None, ["docs/budget.md", "app/util.py"]),
        (None, "2024-03-02T12:00:00+00:00", ["app/main.py"]),
        ("2024-03-02T14:00:00+02:00", "2024-03-03T12:00:00+00:00", ["app/util.py"]),
        ("2024-03-04T00:00:00+00:00", None, []),
    ]
    for since, until, paths in asked:
        bounds = (moment(since) if since else None, moment(until) if until else None)
        listed = timeline.recent(ALL, RequestFilters(), *bounds)
        _newest_first(listed)
        expect(
            _paths_in_order(listed) == paths,
            f"since {since} until {until} it lists {_paths_in_order(listed)}",
        )
    filters = RequestFilters(paths=("app/*",), kinds=("function",))
    listed = [f.uko_uri for f in timeline.recent(ALL, filters)]
    wanted = ["uko://code/app/util.py#slug", "uko://code/app/util.py#title", _RUN]
    expect(listed == wanted, f"in app/* of kind function it lists {listed}")
    whole = [f.id for f in timeline.recent(ALL, RequestFilters())]
    for limit in range(13):
        found = [f.id for f in timeline.recent(limit, RequestFilters())]
        expect(found == whole[:limit], f"with the limit {limit} it lists {found} of {whole}")


def timeline_after_lists_what_came_next(subject: Subject) -> None:
    subject.index()
    timeline = subject.timeline()
    asked: list[tuple[str, str | None, list[str]]] = [
        ("2024-03-01T12:00:00+00:00", None, ["app/util.py", "docs/budget.md"]),
        ("2024-03-01T11:59:59+00:00", None, ["app/main.py", "app/util.py", "docs/budget.md"]),
        ("2024-03-01T12:00:00+00:00", "2024-03-03T12:00:00+00:00", ["app/util.py"]),
        ("2024-03-02T13:00:00+01:00", None, ["docs/budget.md"]),
        ("2024-03-03T12:00:00+00:00", None, []),
    ]
    for start, end, paths in asked:
        at, until = moment(start), moment(end) if end else None
        listed = timeline.after(at, ALL, RequestFilters(), until)
        keys = [(when(f), f.id) for f in listed]
        expect(keys == sorted(keys), f"after {start} not oldest first, ties by id")
        expect(
            all(at < moment_ for moment_, _ in keys), f"after {start} it lists {start} or before"
        )
        expect({f.detail_depth for f in listed} <= {9}, "it lists what is not a full text")
        expect(
            _paths_in_order(listed) == paths, f"after {start} it lists {_paths_in_order(listed)}"
        )
        newest = timeline.recent(ALL, RequestFilters(), at + timedelta(microseconds=1), until)
        expect(
            sorted(f.id for f in listed) == sorted(f.id for f in newest),
            f"after {start} it lists other texts than the newest-first read of the same span",
        )
        for limit in range(len(listed) + 2):
            found = [f.id for f in timeline.after(at, limit, RequestFilters(), until)]
            expect(
                found == [f.id for f in listed][:limit], f"after {start}, limit {limit}: {found}"
            )


# -- readers in worker threads -------------------------------------------------------------


def _answers(subject: Subject) -> tuple[object, ...]:
    """What a strategy might ask a store, and its answers."""
    full = subject.full_texts()
    uris = [fragment.uko_uri for fragment in full]
    lookup = subject.lookup()
    answers: list[object] = [
        [(h.fragment.id, h.score, h.matched_terms) for h in _hits(subject, "budget slug", 10)],
        {uri: [variant.id for variant in lookup.variants(uri)] for uri in uris},
        lookup.count(),
    ]
    if subject.offers("timeline"):
        answers.append([f.id for f in subject.timeline().recent(ALL, RequestFilters())])
    if subject.offers("graph"):
        graph = subject.graph()
        answers += [list(graph.subgraph(uris[:1], 2))]
    return tuple(answers)


def readers_in_threads_see_the_same(subject: Subject) -> None:
    subject.index()
    subject.store.close()
    wanted = _answers(subject)

    def ask(_: int) -> tuple[object, ...]:
        return _answers(subject)

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(ask, range(8)))
    differing = [n for n, answers in enumerate(found) if answers != wanted]
    expect(not differing, f"{len(differing)} of {len(found)} readers in threads saw otherwise")


CHECKS: list[tuple[str, Callable[[Subject], None]]] = [
    ("a search finds its best hits first, with the terms each matched", search_finds_best_first),
    ("a text's score does not depend on its rank", scores_as_search_does),
    ("what a user types is never query syntax", user_text_is_never_syntax),
    ("a search keeps to its filters and its limit", search_keeps_to_filters_and_limit),
    ("a filter never hides a match that fits it", filter_hides_no_match),
    ("ties in score come in fragment id order, whatever the limit", ties_in_id_order),
    ("the graph knows each node and its edges by type and direction", graph_knows_nodes_and_edges),
    ("a subgraph holds the edges within so many hops", subgraph_within_hops),
    ("the graph counts what its neighbours and subgraphs show", graph_counts_what_it_shows),
    (
        "the graph view is kept until the index changes, then shows the change",
        graph_view_kept_until_the_index_changes,
    ),
    ("the timeline lists every full text newest first, ties by id", timeline_lists_every_full_text),
    (
        "the timeline keeps to its time bounds, filters and limit",
        timeline_keeps_to_bounds_filters_and_limit,
    ),
    (
        "the timeline read on from a time lists what came next, oldest first",
        timeline_after_lists_what_came_next,
    ),
    ("readers in worker threads see what the caller sees", readers_in_threads_see_the_same),
]
