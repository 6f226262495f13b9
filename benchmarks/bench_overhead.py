"""The framework's own overhead for 500 candidates: allocator, executor, fusion, packing,
rendering and result building, with strategies that cost nothing (`_instant`).

Target (issue 2, point 11): at most 5 ms for 500 candidates.

Two layouts: one strategy proposing 500 candidates, or five proposing 100 each from an
overlapping pool. The candidates are real fragments of the 10k store, so that packing's
depth fallbacks read real variants from SQLite. With a 4000-token budget about 27 of the 500
fit each strategy's allocation and about as many more lie beyond it, within reach of the
packer (twice the allocation); the rest are left out unchecked. `time_fuse_500` and
`Pack500` run fusion and packing directly on all 500, and `LargeBudget` runs `assemble` at
budgets where most of the 500 reach the packer. The baseline,
a yardstick measured in the same run, is rendering the final output and counting its tokens
from scratch. (The packer itself counts the output from the cached counts of its blocks.)
"""

from __future__ import annotations

import re
import statistics
import time
from typing import Any

import contextpipe
from contextpipe.assembly.budget import AllocationRequest
from contextpipe.assembly.fusion import RankedList, fuse
from contextpipe.assembly.packing import Packer, PackingPolicy
from contextpipe.assembly.rendering import renderer_for
from contextpipe.assembly.variants import RequestVariants

from ._corpus import BUDGET, QUERIES, QUICK, build_corpora, memoized
from ._instant import LAYOUTS, candidate_lists, register_instant

#: The store the candidates come from (depth variants are looked up there).
STORE_SIZE = 10_000
# A strategy report's reason when some of its candidates lie beyond its allocation.
_CUT = re.compile(r"(\d+) candidates beyond its allocation")
#: Assemblies per stage median.
STAGE_RUNS = 30 if QUICK else 100


def open_overhead_env(
    projects: dict[int, str], layout: str, budget: int = BUDGET
) -> dict[str, Any]:
    """A pipeline on the 10k store with only instant strategies, and what the parts need."""
    pipeline = contextpipe.Pipeline.open(
        project_dir=projects[STORE_SIZE],
        environ={"CONTEXTPIPE_DISABLE_PLUGINS": "simple-keyword"},
    )
    lists = candidate_lists(pipeline.store, layout)
    register_instant(pipeline, lists)
    request = pipeline.request(QUERIES[0], budget=budget)
    context = pipeline.assemble(request)  # warm: tokenizer, threads, SQLite pages
    policy = PackingPolicy.from_settings(pipeline.settings.packing)
    ranked = [
        RankedList(f"instant-{i}", "bench", 1.0, candidates) for i, candidates in enumerate(lists)
    ]
    return {
        "pipeline": pipeline,
        "request": request,
        "context": context,
        "policy": policy,
        "ranked": ranked,
        "fused": fuse(ranked, pipeline.settings.fusion.rrf_k),
        "renderer": renderer_for(request.output),
        "tokenizer": pipeline.tokenizer,
    }


class FrameworkOverhead:
    """assemble with instant strategies (budget 4000), fusion of all 500 candidates, the
    allocator, and the baseline: rendering and counting the same output alone.
    """

    params = (list(LAYOUTS),)
    param_names = ("candidates",)
    setup_cache = staticmethod(build_corpora)
    timeout = 300

    def setup(self, projects: dict[int, str], layout: str) -> None:
        self.env = open_overhead_env(projects, layout)
        self.selected = list(self.env["context"].fragments)
        self.claims = [
            AllocationRequest(name=r.strategy, weight=1.0, quality=1.0, confidence=1.0)
            for r in self.env["ranked"]
        ]

    def teardown(self, projects: dict[int, str], layout: str) -> None:
        self.env["pipeline"].close()

    def time_assemble(self, projects: dict[int, str], layout: str) -> None:
        self.env["pipeline"].assemble(self.env["request"])

    def time_allocate(self, projects: dict[int, str], layout: str) -> None:
        contextpipe.BudgetAllocator().allocate(BUDGET, self.claims)

    def time_fuse_500(self, projects: dict[int, str], layout: str) -> None:
        fuse(self.env["ranked"], self.env["pipeline"].settings.fusion.rrf_k)

    def time_baseline_render_count(self, projects: dict[int, str], layout: str) -> None:
        env = self.env
        env["tokenizer"].count(env["renderer"].render(self.selected, env["request"]).counted)


class Pack500:
    """`Packer.pack` of all 500 candidates (fused) into the budget, directly.

    Three neighbouring budgets, because the cost depends on how the budget ends: once fewer
    than 2 tokens are left every remaining item is dropped at once, otherwise each one is
    still compared with every selected item, counted and looked up for shallower variants.
    """

    params = (list(LAYOUTS), [3900, 4000, 4100])
    param_names = ("candidates", "budget")
    setup_cache = staticmethod(build_corpora)
    timeout = 300

    def setup(self, projects: dict[int, str], layout: str, budget: int) -> None:
        self.env = open_overhead_env(projects, layout, budget)

    def teardown(self, projects: dict[int, str], layout: str, budget: int) -> None:
        self.env["pipeline"].close()

    def time_pack_500(self, projects: dict[int, str], layout: str, budget: int) -> None:
        env = self.env
        packer = Packer(env["renderer"], env["tokenizer"], env["policy"])
        lookup = RequestVariants(env["pipeline"].store, env["request"].filters)
        packer.pack(env["fused"], env["request"], lookup)


class LargeBudget:
    """assemble with one instant strategy proposing 500 candidates, at budgets where most of
    them survive the allocation cut and reach fusion and packing.
    """

    params = ([16_000, 64_000],)
    param_names = ("budget",)
    setup_cache = staticmethod(build_corpora)
    timeout = 300

    def setup(self, projects: dict[int, str], budget: int) -> None:
        self.env = open_overhead_env(projects, "1x500", budget)

    def teardown(self, projects: dict[int, str], budget: int) -> None:
        self.env["pipeline"].close()

    def time_assemble(self, projects: dict[int, str], budget: int) -> None:
        self.env["pipeline"].assemble(self.env["request"])


class OverheadStages:
    """Medians over repeated assemblies (instant strategies, budget 4000) of each stage, in
    ms, all from the same assemblies (measured once per run, see `_corpus.memoized`).

    `wall` is the caller's view of `assemble`; `elapsed` is `AssembledContext.elapsed_ms`
    (inside the event loop); `executor`, `acceptance`, `fusion`, `packing` are its
    `timings_ms`; `other` is elapsed minus those (request, planning and allocation, result
    models, dropped list); `outside` is wall minus elapsed (the event loop, the result
    model, logging). `baseline` renders and counts the final output alone; `ratio` is
    wall / baseline. `kept` is how many of the 500 proposed candidates are not beyond an
    allocation, `selected` how many fragments are output.
    """

    params = (list(LAYOUTS),)
    param_names = ("candidates",)
    setup_cache = staticmethod(build_corpora)
    timeout = 300
    unit = "ms"

    def setup(self, projects: dict[int, str], layout: str) -> None:
        def measure() -> dict[str, float]:
            env = open_overhead_env(projects, layout)
            try:
                return stage_medians(env, STAGE_RUNS)
            finally:
                env["pipeline"].close()

        self.stages = memoized(projects, f"stages-{layout}", measure)

    def track_wall(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["wall"]

    def track_elapsed(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["elapsed"]

    def track_executor(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["executor"]

    def track_acceptance(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["acceptance"]

    def track_fusion(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["fusion"]

    def track_packing(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["packing"]

    def track_other(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["other"]

    def track_outside(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["outside"]

    def track_baseline(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["baseline"]

    def track_ratio(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["ratio"]

    track_ratio.unit = "x"  # type: ignore[attr-defined]

    def track_kept(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["kept"]

    track_kept.unit = "candidates"  # type: ignore[attr-defined]

    def track_selected(self, projects: dict[int, str], layout: str) -> float:
        return self.stages["selected"]

    track_selected.unit = "fragments"  # type: ignore[attr-defined]


def stage_medians(env: dict[str, Any], runs: int) -> dict[str, float]:
    """Median stage times over `runs` assemblies; see `OverheadStages`."""
    pipeline, request = env["pipeline"], env["request"]
    rows: dict[str, list[float]] = {}
    context = env["context"]
    for _ in range(runs):
        started = time.perf_counter()
        context = pipeline.assemble(request)
        wall = (time.perf_counter() - started) * 1000
        timings = context.timings_ms
        stages = {
            "wall": wall,
            "elapsed": context.elapsed_ms,
            "executor": timings["strategies"],
            "acceptance": timings["acceptance"],
            "fusion": timings["fusion"],
            "packing": timings["packing"],
            "other": context.elapsed_ms - sum(timings.values()),
            "outside": wall - context.elapsed_ms,
        }
        for name, value in stages.items():
            rows.setdefault(name, []).append(value)
    selected = list(context.fragments)
    renderer, tokenizer = env["renderer"], env["tokenizer"]
    for _ in range(runs):
        started = time.perf_counter()
        tokenizer.count(renderer.render(selected, request).counted)
        rows.setdefault("baseline", []).append((time.perf_counter() - started) * 1000)
    result = {name: round(statistics.median(values), 3) for name, values in rows.items()}
    result["ratio"] = round(result["wall"] / result["baseline"], 1)
    proposed = sum(report.proposed for report in context.strategies)
    reasons = [report.reason for report in context.strategies]
    cut = sum(int(match.group(1)) for reason in reasons if (match := _CUT.search(reason)))
    result["proposed"] = float(proposed)
    result["kept"] = float(proposed - cut)
    result["selected"] = float(len(context.fragments))
    return result
