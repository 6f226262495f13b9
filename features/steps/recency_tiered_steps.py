"""Steps for the recency and tiered strategies: each asked alone, its candidates read."""

from __future__ import annotations

import fnmatch
import re
import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

from behave import given, then, when
from behave.runner import Context
from testkit import assemble, pipeline, result, set_mtime, write_files

from contextpipe import Candidate, ContextRequest, RequestFilters, RequestScope, StrategySelection
from contextpipe.strategies.recency import RecencyOptions, RecencyStrategy
from contextpipe.strategies.tiered import TieredOptions, TieredStrategy

_TIMINGS = re.compile(r'("elapsed_ms": )[0-9.e+-]+|("timings_ms": )\{[^}]*\}')


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _retrieve(
    context: Context, name: str, request: ContextRequest, strategy: object = None
) -> None:
    """The candidates of strategy `name` (or of `strategy`) alone, as the executor gets them."""
    registered = pipeline(context).strategy(name)
    assert registered is not None, f"{name} is not installed"
    chosen = strategy or registered.strategy
    backends = pipeline(context).store.backends(request.scope)
    context.request = request
    context.candidates = list(chosen.retrieve(request, backends, request.budget))  # type: ignore[attr-defined]


def _item_id(candidate: Candidate) -> str:
    return unquote(candidate.fragment.source.path.rsplit("/", 1)[-1])


# -- recency ---------------------------------------------------------------------------------


@when('I ask recency alone for "{query}" as of "{moment}" with a half-life of {days:d} days')
def recency_half_life(context: Context, query: str, moment: str, days: int) -> None:
    request = ContextRequest(query=query, budget=2000, as_of=_moment(moment))
    strategy = RecencyStrategy(RecencyOptions(half_life_days=days))
    _retrieve(context, "recency", request, strategy)


@when('I ask recency alone for "{query}" as of "{moment}" within the paths "{paths}"')
def recency_in_paths(context: Context, query: str, moment: str, paths: str) -> None:
    filters = RequestFilters(paths=tuple(p.strip() for p in paths.split(",")))
    request = ContextRequest(query=query, budget=2000, as_of=_moment(moment), filters=filters)
    _retrieve(context, "recency", request)


@when('I ask recency alone for "{query}" now')
def recency_now(context: Context, query: str) -> None:
    _retrieve(context, "recency", ContextRequest(query=query, budget=2000))
    context.answers = [*getattr(context, "answers", []), context.candidates]


@when('I ask recency alone for "{query}" a year from now')
def recency_later(context: Context, query: str) -> None:
    later = datetime.now(UTC) + timedelta(days=365)
    _retrieve(context, "recency", ContextRequest(query=query, budget=2000, as_of=later))
    context.answers = [*getattr(context, "answers", []), context.candidates]


@then("both answers are the same candidates with the same scores and reasons")
def same_answers(context: Context) -> None:
    first, second = context.answers
    assert first and first == second, (first, second)


@when('I ask recency alone for "{query}" as of "{moment}"')
def recency_as_of(context: Context, query: str, moment: str) -> None:
    request = ContextRequest(query=query, budget=2000, as_of=_moment(moment))
    _retrieve(context, "recency", request)


@then('recency proposes the memory "{ids}" in this order')
def recency_memory_order(context: Context, ids: str) -> None:
    found = [_item_id(c) for c in context.candidates]
    assert found == [i.strip() for i in ids.split(",")], found


@then('recency proposes "{first}" before "{second}"')
def recency_before(context: Context, first: str, second: str) -> None:
    found = [_item_id(c) for c in context.candidates]
    assert found.index(first) < found.index(second), found


@then('the reason for "{item}" reads "{reason}"')
def reason_reads(context: Context, item: str, reason: str) -> None:
    (found,) = [c.reason for c in context.candidates if _item_id(c) == item]
    assert found == reason, found


@then("asking the same again gives byte-identical JSON")
def same_json(context: Context) -> None:
    answers: list[str] = []
    for _ in range(2):
        request = context.request.model_copy(
            update={"strategies": {"recency": StrategySelection()}, "output": "json"}
        )
        assemble(context, request)
        answers.append(_TIMINGS.sub(r"\1\2", result(context).to_json()))
    assert answers[0] == answers[1]
    assert result(context).fragments, "the answer holds nothing"


@then(
    'recency\'s first {count:d} candidates have equal scores, in fragment id order, before "{last}"'
)
def equal_scores_by_id(context: Context, count: int, last: str) -> None:
    first, rest = context.candidates[:count], context.candidates[count:]
    assert len({c.score for c in first}) == 1, context.candidates
    ids = [c.fragment.id for c in first]
    assert ids == sorted(ids), ids
    assert [_item_id(c) for c in rest] == [last], context.candidates


@given('the files "{paths}", each about budgets, all modified at "{moment}"')
def files_same_age(context: Context, paths: str, moment: str) -> None:
    for number, path in enumerate(p.strip() for p in paths.split(",")):
        files_about_budgets(context, path, moment, number)


@given('the file "{path}" about budgets modified at "{moment}"')
def files_about_budgets(context: Context, path: str, moment: str, number: int = 0) -> None:
    write_files(context.project, {path: f"# Notes {number}\n\nThe budgets of team {number}.\n"})
    set_mtime(context.project / path, _moment(moment))


@given('the file "{path}" about the deploy freeze modified at "{moment}"')
def file_about_freeze(context: Context, path: str, moment: str) -> None:
    write_files(context.project, {path: f"# Freeze\n\nThe deploy freeze, as of {moment}.\n"})
    set_mtime(context.project / path, _moment(moment))


@then(
    'a request about "{query}" as of "{moment}" holds nothing from after it, with each'
    ' strategy alone and with the default mix, and holds "{expected}"'
)
def nothing_after(context: Context, query: str, moment: str, expected: str) -> None:
    as_of = _moment(moment)
    names = [None, *(registered.strategy.name for registered in pipeline(context).strategies)]
    for name in names:
        selection = None if name is None else {name: StrategySelection()}
        assemble(context, query, budget=3000, as_of=as_of, strategies=selection)
        later = [
            f.source.path
            for f in result(context).fragments
            if f.source.modified_at is None or f.source.modified_at > as_of
        ]
        assert not later, f"{name or 'the mix'} gave {later}, from after {moment}"
        if name is None:
            # A strategy that drops the request's as_of from its filters is held to it.
            backends = pipeline(context).store.backends(RequestScope(as_of=as_of))
            assert backends.text is not None and backends.timeline is not None
            read = [h.fragment for h in backends.text.search(query, 100, RequestFilters())]
            read += backends.timeline.recent(100, RequestFilters())
            later = [f.source.path for f in read if (f.source.modified_at or as_of) > as_of]
            assert not later, f"reads without as_of in their filters gave {later}"
            found = {unquote(f.source.path).rsplit("/", 1)[-1] for f in result(context).fragments}
            found |= {f.source.path for f in result(context).fragments}
            wanted = {item.strip() for item in expected.split(",")}
            assert wanted <= found, f"the mix gave {sorted(found)}"


@then("recency proposes nothing")
def proposes_nothing(context: Context) -> None:
    assert context.candidates == [], context.candidates


@then('recency proposes the files "{paths}" in this order')
def recency_files(context: Context, paths: str) -> None:
    found = list(dict.fromkeys(c.fragment.source.path for c in context.candidates))
    assert found == [p.strip() for p in paths.split(",")], found


# -- tiered ----------------------------------------------------------------------------------


@given('"{target}" is pinned')
def pinned(context: Context, target: str) -> None:
    pipeline(context).pin(target)


@when('"{target}" is unpinned')
def unpinned(context: Context, target: str) -> None:
    assert pipeline(context).unpin(target)


@given('session "{session}" was given the answer to "{query}"')
def session_given(context: Context, session: str, query: str) -> None:
    answer = pipeline(context).assemble(query, budget=500, session=session)
    assert answer.fragments, f"nothing was given for {query!r}"


@given("an index run holds the store")
def index_run_holds(context: Context) -> None:
    """Another connection holds the write lock, as an index run does while it commits."""
    holder = sqlite3.connect(pipeline(context).store.database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    context.store_holder = holder
    context.add_cleanup(holder.close)


@when('session "{session}"\'s use of "{uri}" is logged while the thread reads one snapshot')
def log_inside_snapshot(context: Context, session: str, uri: str) -> None:
    store = pipeline(context).store
    sessions = store.backends(RequestScope(session=session)).sessions
    assert sessions is not None, "the store offers no session tiers"
    try:
        with store.snapshot():
            sessions.record_use([uri])
            context.snapshot_error = ""
    except Exception as exc:  # the snapshot's end is what is checked
        context.snapshot_error = f"{type(exc).__name__}: {exc}"


@then("the snapshot read ended as it began")
def snapshot_ended(context: Context) -> None:
    assert not context.snapshot_error, context.snapshot_error


@given("the index run is done")
def index_run_done(context: Context) -> None:
    context.store_holder.execute("COMMIT")


@when('session "{session}" asks tiered alone for "{query}" with warm items among the best {rank:d}')
def tiered_warm_rank(context: Context, session: str, query: str, rank: int) -> None:
    request = ContextRequest(query=query, budget=2000, session=session)
    strategy = TieredStrategy(TieredOptions(warm_rank=rank))
    _retrieve(context, "tiered", request, strategy)


@when('session "{session}" asks tiered alone for "{query}" with the focus "{focus}"')
def tiered_focus(context: Context, session: str, query: str, focus: str) -> None:
    request = ContextRequest(query=query, budget=2000, session=session, focus=(focus,))
    _retrieve(context, "tiered", request)


@when('session "{session}" of user "{user}" asks tiered alone for "{query}"')
def tiered_as_user(context: Context, session: str, user: str, query: str) -> None:
    request = ContextRequest(query=query, budget=2000, session=session, user=user)
    _retrieve(context, "tiered", request)


@then("tiered's cold candidates, and only they, are echoes of long-term search")
def cold_are_echoes(context: Context) -> None:
    marks = [(c.reason.split(":", 1)[0], c.echo) for c in context.candidates]
    assert {tier for tier, _ in marks} > {"cold"}, marks
    assert all(echo == (tier == "cold") for tier, echo in marks), marks


@when('session "{session}" asks tiered alone for "{query}" within {budget:d} tokens')
def tiered_budget(context: Context, session: str, query: str, budget: int) -> None:
    _retrieve(context, "tiered", ContextRequest(query=query, budget=budget, session=session))


@then('tiered proposes more than {count:d} candidates in the tier "{tier}"')
def tier_holds(context: Context, count: int, tier: str) -> None:
    tiers = [c.reason.split(":", 1)[0] for c in context.candidates]
    assert tiers.count(tier) > count, Counter(tiers)


@when('session "{session}" asks tiered alone for "{query}"')
def tiered_alone(context: Context, session: str, query: str) -> None:
    _retrieve(context, "tiered", ContextRequest(query=query, budget=2000, session=session))


def _tiered_paths(context: Context) -> list[tuple[str, str]]:
    """Each path tiered proposes, once, with the tier of its first proposal."""
    seen: dict[str, str] = {}
    for candidate in context.candidates:
        seen.setdefault(candidate.fragment.source.path, candidate.reason.split(":", 1)[0])
    return list(seen.items())


def _matches(found: list[tuple[str, str]], paths: str, tiers: str) -> None:
    expected = [p.strip() for p in paths.split(",")]
    wanted_tiers = [t.strip() for t in tiers.split(",")]
    head = found[: len(expected)]
    assert len(head) == len(expected), found
    for (path, tier), pattern, wanted in zip(head, expected, wanted_tiers, strict=True):
        assert fnmatch.fnmatchcase(path, pattern) and tier == wanted, found


@then('tiered proposes "{paths}" in this order, in the tiers "{tiers}"')
def tiered_exactly(context: Context, paths: str, tiers: str) -> None:
    found = _tiered_paths(context)
    assert len(found) == len(paths.split(",")), found
    _matches(found, paths, tiers)


@then('tiered proposes "{paths}" first, in the tiers "{tiers}"')
def tiered_first(context: Context, paths: str, tiers: str) -> None:
    _matches(_tiered_paths(context), paths, tiers)


@then("tiered's reasons are:")
def tiered_reasons(context: Context) -> None:
    first: dict[str, str] = {}
    for candidate in context.candidates:
        first.setdefault(candidate.fragment.source.path, candidate.reason)
    for row in context.table:
        assert first.get(row["path"]) == row["reason"], first


@then('tiered puts the memory in the tiers "{tiers}"')
def memory_tiers(context: Context, tiers: str) -> None:
    found = [tier for path, tier in _tiered_paths(context) if path.startswith("uko://memory/")]
    assert found == [t.strip() for t in tiers.split(",")], _tiered_paths(context)
