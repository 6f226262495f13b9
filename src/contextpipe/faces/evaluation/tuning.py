"""Tuning: a deterministic search over the settings that order the assembled context.

Rules:

1. The objective is nDCG@10 of the default mix, measured as `evaluate` measures it, on the
   judged queries given. Every trial is a pipeline over the one index of the project, with
   the trial's values as overrides of the user's settings.
2. What is searched, in this order:
   - `strategies.NAME.weight` of each loaded, enabled strategy that ran for some query of
     the first trial, in name order, over its effective weight (the configured one, else
     the strategy's `default_weight`; 1 when that is 0) times each of `WEIGHT_FACTORS`;
     only when two or more such strategies ran (alone, a strategy's weight changes
     nothing: fusion and packing read relative scores; and a strategy that declined or
     was skipped for every query contributes nothing at any weight);
   - `fusion.rrf_k`, the RRF constant, over `RRF_KS`;
   - `packing.mmr_lambda`, relevance against diversity, over `MMR_LAMBDAS`.
3. The search is coordinate ascent: it starts from the user's effective values (the first
   trial, the baseline), then tries each value of each parameter with the other
   parameters at their best so far. A value becomes the best only when its score (rounded
   to 4 decimals, as reported) is higher than the best's: ties keep the earlier, the
   user's value first. A combination already tried is not tried again. A pass that found
   a better value is followed by another (a weight tuned at one `rrf_k` may be beaten at
   the `rrf_k` found after it), at most `PASSES` in all.
4. Same data and settings, same trials in the same order, same winners.
5. Every trial shares one `RetrievalMemo`: a strategy asked the same query at the same
   allocation by an earlier trial (any trial that changed only `rrf_k` or `mmr_lambda`,
   or weights that split the budget alike) is not run again. Only fusion and packing,
   which those settings change, are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from contextpipe import Pipeline, RetrievalMemo

from .beir import BeirSet
from .measure import EvalProgress, MixScore, ndcg_at_10
from .project import Project

#: Candidate strategy weights, as multiples of the strategy's effective weight (rule 2).
WEIGHT_FACTORS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Most passes of coordinate ascent (rule 3).
PASSES = 2
#: Candidate RRF constants.
RRF_KS: tuple[int, ...] = (5, 10, 20, 40, 60, 100)
#: Candidate MMR trade-offs.
MMR_LAMBDAS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0)

#: A tuned setting's value (dotted key -> value).
Values = dict[str, float | int]


@dataclass(frozen=True)
class Parameter:
    """One setting searched, by dotted key, with its candidate values."""

    key: str
    candidates: Sequence[float | int]


@dataclass(frozen=True)
class Trial:
    """The value of every searched setting in one trial, and the nDCG@10 it scored."""

    values: Values
    ndcg_10: float


@dataclass(frozen=True)
class Tuning:
    """Every trial in the order tried; the first is the user's settings."""

    queries: int
    trials: tuple[Trial, ...]

    @property
    def baseline(self) -> Trial:
        """The user's settings as they were."""
        return self.trials[0]

    @property
    def best(self) -> Trial:
        """The winner (rule 3): the first trial of the highest score."""
        return max(self.trials, key=lambda trial: trial.ndcg_10)

    def as_json(self) -> dict[str, object]:
        """`contextpipe tune --format json`, less where the winners were written."""
        return {
            "queries": self.queries,
            "before": self.baseline.ndcg_10,
            "after": self.best.ndcg_10,
            "settings": self.best.values,
            "trials": [{"settings": t.values, "ndcg@10": t.ndcg_10} for t in self.trials],
        }


def searched(project: Project) -> tuple[list[Parameter], Values]:
    """The settings searched on this project (rule 2), in order, and the user's values."""
    pipeline = project.open()
    try:
        values = _current_values(pipeline)
        found = _parameters(pipeline, values)
        return found, {parameter.key: values[parameter.key] for parameter in found}
    finally:
        pipeline.close()


def _parameters(pipeline: Pipeline, values: Values) -> list[Parameter]:
    """The settings searched for this pipeline's strategies (rule 2), in order."""
    settings = pipeline.settings
    enabled = [
        registered.strategy.name
        for registered in pipeline.strategies
        if settings.strategy(registered.strategy.name).enabled
    ]
    weights: list[Parameter] = []
    for name in enabled:
        key = f"strategies.{name}.weight"
        base = values[key] or 1.0
        weights.append(Parameter(key, tuple(base * factor for factor in WEIGHT_FACTORS)))
    return [
        *(weights if len(enabled) > 1 else []),
        Parameter("fusion.rrf_k", RRF_KS),
        Parameter("packing.mmr_lambda", MMR_LAMBDAS),
    ]


def _current_values(pipeline: Pipeline) -> Values:
    """The user's effective value of each setting that may be searched (a strategy's
    weight, when config sets none, is its declared default).
    """
    settings = pipeline.settings
    values: Values = {}
    for registered in pipeline.strategies:
        name = registered.strategy.name
        configured = settings.strategy(name).weight
        values[f"strategies.{name}.weight"] = (
            registered.default_weight if configured is None else configured
        )
    values["fusion.rrf_k"] = settings.fusion.rrf_k
    values["packing.mmr_lambda"] = settings.packing.mmr_lambda
    return values


def tune(project: Project, data: BeirSet, progress: EvalProgress | None = None) -> Tuning:
    """Search the settings of rule 2 by the method of rule 3."""
    found, start = searched(project)
    memo = RetrievalMemo()
    count = 0

    def measured(values: Values) -> MixScore:
        nonlocal count
        count += 1
        if progress is not None:
            changed = _changes(values, start) or "the settings as they are"
            progress.started(f"trial {count}: {changed}", len(data.queries))
        return _score(project, data, values, memo, progress)

    baseline = measured(start)
    found = _ran(found, baseline.ran)
    start = {parameter.key: start[parameter.key] for parameter in found}

    def objective(values: Values) -> float:
        return baseline.ndcg_10 if values == start else measured(values).ndcg_10

    return Tuning(len(data.queries), tuple(search(found, start, objective)))


def _ran(found: Sequence[Parameter], ran: frozenset[str]) -> list[Parameter]:
    """`found` less the weights of strategies that did not run (rule 2), and less every
    weight when fewer than two did.
    """
    weights = [p for p in found if p.key.removeprefix("strategies.").removesuffix(".weight") in ran]
    others = [p for p in found if not p.key.startswith("strategies.")]
    return [*(weights if len(weights) > 1 else []), *others]


def search(
    found: Sequence[Parameter], start: Values, objective: Callable[[Values], float]
) -> list[Trial]:
    """Coordinate ascent (rule 3) over `found` from `start`: every trial in the order
    tried, each combination scored once by `objective`.
    """
    trials: dict[tuple[tuple[str, float | int], ...], Trial] = {}

    def trial(values: Values) -> Trial:
        key = tuple(values.items())
        if key not in trials:
            trials[key] = Trial(values, objective(values))
        return trials[key]

    best = dict(start)
    best_score = trial(best).ndcg_10
    for _ in range(PASSES):
        improved = False
        for parameter in found:
            for candidate in parameter.candidates:
                tried = trial({**best, parameter.key: candidate})
                if tried.ndcg_10 > best_score:
                    best, best_score, improved = tried.values, tried.ndcg_10, True
        if not improved:
            break
    return list(trials.values())


def _score(
    project: Project,
    data: BeirSet,
    values: Mapping[str, float | int],
    memo: RetrievalMemo,
    progress: EvalProgress | None,
) -> MixScore:
    pipeline = project.open(overrides=values, memo=memo)
    try:
        return ndcg_at_10(pipeline, project, data, progress)
    finally:
        pipeline.close()


def _changes(values: Mapping[str, float | int], base: Mapping[str, float | int]) -> str:
    """The settings of `values` that differ from `base`, as `key = value`."""
    return ", ".join(f"{key} = {value}" for key, value in values.items() if base[key] != value)
