"""Steps for the searches the strategies of one request share."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from behave import given, then, when
from behave.runner import Context
from testkit import pipeline, register_strategy

from contextpipe import (
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    RequestFilters,
    RequestScope,
    TextHit,
    TextSearch,
)


class _Counted:
    """The store's text search, counting its calls."""

    def __init__(self, text: TextSearch, calls: list[int]) -> None:
        self._text, self._calls = text, calls

    def search(self, query: str, limit: int, filters: RequestFilters) -> Sequence[TextHit]:
        self._calls.append(limit)
        return self._text.search(query, limit, filters)

    def scores(self, query: str, fragments: Sequence[ContextFragment]) -> Sequence[float]:
        return self._text.scores(query, fragments)


@given("the store's text searches are counted")
def counted_searches(context: Context) -> None:
    store = pipeline(context).store
    original = store.backends
    context.text_calls = []

    def backends(scope: RequestScope | None = None) -> Backends:
        found = original(scope)
        assert found.text is not None, "the store offers no text search"
        return replace(found, text=_Counted(found.text, context.text_calls))

    store.backends = backends  # type: ignore[method-assign]


@dataclass
class _Searching:
    """A strategy proposing the text index's best `limit` hits, keeping what it was given."""

    name: str
    limit: int
    quality: float = 1.0
    required_backends: frozenset[str] = frozenset({"text"})
    given: list[tuple[str, ...]] = field(default_factory=list[tuple[str, ...]])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        assert backends.text is not None
        hits = backends.text.search(request.query, self.limit, request.filters)
        with self.lock:
            self.given.append(tuple(hit.fragment.id for hit in hits))
        return [Candidate(fragment=hit.fragment, score=hit.score, reason="hit") for hit in hits]

    def explain(self) -> str:
        return "the text index's best hits"


def _add(context: Context, name: str, limit: int) -> None:
    strategy = _Searching(name, limit)
    context.searching = {**getattr(context, "searching", {}), name: strategy}
    register_strategy(context, strategy)


@given(
    'strategies "{first}" and "{second}" that each propose the text index\'s best {limit:d}'
    ' hits for the query, and "{third}" its best {fewer:d}'
)
def searching_strategies(
    context: Context, first: str, second: str, limit: int, third: str, fewer: int
) -> None:
    _add(context, first, limit)
    _add(context, second, limit)
    _add(context, third, fewer)


@given('a strategy "{name}" that proposes the text index\'s best {limit:d} hits for the query')
def searching_strategy(context: Context, name: str, limit: int) -> None:
    _add(context, name, limit)


@then("the store's text index was searched {count:d} time")
@then("the store's text index was searched {count:d} times")
def searched(context: Context, count: int) -> None:
    calls = context.text_calls
    assert len(calls) == count, f"searched {len(calls)} times, for {calls} hits"


@then("the store's text index was searched at most {count:d} times")
def searched_at_most(context: Context, count: int) -> None:
    assert len(context.text_calls) <= count, f"searched {len(context.text_calls)} times"


@then(
    '"{first}" and "{second}" were given the same hits, and "{third}" the first {count:d} of them'
)
def same_hits(context: Context, first: str, second: str, third: str, count: int) -> None:
    one, two, three = (context.searching[name].given[-1] for name in (first, second, third))
    assert len(one) > count, f"{first} was given only {len(one)} hits"
    assert one == two, (one, two)
    assert three == one[:count], (three, one)


@when(
    "the store is asked, in one request, for the best {first:d} hits and then the best"
    " {then:d} of each of these questions:"
)
def asked_twice(context: Context, first: int, then: int) -> None:
    assert context.table is not None
    context.asked_twice = []
    for row in context.table:
        text = pipeline(context).store.backends().text  # one request's search
        assert text is not None, "the store offers no text search"
        question = row["question"]
        text.search(question, first, RequestFilters())
        context.asked_twice.append((question, then, text.search(question, then, RequestFilters())))


@then("each second answer is what a fresh search for as many hits gives, scores and terms alike")
def second_answers_fresh(context: Context) -> None:
    store = pipeline(context).store
    for question, limit, answer in context.asked_twice:
        fresh = store.search(question, limit, RequestFilters())
        assert len(fresh) > 2, f"too few hits for {question!r} to tell"
        seen = [(h.fragment.id, h.score, h.matched_terms) for h in answer]
        assert seen == [(h.fragment.id, h.score, h.matched_terms) for h in fresh], question
