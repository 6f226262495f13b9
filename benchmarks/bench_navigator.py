"""The breadth-depth-navigator at 10k and 100k fragments (issue 10), on the stores of
`_corpus.build_corpora` (no vectors: the semantic strategies are skipped):

- `NavigatorGraph.track_graph_seconds`: resolving the graph (its edges, by `warm_up`), as
  its first use after an index change does (every request that walks it afterwards reuses
  it);
- `NavigatorLatency.track_p50_ms` / `track_p95_ms`: `assemble` (budget 4000) with the
  navigator alone, from a focus (`focus=(name,)`) or from a query naming a symbol in
  backticks (``why does `name` fail?``), over 200 definitions of the corpus (every k-th in
  URI order), in a quick run too;
- `NavigatorMix.track_*`: the same code questions under the default configuration (the
  navigator joins `simple-keyword`) against `simple-keyword` alone, timed in turn on each
  query in the same process: the navigator's share of the 35 ms p95 budget;
- `NavigatorMix.track_ratio_p95`: the default mix's p95 over `simple-keyword` alone's.
  On a shared machine the milliseconds move by a fifth from one run to the next with the
  same code; timed in turn on each query, both move alike, so the ratio is the figure to
  compare across runs.

Every measurement first warms the pipeline up (`Pipeline.warm_up`: the store read into the
OS cache, the tokenizer's encoder built, the graph resolved, what lives as long as the
process frozen out of garbage collection) and with a few requests. The graph's figure is
its resolution alone: the store's pages are in the cache by then.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import contextpipe

from ._corpus import BUDGET, LATENCY_SIZES, build_corpora, memoized, percentiles

#: Requests per percentile measurement, quick or not: the p95 of 50 is their third slowest,
#: which one pause of a shared host sets; 200 cost the quick run about 10 s a store.
REQUESTS = 200
_NAVIGATOR = {"breadth-depth-navigator": contextpipe.StrategySelection()}
_KEYWORD = {"simple-keyword": contextpipe.StrategySelection()}


def _names(pipeline: contextpipe.Pipeline, count: int) -> list[str]:
    """`count` definition names of the store, every k-th in URI order (deterministic)."""
    graph = pipeline.graph()
    uris = sorted(_definitions(pipeline))
    step = max(1, len(uris) // count)
    names: list[str] = []
    for uri in uris[::step][:count]:
        node = graph.node(uri)
        if node is not None:
            names.append(node.name.rsplit(".", 1)[-1])
    return names


def _definitions(pipeline: contextpipe.Pipeline) -> list[str]:
    graph = pipeline.graph()
    definitions: list[str] = []
    for uri in sorted({edge.target for edge in graph.neighbours("uko://repo/")}):
        definitions.extend(_below(graph, uri))
    return definitions


def _below(graph: contextpipe.GraphView, uri: str) -> list[str]:
    """Functions and classes under a folder or file node, depth first."""
    found: list[str] = []
    stack = [uri]
    while stack:
        here = stack.pop()
        for edge in graph.neighbours(here, ("contains",), "out"):
            node = graph.node(edge.target)
            if node is None:
                continue
            if node.kind in ("function", "class", "method"):
                found.append(node.uri)
            elif node.kind in ("directory", "module"):
                stack.append(node.uri)
    return found


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _measure(projects: dict[int, str], fragments: int) -> dict[str, float]:
    """Every figure of one store, from one process (see the module docstring)."""
    pipeline = contextpipe.Pipeline.open(project_dir=projects[fragments])
    try:
        # As a long-running service would before its first request (the graph's part timed).
        graph_seconds = pipeline.warm_up().graph_seconds or 0.0
        names = _names(pipeline, REQUESTS)
        questions = [f"why does `{name}` fail?" for name in names]
        for name, question in zip(names[:5], questions[:5], strict=True):
            pipeline.assemble(question, budget=BUDGET, focus=(name,), strategies=_NAVIGATOR)
            pipeline.assemble(question, budget=BUDGET)
        focus = [
            _timed(
                lambda n=n: pipeline.assemble(
                    "what does this do?", budget=BUDGET, focus=(n,), strategies=_NAVIGATOR
                )
            )
            for n in names
        ]
        query = [
            _timed(lambda q=q: pipeline.assemble(q, budget=BUDGET, strategies=_NAVIGATOR))
            for q in questions
        ]
        mix: list[float] = []
        keyword: list[float] = []
        for question in questions:
            mix.append(_timed(lambda q=question: pipeline.assemble(q, budget=BUDGET)))
            keyword.append(
                _timed(lambda q=question: pipeline.assemble(q, budget=BUDGET, strategies=_KEYWORD))
            )
    finally:
        pipeline.close()
    figures: dict[str, float] = {"graph_s": round(graph_seconds, 3)}
    for label, samples in (("focus", focus), ("query", query), ("mix", mix), ("keyword", keyword)):
        cuts = percentiles(samples)
        figures[f"{label}_p50"], figures[f"{label}_p95"] = cuts["p50"], cuts["p95"]
    figures["mix_ratio_p95"] = round(figures["mix_p95"] / figures["keyword_p95"], 3)
    return figures


class _Figures:
    params: tuple[list[int], ...] = (list(LATENCY_SIZES),)
    param_names = ("fragments",)
    setup_cache = staticmethod(build_corpora)
    timeout = 1200

    def setup(self, projects: dict[int, str], fragments: int) -> None:
        self.figures = memoized(
            projects, f"navigator-{fragments}", lambda: _measure(projects, fragments)
        )


class NavigatorGraph(_Figures):
    """Seconds to resolve the graph on first use."""

    unit = "s"

    def track_graph_seconds(self, projects: dict[int, str], fragments: int) -> float:
        return self.figures["graph_s"]


class NavigatorLatency(_Figures):
    """The navigator alone: p50 and p95 of `assemble` from a focus and from a query."""

    params = (list(LATENCY_SIZES), ["focus", "query"])
    param_names = ("fragments", "start")
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int, start: str = "") -> None:
        super().setup(projects, fragments)

    def track_p50_ms(self, projects: dict[int, str], fragments: int, start: str) -> float:
        return self.figures[f"{start}_p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int, start: str) -> float:
        return self.figures[f"{start}_p95"]


class NavigatorMix(_Figures):
    """Code questions under the default configuration, and keyword alone in the same run."""

    params = (list(LATENCY_SIZES), ["default", "keyword"])
    param_names = ("fragments", "strategies")
    unit = "ms"

    def setup(self, projects: dict[int, str], fragments: int, strategies: str = "") -> None:
        super().setup(projects, fragments)

    def track_p50_ms(self, projects: dict[int, str], fragments: int, strategies: str) -> float:
        return self.figures["mix_p50" if strategies == "default" else "keyword_p50"]

    def track_p95_ms(self, projects: dict[int, str], fragments: int, strategies: str) -> float:
        return self.figures["mix_p95" if strategies == "default" else "keyword_p95"]

    def track_ratio_p95(self, projects: dict[int, str], fragments: int, strategies: str) -> float:
        """The default mix's p95 over `simple-keyword` alone's (1 for keyword alone)."""
        return self.figures["mix_ratio_p95"] if strategies == "default" else 1.0

    track_ratio_p95.unit = "x"  # type: ignore[attr-defined]
