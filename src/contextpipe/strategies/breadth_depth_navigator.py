"""`breadth-depth-navigator`: code found by its structure, from where a request points.

Rules, in order:

1. **Focus.** Each item of `request.focus` (a node URI, a path, `path:line`, a dotted
   module or `Class.method`, a symbol name) is resolved with `GraphView.lookup`; a
   `path:line` means the innermost definition holding that line. Without a focus that
   resolves, the focus comes from the query: `path:line` locations and paths first
   (tracebacks), then dotted names, then symbols (identifiers in backticks, compound
   identifiers), then query words that are a file's name without its ending (`termui`),
   then the text index: its best hits, and each file weighed by the evidence of all its
   hits (`file_evidence`: the best hit in full, the next ones less and less), so that a
   file many hits point at counts even when no single hit is first. Focus items that
   resolve to nothing are named in the strategy's report ("unknown focus: X, Y", a
   `Retrieved` note); nothing is raised.
2. **Breadth.** From the focus, every node within `max_hops` edges (either direction,
   repository and folder nodes left out, at most `max_neighbours` edges per node, the
   heaviest first) is reached by its best path: `reach = seed weight x product of the
   edge weights x hop_decay ^ hops`, where an edge's weight is its type's option
   (`calls_weight`, `imports_weight`...) times `reverse_factor` when walked against its
   direction.
3. **Depth.** While the nodes reached hold less than twice the allocation and the time
   limit allows, the walk goes on depth-first from the best nodes at the edge of the
   breadth, along the heaviest edge not yet taken, up to `depth_first_hops` more hops.
4. **Rank.** Personalised PageRank over the walked subgraph (edges weighted as walked,
   seeded at the focus by weight, damping `damping`) is combined with the reach:
   `score = (1 - pagerank_weight) x reach / max reach + pagerank_weight x rank / max
   rank`; ties by URI.
5. **Detail.** The focus at full depth (9), then as skeleton (4) and listing (0) (a
   keyword hit too: its full text is what matched, and equal texts fuse with other
   strategies' votes); nodes one hop away as skeleton, then listing; farther ones as
   listing. The shallower depths
   of a node are proposed with its score times their value relative to its deepest, as
   `[packing] depth_value_*` gives them (0.6 skeleton, 0.25 listing), so that the packer
   trades detail for coverage; a depth valued 0 is not proposed. A file found through the
   text index or its name is proposed from its skeleton down, its full text only when a
   focus names it. Candidates come best score first, enough to hold twice the
   allocation and at least 20.
6. **Code questions.** With `prefer_source` (request or option), seeds in tests, docs,
   changelogs and CI files weigh `non_source_factor` as much.
7. **Time.** The walk stops `time_limit_ms` after it starts and proposes what it found
   so far, saying so in the reasons. It starts when the graph's edges are ready: the
   first read of a node's edges waits while the graph resolves them, once per state of
   the index (about a second on a large repository in a new process, such as a one-shot
   `contextpipe query`), and that wait is not the walk's. Whatever the wait, the walk
   stops `total_limit_ms` after the strategy started, and when the edges are not ready by
   then it proposes its starting points alone (the edges go on resolving for the next
   request), so that a slow start (a loaded machine) shortens the walk instead of running
   into the executor's deadline. Once a graph's edges were ready they stay so: its later
   requests wait for nothing.
8. **Callers.** When the query asks for the callers or uses of what it names (`who calls
   X`, `callers of X`, `where is X used`: `CodeMentions.callers_of`), they are what was
   asked. Without a focus, the nodes of those names are the only seeds (rule 1's other
   seeds would outrank the callers they hold); a `calls` edge walked to a caller weighs
   its type's weight, and walked to a callee `reverse_factor` as much (rule 2 the other
   way round); the callers one hop away are proposed in full, then as skeleton and
   listing, and the node asked about from its skeleton down (rule 5), so that its own
   text does not take the room of its callers.

Each reason names the path that reached the node: "calls ← BudgetAllocator.allocate,
1 hop from focus BudgetAllocator.allocate".
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from contextpipe import (
    REACH,
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    ContextStrategy,
    GraphNode,
    GraphView,
    Retrieved,
    Settings,
    code_mentions,
    hookimpl,
    query_terms,
    source_role,
    strategy_options,
)

if TYPE_CHECKING:
    from contextpipe import CodeMentions

NAME = "breadth-depth-navigator"

#: A node's stored texts, deepest first, in the request's scope.
_Variants = Callable[[str], "Sequence[ContextFragment]"]
#: Nodes whose texts are read at once, at first: one read per node took 0.6 s for 400
#: nodes on a loaded machine, and all 400 at once 20 ms, when the best 40 are all that is
#: proposed. Proposals use 20-80 nodes' texts (29 for half the code questions at 100k
#: fragments), so each later read takes twice as many as the one before.
_FIRST_BATCH = 32
_AT_LEAST = 20
#: Nodes that connect everything and hold no text of their own.
_PASSED_OVER = frozenset({"repository", "directory"})
#: Kinds that are a whole file (proposed from the skeleton down unless a focus names them).
_FILE_KINDS = frozenset({"module", "document"})
#: A symbol with more definitions than this says too little to start from.
_MAX_MATCHES = 12

# Seed weights of what the query names, strongest first (rule 1).
_LOCATION, _PATH, _DOTTED, _SYMBOL, _FILE_NAME = 1.0, 0.9, 0.8, 0.7, 0.5
_TEXT_HIT, _TEXT_FILE = 0.3, 0.45
#: Text seeds weigh this much less when the query names code the graph holds.
_TEXT_WHEN_NAMED = 0.5


class NavigatorOptions(BaseModel):
    """`[strategies.breadth-depth-navigator.options]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_hops: int = Field(
        default=2, ge=0, le=6, description="Hops walked breadth-first from the focus (0-6)."
    )
    depth_first_hops: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Hops walked further, depth-first, while the budget lasts (0-10).",
    )
    calls_weight: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Weight of calls edges (0-1; 0: never walked)."
    )
    inherits_weight: float = Field(
        default=0.9, ge=0.0, le=1.0, description="Weight of inherits edges (0-1; 0: never walked)."
    )
    imports_weight: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Weight of imports edges (0-1; 0: never walked)."
    )
    references_weight: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Weight of references edges (0-1; 0: never walked).",
    )
    contains_weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Weight of contains edges (0-1; 0: never walked)."
    )
    links_to_weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Weight of links_to edges (0-1; 0: never walked)."
    )
    mentions_weight: float = Field(
        default=0.4, ge=0.0, le=1.0, description="Weight of mentions edges (0-1; 0: never walked)."
    )
    reverse_factor: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Edge weight times this when walked against its direction.",
    )
    hop_decay: float = Field(default=0.5, gt=0.0, le=1.0, description="Reach times this per hop.")
    pagerank_weight: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of personalised PageRank in the score."
    )
    damping: float = Field(default=0.85, gt=0.0, lt=1.0, description="PageRank damping.")
    max_neighbours: int = Field(
        default=40, ge=1, le=1000, description="Edges followed from one node, heaviest first."
    )
    max_nodes: int = Field(default=400, ge=1, le=100_000, description="Nodes walked at most.")
    text_hits: int = Field(
        default=50,
        ge=0,
        le=1000,
        description="Text-index hits read to find a focus in the query (0: none).",
    )
    file_evidence: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="How much a file's further hits add: the i-th best counts this^(i-1).",
    )
    prefer_source: bool = Field(
        default=False,
        description="Treat every request as a code question (non_source_factor).",
    )
    non_source_factor: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="In a code question, seeds in tests, docs, changelogs and CI weigh this.",
    )
    time_limit_ms: int = Field(
        default=1000,
        ge=0,
        description="The walk stops here and proposes what it found (0: the focus only).",
    )
    total_limit_ms: int = Field(
        default=2000,
        ge=0,
        description="However long the graph's edges took, the walk stops this long after the"
        " strategy started (below the executor's strategy deadline, 3000 by default).",
    )

    def edge_weights(self) -> dict[str, float]:
        """The option weight of each edge type it knows (any other type weighs 0)."""
        return {
            "calls": self.calls_weight,
            "inherits": self.inherits_weight,
            "imports": self.imports_weight,
            "references": self.references_weight,
            "contains": self.contains_weight,
            "links_to": self.links_to_weight,
            "mentions": self.mentions_weight,
        }


@dataclass
class _Seed:
    weight: float
    label: str
    full: bool  # propose its full text (a focus, a location, a symbol named)


@dataclass
class _Reach:
    """How the walk reached a node: its best reach, hops, and the step that led there."""

    reach: float
    hops: int
    seed: str  # the label of the seed it came from
    step: str = ""  # "calls ← BudgetAllocator.allocate"
    full: bool = False


@dataclass
class _Walk:
    weights: dict[str, float]  # `NavigatorOptions.edge_weights`
    callers: bool = False  # rule 8: the query asks for callers
    reached: dict[str, _Reach] = field(default_factory=lambda: {})
    edges: dict[tuple[str, str], float] = field(default_factory=lambda: {})
    names: dict[str, tuple[str, str]] = field(default_factory=lambda: {})  # kind, name
    stopped: bool = False


class BreadthDepthNavigator:
    """From focus nodes (given, or found by the query) through typed edges, breadth first,
    then depth first; ranked by reach and personalised PageRank.
    """

    name = NAME
    quality = 0.85
    required_backends = frozenset({"graph"})

    def __init__(self, options: NavigatorOptions, depth_values: Mapping[int, float]) -> None:
        self.options = options
        # Each depth's value relative to full text, as the packer weighs it (`[packing]`).
        self._depth_values = dict(depth_values)

    def prepare(self, request: ContextRequest, backends: Backends) -> None:
        """The graph's names, read by the first lookup once per state of the index (half a
        second at 100k nodes in a new process), so that `can_handle`'s short window holds
        only its own lookups.
        """
        graph = backends.graph
        if graph is not None:
            for name in [*request.focus, *code_mentions(request.query).names]:
                graph.lookup(name)

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        if request.focus:
            return 0.95
        graph = backends.graph
        if graph is not None and _resolves(graph, code_mentions(request.query)):
            return 0.85
        if request.prefer_source or self.options.prefer_source:
            return 0.5
        return 0.0

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> Retrieved:
        graph = backends.graph
        if graph is None:
            return Retrieved([])
        started = time.perf_counter()
        prefer_source = request.prefer_source or self.options.prefer_source
        seeds, unknown = _focus_seeds(graph, request.focus)
        # The report says what the user asked for that names nothing, once, even when
        # nothing else is found.
        report = f"unknown focus: {', '.join(unknown)}" if unknown else ""
        mentions = code_mentions(request.query)
        asked = _callers_seeds(graph, mentions)  # rule 8
        if not seeds:
            seeds = asked or _query_seeds(graph, request, backends, self.options, mentions)
        for uri in asked.keys() & seeds.keys():
            seeds[uri].full = False
        if prefer_source:
            for uri, seed in seeds.items():
                node = graph.node(uri)
                if node is not None and source_role(node.path) != "source":
                    seed.weight *= self.options.non_source_factor
        seeds = {uri: seed for uri, seed in seeds.items() if seed.weight > 0}
        if not seeds:
            return Retrieved([], report)
        # Rule 7: the walk's own time counts from when the edges are ready, and it all ends
        # at the total limit, also when the edges are not ready by then.
        total = started + self.options.total_limit_ms / 1000
        # A walk of no time (the focus only) reads no edge: it waits for none.
        walks = self.options.time_limit_ms > 0
        edges_ready = not walks or _edges_ready(graph, min(seeds), total)
        ready = time.perf_counter()
        # Edges not ready: no edge is read, the walk proposes its starting points.
        deadline = min(ready + self.options.time_limit_ms / 1000, total) if edges_ready else ready
        walk = _breadth(graph, seeds, self.options, deadline, bool(mentions.callers_of))
        wanted = REACH * budget
        fragments = backends.fragments

        # In the request's scope: a node's texts may be another session's memory.
        variants = _Texts(
            lambda batch: fragments.variants_many(batch, request.filters) if fragments else {}
        )
        # Counting what the reached nodes hold reads their texts: not worth it once the
        # walk is out of time or of nodes, as the depth-first part would stop at once.
        variants.expect(list(walk.reached))
        if (
            not walk.stopped
            and self.options.depth_first_hops
            and len(walk.reached) < self.options.max_nodes
            and _held(walk, variants, wanted) < wanted
        ):
            _depth(graph, walk, self.options, deadline, wanted, variants)
        scores = _scores(walk, seeds, self.options)
        variants.expect(_by_score(scores))
        note = ""
        if walk.stopped and not edges_ready:
            waited = round((ready - started) * 1000)
            note += (
                f"; walk stopped at its time limit: the graph's edges were not ready after"
                f" {waited} ms"
            )
        elif walk.stopped:
            walked = round((time.perf_counter() - ready) * 1000)
            waited = round((ready - started) * 1000)
            note += (
                f"; walk stopped at its time limit after {walked} ms (edges and starting"
                f" points took {waited} ms before it)"
            )
        candidates = _candidates(walk, scores, variants, wanted, self._depth_values, note)
        return Retrieved(candidates, report)

    def explain(self) -> str:
        return (
            "Starts from the request's focus (URIs, paths, path:line, dotted names or symbols, "
            "resolved in the graph) or from what the query names (traceback locations, paths, "
            "modules, symbols, file names, then text-index hits weighed per file), walks the "
            "graph breadth-first up to max_hops over typed edges with per-type weights, then "
            "depth-first while its budget lasts, and ranks by reach (edge weights and hop "
            "decay) combined with personalised PageRank seeded at the focus. Focus nodes come "
            "in full, near ones as skeletons, far ones as listings; asked who calls X, X's "
            "callers come in full and X as a skeleton. Needs the graph. Options: "
            "max_hops, depth_first_hops, <type>_weight for calls, inherits, imports, "
            "references, contains, links_to, mentions, reverse_factor, hop_decay, "
            "pagerank_weight, damping, max_neighbours, max_nodes, text_hits, file_evidence, "
            "prefer_source, non_source_factor, time_limit_ms, total_limit_ms."
        )


# -- rule 1: focus -------------------------------------------------------------------------


def _resolves(graph: GraphView, mentions: CodeMentions) -> bool:
    """Whether anything the query names in code is in the graph."""
    return any(_matches(graph, name) for name in mentions.names)


def _matches(graph: GraphView, name: str) -> Sequence[GraphNode]:
    """The nodes a name the query uses means, none when it means too many to start from."""
    found = graph.lookup(name)
    return found if len(found) <= _MAX_MATCHES else ()


def _focus_seeds(graph: GraphView, focus: Sequence[str]) -> tuple[dict[str, _Seed], list[str]]:
    seeds: dict[str, _Seed] = {}
    unknown: list[str] = []
    for item in focus:
        path, _, line = item.rpartition(":")
        if path and line.isdigit() and "://" not in item:
            found = _at_line(graph, path, int(line))
        else:
            found = list(graph.lookup(item))
        if not found:
            unknown.append(item)
        for node in found:
            _add(seeds, node.uri, 1.0 / len(found), f"focus {item}", full=True)
    return seeds, unknown


def _callers_seeds(graph: GraphView, mentions: CodeMentions) -> dict[str, _Seed]:
    """Rule 8: what the query asks the callers of, from its skeleton down."""
    seeds: dict[str, _Seed] = {}
    for name in mentions.callers_of:
        found = _matches(graph, name)
        for node in found:
            _add(seeds, node.uri, 1.0 / len(found), f"callers asked of {name}")
    return seeds


def _query_seeds(
    graph: GraphView,
    request: ContextRequest,
    backends: Backends,
    options: NavigatorOptions,
    mentions: CodeMentions,
) -> dict[str, _Seed]:
    seeds: dict[str, _Seed] = {}
    for location in mentions.locations:
        for node in _at_line(graph, location.path, location.line):
            _add(seeds, node.uri, _LOCATION, f"{location.path}:{location.line}", full=True)
    named = (
        [(path, _PATH, False) for path in mentions.paths]
        + [(name, _DOTTED, True) for name in mentions.dotted]
        + [(name, _SYMBOL, True) for name in mentions.symbols]
    )
    for name, weight, full in named:
        found = _matches(graph, name)
        for node in found:
            _add(seeds, node.uri, weight / len(found), f"named in the query: {name}", full)
    for term in query_terms(request.query):
        found = [node for node in graph.lookup(term) if node.kind in _FILE_KINDS]
        for node in found if len(found) <= _MAX_MATCHES else ():
            _add(seeds, node.uri, _FILE_NAME / len(found), f"file named in the query: {term}")
    if backends.text is not None and options.text_hits:
        _text_seeds(seeds, graph, request, backends, options, _TEXT_WHEN_NAMED if seeds else 1.0)
    return seeds


def _text_seeds(
    seeds: dict[str, _Seed],
    graph: GraphView,
    request: ContextRequest,
    backends: Backends,
    options: NavigatorOptions,
    factor: float,
) -> None:
    """The best text hits, and each file by the evidence of all its hits (rule 1), their
    weights times `factor`.
    """
    assert backends.text is not None
    hits = backends.text.search(request.query, options.text_hits, request.filters)
    if not hits or hits[0].score <= 0:
        return
    best = hits[0].score
    evidence: dict[str, float] = {}
    counted: dict[str, int] = {}
    for hit in hits:
        path = hit.fragment.source.path
        share = options.file_evidence ** counted.get(path, 0)
        evidence[path] = evidence.get(path, 0.0) + share * hit.score / best
        counted[path] = counted.get(path, 0) + 1
        weight = factor * _TEXT_HIT * hit.score / best
        _add(seeds, hit.fragment.uko_uri, weight, "keyword hit", full=True)
    strongest = max(evidence.values())
    for path, value in evidence.items():
        files = [node for node in graph.lookup(path) if node.path == path]
        for node in files:
            weight = factor * _TEXT_FILE * value / strongest
            _add(seeds, node.uri, weight, f"keyword evidence in {counted[path]} fragments")


def _at_line(graph: GraphView, path: str, line: int) -> list[GraphNode]:
    """The innermost definition of the file at `path` that holds `line` (the file itself
    when none does).
    """
    found: list[GraphNode] = []
    for file in graph.lookup(path):
        if file.kind not in _FILE_KINDS:
            continue
        inner = file
        while True:
            children = [
                child
                for edge in graph.neighbours(inner.uri, ("contains",), "out")
                if (child := graph.node(edge.target)) is not None
                and child.start_line <= line <= child.end_line
            ]
            if not children:
                break
            inner = children[0]
        found.append(inner)
    return found


def _add(seeds: dict[str, _Seed], uri: str, weight: float, label: str, full: bool = False) -> None:
    """Keep the heavier seed of a node; a node seeded twice keeps the first label."""
    seed = seeds.get(uri)
    if seed is None:
        seeds[uri] = _Seed(weight, label, full)
    else:
        seed.weight = max(seed.weight, weight)
        seed.full = seed.full or full


# -- rules 2 and 3: the walk ---------------------------------------------------------------


def _steps(
    graph: GraphView, walk: _Walk, uri: str, options: NavigatorOptions
) -> list[tuple[float, str, str, bool]]:
    """(weight, neighbour, step text, whether the neighbour calls `uri`) of the edges at
    `uri` worth walking, heaviest first, at most `max_neighbours`.
    """
    found: list[tuple[float, str, str, bool]] = []
    for edge in graph.neighbours(uri):
        forward = edge.source == uri
        other = edge.target if forward else edge.source
        # Rule 8: to a caller is the way a question about callers goes.
        along = forward != (walk.callers and edge.type == "calls")
        weight = walk.weights.get(edge.type, 0.0) * (1.0 if along else options.reverse_factor)
        if weight <= 0 or other == uri:
            continue
        known = _known(graph, walk, other)
        if known is None or known[0] in _PASSED_OVER:
            continue
        found.append((weight, other, edge.type, forward))
    found.sort(key=lambda step: (-step[0], step[1]))
    # Texts only for the steps kept: a large file or a much-called function has hundreds.
    here = _name(graph, walk, uri)
    return [
        (
            weight,
            other,
            f"{edge_type} {'←' if forward else '→'} {here}",
            edge_type == "calls" and not forward,
        )
        for weight, other, edge_type, forward in found[: options.max_neighbours]
    ]


def _known(graph: GraphView, walk: _Walk, uri: str) -> tuple[str, str] | None:
    """The node's kind and name (None: no such node), looked up once per walk."""
    known = walk.names.get(uri)
    if known is None:
        node = graph.node(uri)
        if node is None:
            return None
        # A plain tuple of strings, which the collector stops tracking: a walk keeps
        # hundreds, and a `GraphNode` it would walk at every collection of the request.
        known = walk.names[uri] = (node.kind, node.name)
    return known


def _name(graph: GraphView, walk: _Walk, uri: str) -> str:
    known = _known(graph, walk, uri)
    return known[1] if known is not None else uri


def _edges_ready(graph: GraphView, uri: str, until: float) -> bool:
    """Rule 7: whether the graph's edges are ready by `until` (a `perf_counter` time). The
    first read of any node's edges resolves them all; it runs on a thread of its own, so
    that it goes on (for the next request) when this one stops waiting.
    """
    done = threading.Event()

    def read() -> None:
        # A failure is left to the walks: this request's own read of the edges (or, if it
        # stopped waiting, the next request's) meets it again and has it reported. Raised
        # here, it would only be a stray traceback on stderr.
        try:
            with contextlib.suppress(Exception):
                graph.neighbours(uri)
        finally:
            done.set()

    threading.Thread(target=read, name="navigator-edges", daemon=True).start()
    return done.wait(max(0.0, until - time.perf_counter()))


def _breadth(
    graph: GraphView,
    seeds: Mapping[str, _Seed],
    options: NavigatorOptions,
    deadline: float,
    callers: bool,
) -> _Walk:
    walk = _Walk(options.edge_weights(), callers)
    for uri, seed in sorted(seeds.items()):
        if _known(graph, walk, uri) is not None:
            walk.reached[uri] = _Reach(seed.weight, 0, seed.label, full=seed.full)
    frontier = sorted(walk.reached, key=lambda uri: (-walk.reached[uri].reach, uri))
    for hops in range(1, options.max_hops + 1):
        following: list[str] = []
        for uri in frontier:
            if time.perf_counter() > deadline or len(walk.reached) >= options.max_nodes:
                walk.stopped = time.perf_counter() > deadline
                return walk
            here = walk.reached[uri]
            for weight, other, step, caller in _steps(graph, walk, uri, options):
                reach = here.reach * weight * options.hop_decay
                # Rule 8: a caller of what the question is about is proposed in full.
                full = walk.callers and caller and hops == 1
                known = walk.reached.get(other)
                if known is None:
                    if len(walk.reached) >= options.max_nodes:
                        break
                    walk.reached[other] = _Reach(reach, hops, here.seed, step, full)
                    following.append(other)
                elif known.hops == hops and reach > known.reach:
                    known.reach, known.seed, known.step = reach, here.seed, step
                    known.full = known.full or full
                walk.edges[(uri, other)] = max(walk.edges.get((uri, other), 0.0), weight)
        frontier = sorted(following, key=lambda uri: (-walk.reached[uri].reach, uri))
    return walk


def _depth(
    graph: GraphView,
    walk: _Walk,
    options: NavigatorOptions,
    deadline: float,
    wanted: int,
    variants: _Variants,
) -> None:
    """Rule 3: from the best nodes at the edge of the breadth, the heaviest untaken edge,
    again and again, while the reached nodes hold less than `wanted` tokens.
    """
    edge = max(reach.hops for reach in walk.reached.values())
    starts = sorted(
        (uri for uri, reach in walk.reached.items() if reach.hops == edge),
        key=lambda uri: (-walk.reached[uri].reach, uri),
    )
    held = _held(walk, variants, wanted)
    for start in starts:
        uri = start
        for _ in range(options.depth_first_hops):
            if time.perf_counter() > deadline:
                walk.stopped = True
                return
            if held >= wanted or len(walk.reached) >= options.max_nodes:
                return
            here = walk.reached[uri]
            step = next(
                (s for s in _steps(graph, walk, uri, options) if s[1] not in walk.reached), None
            )
            if step is None:
                break
            weight, other, text, _ = step
            walk.edges[(uri, other)] = weight
            walk.reached[other] = _Reach(
                here.reach * weight * options.hop_decay, here.hops + 1, here.seed, text
            )
            held += _tokens(variants, other)
            uri = other


class _Texts:
    """The stored texts of nodes, read in batches (`_FIRST_BATCH`, then twice as many each
    time) in the order they are about to be asked for (`expect`); a node outside that order
    (the depth-first part adds them as it goes) alone. Each node keeps the answer of the
    read that held it, so that a store that makes fragments only when asked makes them for
    the nodes used, not the whole batch.
    """

    def __init__(
        self, read: Callable[[list[str]], Mapping[str, Sequence[ContextFragment]]]
    ) -> None:
        self._read = read
        self._found: dict[str, Mapping[str, Sequence[ContextFragment]]] = {}
        self._order: list[str] = []
        self._at: dict[str, int] = {}
        self._batch = _FIRST_BATCH

    def expect(self, order: list[str]) -> None:
        """The nodes about to be asked for, in that order."""
        self._order, self._at = order, {uri: at for at, uri in enumerate(order)}
        self._batch = _FIRST_BATCH

    def __call__(self, uri: str) -> Sequence[ContextFragment]:
        found = self._found.get(uri)
        if found is None:
            at = self._at.get(uri)
            if at is None:
                coming = [uri]
            else:
                coming, self._batch = self._order[at : at + self._batch], 2 * self._batch
            batch = [node for node in coming if node not in self._found]
            found = self._read(batch)
            self._found.update(dict.fromkeys(batch, found))
        return found.get(uri, ())


def _held(walk: _Walk, variants: _Variants, enough: int) -> int:
    """Tokens the reached nodes hold at the depth they would be proposed at, counted
    until there are `enough`.
    """
    held = 0
    for uri, reach in walk.reached.items():
        held += _tokens(variants, uri, _depth_of(reach))
        if held >= enough:
            break
    return held


def _tokens(variants: _Variants, uri: str, depth: int = 0) -> int:
    stored = variants(uri)
    fitting = [f for f in stored if f.detail_depth <= depth] or list(stored[-1:])
    return fitting[0].token_count if fitting else 0


def _depth_of(reach: _Reach) -> int:
    """Rules 5 and 8: the deepest depth a node is proposed at."""
    if reach.full:
        return 9
    return 4 if reach.hops <= 1 else 0


# -- rules 4 and 5: rank and propose -------------------------------------------------------


def _scores(walk: _Walk, seeds: Mapping[str, _Seed], options: NavigatorOptions) -> dict[str, float]:
    uris = sorted(walk.reached)
    ranks = _pagerank(uris, walk.edges, seeds, options.damping)
    top_reach = max(reach.reach for reach in walk.reached.values()) or 1.0
    top_rank = max(ranks.values(), default=0.0) or 1.0
    share = options.pagerank_weight
    return {
        uri: (1 - share) * walk.reached[uri].reach / top_reach
        + share * ranks.get(uri, 0.0) / top_rank
        for uri in uris
    }


def _pagerank(
    uris: Sequence[str],
    edges: Mapping[tuple[str, str], float],
    seeds: Mapping[str, _Seed],
    damping: float,
) -> dict[str, float]:
    """Personalised PageRank over the walked subgraph by power iteration (numpy): edges
    walked both ways carry their walked weights; a node without edges returns its rank to
    the seeds.
    """
    import numpy as np

    index = {uri: position for position, uri in enumerate(uris)}
    size = len(uris)
    seed = np.zeros(size)
    for uri, value in seeds.items():
        if uri in index:
            seed[index[uri]] = value.weight
    if not seed.sum():
        return {}
    seed /= seed.sum()
    walked = [(index[a], index[b], w) for (a, b), w in edges.items() if a in index and b in index]
    ends = np.array([(a, b) for a, b, _ in walked], dtype=np.int64).reshape(-1, 2)
    # In the order of the edges' URIs (`uris` is sorted, so the positions' order is theirs):
    # the sums below add in that order, and so give the same bits from run to run.
    order = np.lexsort((ends[:, 1], ends[:, 0]))
    ends, walked_weight = ends[order], np.array([w for _, _, w in walked])[order]
    source = np.concatenate((ends[:, 0], ends[:, 1]))
    target = np.concatenate((ends[:, 1], ends[:, 0]))
    weight = np.concatenate((walked_weight, walked_weight))
    out = np.bincount(source, weights=weight, minlength=size)
    share = np.divide(weight, out[source], out=np.zeros_like(weight), where=out[source] > 0)
    dangling_at = np.flatnonzero(out == 0)
    teleport = (1 - damping) * seed
    rank = seed.copy()
    for _ in range(50):
        flow = np.bincount(target, weights=rank[source] * share, minlength=size)
        dangling = rank[dangling_at].sum()
        following = damping * (flow + dangling * seed) + teleport
        if np.abs(following - rank).sum() < 1e-9:
            rank = following
            break
        rank = following
    return dict(zip(uris, rank.tolist(), strict=True))


def _by_score(scores: Mapping[str, float]) -> list[str]:
    """Nodes best first, ties by URI."""
    return sorted(scores, key=lambda uri: (-scores[uri], uri))


def _candidates(
    walk: _Walk,
    scores: Mapping[str, float],
    variants: _Variants,
    wanted: int,
    depth_values: Mapping[int, float],
    note: str,
) -> list[Candidate]:
    """Rule 5, best nodes first until their deepest texts hold `wanted` tokens."""
    proposals: list[tuple[float, str, Candidate]] = []
    held = nodes = 0
    for uri in _by_score(scores):
        if held >= wanted and nodes >= _AT_LEAST:
            break
        score, reach = scores[uri], walk.reached[uri]
        deepest = _depth_of(reach)
        where = "focus" if reach.hops == 0 else f"{reach.hops} hop{'s' if reach.hops > 1 else ''}"
        path = reach.seed if reach.hops == 0 else f"{reach.step}, {where} from {reach.seed}"
        reason = f"{path}; score {score:.3f}{note}"
        fragments = [
            f
            for f in variants(uri)
            if f.detail_depth <= deepest and depth_values.get(f.detail_depth, 0.0)
        ]
        # The node's score goes to its most valued depth (its deepest, unless configured
        # otherwise); a depth the packer values at 0 is not proposed.
        top = max((depth_values.get(f.detail_depth, 0.0) for f in fragments), default=1.0)
        for fragment in fragments:
            value = score * depth_values.get(fragment.detail_depth, 0.0) / top
            candidate = Candidate(fragment=fragment, score=value, reason=reason)
            proposals.append((value, fragment.id, candidate))
        if fragments:
            held += fragments[0].token_count
            nodes += 1
    proposals.sort(key=lambda item: (-item[0], item[1]))
    return [candidate for _, _, candidate in proposals]


@hookimpl
def contextpipe_strategies(settings: Settings) -> Sequence[ContextStrategy]:
    """Register `breadth-depth-navigator`, configured from its options table."""
    options = strategy_options(settings, NAME, NavigatorOptions)
    return [BreadthDepthNavigator(options, settings.packing.depth_values())]
