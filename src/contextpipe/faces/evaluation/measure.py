"""Measuring the assembled context on the judged queries of a BEIR set.

Method (figures are only comparable when measured the same way):

1. Each judged query is assembled with `Pipeline.assemble(query, budget=8000,
   output="json")`, as `contextpipe query QUERY --budget 8000 --format json` does. Its
   ranking is the order of the result's fragments, each mapped to its document by the
   name of its source file, each document once, at its first position.
2. nDCG@10, Recall@10 and Recall@100 of those rankings are computed by ir-measures
   (trec_eval's definitions; the qrels' scores are the gains) and averaged over every
   judged query: a query whose context holds no relevant document counts 0. A context
   at budget 8000 holds about 20 abstracts, so Recall@100 is the recall of the whole
   context.
3. `budget_hit@B` is the share of judged queries whose context assembled at budget B
   (500, 1000, 2000 tokens) holds at least one relevant document.
4. The default mix is a request that names no strategy. Each loaded strategy is also
   measured alone (a request naming only it); for a query where the mix ran that strategy
   and no other, its result alone is the mix's, which is not assembled again. A strategy
   that ran for no query (disabled, a capability the store lacks, ...) has no figures:
   `not_run` says why.
5. Figures are rounded to 4 decimals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import ir_measures
from ir_measures import R, nDCG

from contextpipe import OutputFormat, Pipeline, StrategySelection

from ._common import why_not
from .beir import BeirSet
from .project import Project

#: The budget whose context gives the ranking (see the module rules).
RANKING_BUDGET = 8000
#: The budgets of `budget_hit@B`.
HIT_BUDGETS = (500, 1000, 2000)
_OUTPUT = OutputFormat.JSON
_NDCG_10, _RECALL_10, _RECALL_100 = nDCG @ 10, R @ 10, R @ 100


class EvalProgress(Protocol):
    """Told of each series of queries, then of each query done."""

    def started(self, label: str, total: int, /) -> None: ...

    def advance(self) -> None: ...


@dataclass(frozen=True)
class Figures:
    """What one configuration scored over the judged queries."""

    queries: int
    ndcg_10: float
    recall_10: float
    recall_100: float
    budget_hits: Mapping[int, float]

    def as_json(self) -> dict[str, int | float]:
        """The figures under the keys of `contextpipe eval --format json`."""
        hits = {f"budget_hit@{budget}": share for budget, share in self.budget_hits.items()}
        return {
            "queries": self.queries,
            "ndcg@10": self.ndcg_10,
            "recall@10": self.recall_10,
            "recall@100": self.recall_100,
            **hits,
        }


@dataclass(frozen=True)
class Evaluation:
    """The default mix's figures, each strategy's alone, and why some strategies have none."""

    mix: Figures
    per_strategy: Mapping[str, Figures]
    not_run: Mapping[str, str]

    def as_json(self) -> dict[str, object]:
        """`contextpipe eval --format json`: the mix's figures and `per_strategy`."""
        per_strategy = {name: figures.as_json() for name, figures in self.per_strategy.items()}
        return {**self.mix.as_json(), "per_strategy": per_strategy}


class _Outcome(NamedTuple):
    """One query under one configuration: its ranking, a hit per budget of HIT_BUDGETS,
    the strategies that ran (status ok), and every strategy's (status, reason).
    """

    ranking: tuple[str, ...]
    hits: tuple[bool, ...]
    ran: frozenset[str]
    reports: Mapping[str, tuple[str, str]]


def evaluate(project: Project, data: BeirSet, progress: EvalProgress | None = None) -> Evaluation:
    """The figures of the default mix and of each loaded strategy alone (module rules)."""
    pipeline = project.open()
    try:
        mix = _series(pipeline, project, data, progress, "default mix")
        per_strategy: dict[str, Figures] = {}
        not_run: dict[str, str] = {}
        for registered in pipeline.strategies:
            name = registered.strategy.name
            alone = _series(pipeline, project, data, progress, name, mix)
            if any(name in outcome.ran for outcome in alone.values()):
                per_strategy[name] = _figures(data, alone)
            else:
                not_run[name] = why_not(name, (o.reports for o in alone.values()))
        return Evaluation(_figures(data, mix), per_strategy, not_run)
    finally:
        pipeline.close()


class MixScore(NamedTuple):
    """nDCG@10 of the default mix, and the strategies that ran (`ok`) for some query."""

    ndcg_10: float
    ran: frozenset[str]


def ndcg_at_10(
    pipeline: Pipeline, project: Project, data: BeirSet, progress: EvalProgress | None = None
) -> MixScore:
    """nDCG@10 of the default mix (rules 1, 2 and 5), without the budget hits: what `tune`
    maximises.
    """
    rankings: dict[str, Sequence[str]] = {}
    ran: set[str] = set()
    for query_id, text in data.queries.items():
        rankings[query_id], reports = _ranking(pipeline, project, text, RANKING_BUDGET, None)
        ran.update(name for name, (status, _) in reports.items() if status == "ok")
        if progress is not None:
            progress.advance()
    return MixScore(_measures(data, rankings)[0], frozenset(ran))


def _series(
    pipeline: Pipeline,
    project: Project,
    data: BeirSet,
    progress: EvalProgress | None,
    label: str,
    mix: Mapping[str, _Outcome] | None = None,
) -> dict[str, _Outcome]:
    """Every judged query under the default mix (no `mix` given) or under strategy `label`
    alone, taking the mix's outcome where the mix ran that strategy only (rule 4).
    """
    selection = None if mix is None else {label: StrategySelection()}
    if progress is not None:
        progress.started(label, len(data.queries))
    outcomes: dict[str, _Outcome] = {}
    for query_id, text in data.queries.items():
        earlier = None if mix is None else mix[query_id]
        if earlier is not None and earlier.ran == frozenset({label}):
            outcomes[query_id] = earlier
        else:
            outcomes[query_id] = _outcome(pipeline, project, data, query_id, text, selection)
        if progress is not None:
            progress.advance()
    return outcomes


def _outcome(
    pipeline: Pipeline,
    project: Project,
    data: BeirSet,
    query_id: str,
    text: str,
    selection: Mapping[str, StrategySelection] | None,
) -> _Outcome:
    ranking, reports = _ranking(pipeline, project, text, RANKING_BUDGET, selection)
    relevant = data.qrels[query_id].keys()
    hits = tuple(
        not relevant.isdisjoint(_ranking(pipeline, project, text, budget, selection)[0])
        for budget in HIT_BUDGETS
    )
    ran = frozenset(name for name, (status, _) in reports.items() if status == "ok")
    return _Outcome(ranking, hits, ran, reports)


def _ranking(
    pipeline: Pipeline,
    project: Project,
    text: str,
    budget: int,
    selection: Mapping[str, StrategySelection] | None,
) -> tuple[tuple[str, ...], dict[str, tuple[str, str]]]:
    """The documents of the context assembled for `text`, in order, each once; and each
    strategy's (status, reason).
    """
    context = pipeline.assemble(text, budget=budget, output=_OUTPUT, strategies=selection)
    documents = (project.document(fragment.source.path) for fragment in context.fragments)
    ranking = tuple(dict.fromkeys(d for d in documents if d is not None))
    return ranking, {r.name: (r.status, r.reason) for r in context.strategies}


def _figures(data: BeirSet, outcomes: Mapping[str, _Outcome]) -> Figures:
    ndcg, recall_10, recall_100 = _measures(
        data, {query_id: outcome.ranking for query_id, outcome in outcomes.items()}
    )
    count = len(outcomes)
    hits = {
        budget: round(sum(o.hits[i] for o in outcomes.values()) / count, 4)
        for i, budget in enumerate(HIT_BUDGETS)
    }
    return Figures(count, ndcg, recall_10, recall_100, hits)


def _measures(data: BeirSet, rankings: Mapping[str, Sequence[str]]) -> tuple[float, float, float]:
    """nDCG@10, Recall@10 and Recall@100 averaged over every judged query (rule 2)."""
    # trec_eval orders a run by score (ties by document id): give each rank its own score.
    run = {
        query_id: {document: float(len(ranking) - rank) for rank, document in enumerate(ranking)}
        for query_id, ranking in rankings.items()
        if ranking
    }
    # Its signature also takes pandas frames, which pyright cannot see without pandas.
    values = ir_measures.calc_aggregate(  # pyright: ignore[reportUnknownMemberType]
        [_NDCG_10, _RECALL_10, _RECALL_100], data.qrels, run
    )
    return (
        round(values[_NDCG_10], 4),
        round(values[_RECALL_10], 4),
        round(values[_RECALL_100], 4),
    )
