"""The scope fuzz test: hypothesis generates a strategy's probes of every read the
capabilities offer, with widened or foreign filters and guessed names of other scopes'
memory, and runs them inside real requests of one pipeline over a store whose memory
belongs to several sessions and users (see features/scope_fuzz.feature).

One `Prober` is registered once; each case sets what it probes. What each read gave back
is kept as it was given, and checked after the request against what the request's scope
allows. `CONTEXTPIPE_FUZZ_CASES` overrides the number of cases (`nox -s scope_fuzz`).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from behave import given, then, when
from behave.runner import Context
from hypothesis import HealthCheck, Phase, example, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from testkit import pipeline, register_strategy, write_files

from contextpipe import (
    AssembledContext,
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    GraphNode,
    MemoryScope,
    RequestFilters,
    RequestScope,
    StrategySelection,
    TextHit,
    VectorHit,
)
from contextpipe.core.models import content_hash, fragment_id

CASES_ENV = "CONTEXTPIPE_FUZZ_CASES"
PROBER = "prober"
#: Every memory item: id, scope, owner, text. Each text holds a mark of its own (`zq...`)
#: that no other text holds, so that any trace of it in a context can be found.
ITEMS = (
    ("v1", MemoryScope.SESSION, "s-victim", "zqv1 The vault code opens the ledger room"),
    ("v2", MemoryScope.SESSION, "s-victim", "zqv2 Deploy keys for the vault sit in the ledger"),
    ("v3", MemoryScope.SESSION, "s-me/x", "zqv3 A vault ledger of a session named like mine"),
    ("me/v4", MemoryScope.SESSION, "s", "zqv4 The vault ledger of session s, id me/v4"),
    ("v5", MemoryScope.USER, "u-victim", "zqv5 The user's vault ledger holds a secret"),
    ("v6", MemoryScope.USER, "u-me/x", "zqv6 A vault ledger of a user named like mine"),
    ("m1", MemoryScope.SESSION, "s-me", "zqm1 My session's vault note for the ledger"),
    ("m2", MemoryScope.USER, "u-me", "zqm2 My own vault ledger note"),
    ("g1", MemoryScope.GLOBAL, "", "zqg1 Everyone's vault ledger rule"),
)
FILES = {
    "docs/vault.md": "# Vault\n\nThe vault is opened with two keys and logged in the ledger.\n",
    "docs/ledger.md": "# Ledger\n\nThe ledger lists every opening of the vault, with its time.\n",
    "src/vault.py": "def open_vault(keys):\n    '''Open the vault and write the ledger.'''\n"
    "    return len(keys) == 2\n",
}
QUERIES = ("vault ledger", "who opens the vault", "deploy keys", "ledger secret")
SESSIONS = (None, "s-me")
USERS = (None, "u-me")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: How a probe changes the request's filters before a read ("own": it does not).
FILTERS: dict[str, Callable[[RequestFilters], RequestFilters | None]] = {
    "own": lambda f: f,
    "none given": lambda f: None,
    "another session": lambda f: f.model_copy(update={"session": "s-victim"}),
    "another user": lambda f: f.model_copy(update={"user": "u-victim"}),
    "no scope": lambda f: f.model_copy(update={"session": None, "user": None}),
    "memory paths": lambda f: f.model_copy(update={"paths": ("uko://memory/*",)}),
    "another's paths": lambda f: f.model_copy(
        update={"paths": ("uko://memory/session/s-victim/*", "uko://memory/user/u-victim/*")}
    ),
    "old memory paths": lambda f: f.model_copy(update={"paths": ("memory:*",)}),
    "memory kind": lambda f: f.model_copy(update={"kinds": ("memory",)}),
    "everything": lambda f: f.model_copy(
        update={
            "session": "s-victim",
            "user": "u-victim",
            "paths": ("*",),
            "kinds": ("memory", "section", "function", "document"),
        }
    ),
}
#: Whose item a probe names: one the request may not see, one it may, one nobody has.
TARGETS = ("hidden", "visible", "missing")


@dataclass(frozen=True)
class Item:
    """A memory item as the store keeps it, read in its own scope."""

    id: str
    scope: MemoryScope
    owner: str
    fragment: ContextFragment

    def seen_by(self, session: str | None, user: str | None) -> bool:
        if self.scope is MemoryScope.SESSION:
            return self.owner == session
        if self.scope is MemoryScope.USER:
            return self.owner == user
        return True

    @property
    def mark(self) -> str:
        return self.fragment.text.split("] ", 1)[1].split(" ", 1)[0]


@dataclass(frozen=True)
class Probe:
    """One read a generated strategy makes."""

    read: str
    filters: str
    target: str
    pick: int


@dataclass(frozen=True)
class ScopeCase:
    """One request: who asks, what, the prober's reads, and whether the built-ins run too."""

    session: str | None
    user: str | None
    query: str
    probes: tuple[Probe, ...]
    mix: bool


@dataclass
class Observation:
    """What one probe was given, and which item it named."""

    probe: Probe
    named: ContextFragment
    answer: Any


# -- the reads -----------------------------------------------------------------------------

Read = Callable[[Backends, ContextRequest, RequestFilters | None, ContextFragment], Any]


def _given(filters: RequestFilters | None, request: ContextRequest) -> RequestFilters:
    """Filters for a read whose filters are not optional."""
    return filters if filters is not None else request.filters


def _tokenizer(request: ContextRequest) -> str:
    return request.tokenizer or "o200k_base"


def _need(capability: Any) -> Any:
    assert capability is not None, "a capability the prober needs is missing"
    return capability


READS: dict[str, Read] = {
    "variants": lambda b, r, f, n: _need(b.fragments).variants(n.uko_uri, f),
    "variants_many": lambda b, r, f, n: dict(_need(b.fragments).variants_many([n.uko_uri], f)),
    "count": lambda b, r, f, n: _need(b.fragments).count(),
    "token_counts": lambda b, r, f, n: dict(_need(b.fragments).token_counts([n], _tokenizer(r), f)),
    "search": lambda b, r, f, n: _need(b.text).search(r.query, 100, _given(f, r)),
    "search for its text": lambda b, r, f, n: _need(b.text).search(n.text, 10, _given(f, r)),
    "scores": lambda b, r, f, n: _need(b.text).scores(n.text, [n]),
    "recent": lambda b, r, f, n: _need(b.timeline).recent(100, _given(f, r)),
    "after": lambda b, r, f, n: _need(b.timeline).after(_EPOCH, 100, _given(f, r)),
    "pinned": lambda b, r, f, n: _need(b.sessions).pinned(100, _given(f, r)),
    "named": lambda b, r, f, n: _need(b.sessions).named(
        [n.uko_uri, n.source.path, "*"], 100, _given(f, r)
    ),
    "recently used": lambda b, r, f, n: _need(b.sessions).recently_used(100, _given(f, r)),
    "recent memory": lambda b, r, f, n: _need(b.sessions).recent_memory(100, _given(f, r)),
    "use logged, then read": lambda b, r, f, n: _logged(b, n, _given(f, r)),
    "nearest": lambda b, r, f, n: _need(b.vectors).nearest(r.query, 100, _given(f, r)),
    "nearest to its text": lambda b, r, f, n: _need(b.vectors).nearest(n.text, 10, _given(f, r)),
    "similarities": lambda b, r, f, n: _need(b.vectors).similarities(n.text, [n]),
    "graph node": lambda b, r, f, n: _need(b.graph).node(n.uko_uri),
    "graph lookup": lambda b, r, f, n: [
        *_need(b.graph).lookup(n.uko_uri),
        *_need(b.graph).lookup(f"memory {n.uko_uri.rsplit('/', 1)[1]}"),
    ],
    "graph stats": lambda b, r, f, n: _need(b.graph).stats(),
    "neighbours": lambda b, r, f, n: _need(b.graph).neighbours(n.uko_uri),
    "subgraph": lambda b, r, f, n: _need(b.graph).subgraph([n.uko_uri], 2),
}
#: Reads that take no filters: each is probed once per case with whatever filters.
UNFILTERED = frozenset(
    {
        "count",
        "scores",
        "similarities",
        "graph node",
        "graph lookup",
        "graph stats",
        "neighbours",
        "subgraph",
    }
)


def _logged(backends: Backends, named: ContextFragment, filters: RequestFilters) -> Any:
    sessions = _need(backends.sessions)
    sessions.record_use([named.uko_uri])
    return sessions.recently_used(100, filters)


# -- the prober ----------------------------------------------------------------------------


@dataclass
class Prober:
    """A strategy that makes the case's reads, keeps what they gave, and proposes every
    fragment it was given and two forged items: one with the id and URI of an item the
    request may not see, one with those of an item nobody has.
    """

    world: World
    name: str = PROBER
    quality: float = 1.0
    required_backends: frozenset[str] = frozenset()
    case: ScopeCase | None = None
    seen: list[Observation] = field(default_factory=list[Observation])

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return 1.0

    def retrieve(
        self, request: ContextRequest, backends: Backends, budget: int
    ) -> Sequence[Candidate]:
        assert self.case is not None
        for probe in self.case.probes:
            named = self.world.target(probe, request)
            change = FILTERS[probe.filters]
            answer = READS[probe.read](backends, request, change(request.filters), named)
            self.seen.append(Observation(probe, named, answer))
        forged = [
            self.world.forged(request.session, request.user, whose)
            for whose in ("hidden", "missing")
        ]
        given = [f for observation in self.seen for f in _fragments(observation.answer)]
        return [
            *(Candidate(fragment=f, score=10.0, reason="forged") for f in forged),
            *(Candidate(fragment=f, score=1.0, reason="read") for f in given),
        ]

    def explain(self) -> str:
        return "probes every read of the store"


def _fragments(answer: Any) -> Iterable[ContextFragment]:
    """Every fragment inside a read's answer."""
    if isinstance(answer, ContextFragment):
        yield answer
    elif isinstance(answer, TextHit | VectorHit):
        yield answer.fragment
    elif isinstance(answer, dict):
        for value in answer.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _fragments(value)
    elif isinstance(answer, list | tuple):
        for value in answer:  # pyright: ignore[reportUnknownVariableType]
            yield from _fragments(value)


# -- the memory of several scopes ----------------------------------------------------------


@dataclass
class World:
    """The scenario's memory items as the store keeps them, and how many fragments it
    holds in all.
    """

    items: list[Item] = field(default_factory=list[Item])
    fragments: int = 0
    #: Reads the victim session's access log, as it was first.
    log: Callable[[], list[str]] = list
    logged: list[str] = field(default_factory=list[str])

    def hidden(self, session: str | None, user: str | None) -> list[Item]:
        return [item for item in self.items if not item.seen_by(session, user)]

    def target(self, probe: Probe, request: ContextRequest) -> ContextFragment:
        if probe.target == "missing":
            return self.forged(request.session, request.user, "missing")
        wanted = probe.target == "hidden"
        items = [i for i in self.items if i.seen_by(request.session, request.user) != wanted]
        return items[probe.pick % len(items)].fragment

    def forged(self, session: str | None, user: str | None, whose: str) -> ContextFragment:
        """A fragment of made-up text, with the id and URI of the first item a request of
        `session` and `user` may not see, or of one nobody has; both texts equally long.
        """
        if whose == "hidden":
            uri = self.hidden(session, user)[0].fragment.uko_uri
        else:
            uri = "uko://memory/session/s-victim/nobody-has-this"
        text = f"[2024-05-07 10:00] forged {whose:>7} words about the vault"
        source = {"uri": uri, "path": uri, "start_line": 1, "end_line": 1, "kind": "memory"}
        return ContextFragment.model_validate(
            {
                "id": fragment_id(uri, 9),
                "uko_uri": uri,
                "detail_depth": 9,
                "text": text,
                "token_count": len(text.split()) + 8,  # near enough: acceptance recounts
                "source": source,
                "content_hash": content_hash(text),
            }
        )


@given("a project whose memory belongs to several sessions and users, with vectors")
def several_scopes(context: Context) -> None:
    write_files(context.project, FILES)
    pipe = pipeline(context)
    pipe.index([context.project])
    at = datetime(2024, 5, 7, 9, 0, tzinfo=UTC)
    for item_id, scope, owner, text in ITEMS:
        session = owner if scope is MemoryScope.SESSION else None
        user = owner if scope is MemoryScope.USER else None
        pipe.remember(text, session=session, user=user, at=at, item_id=item_id)
    pipe.embed()
    world = World()
    for item_id, scope, owner, text in ITEMS:
        view = RequestScope(
            session=owner if scope is MemoryScope.SESSION else None,
            user=owner if scope is MemoryScope.USER else None,
        )
        timeline = _need(pipe.store.backends(view).timeline)
        own = RequestFilters(session=view.session, user=view.user)
        (fragment,) = [f for f in timeline.recent(100, own) if text in f.text]
        world.items.append(Item(item_id, scope, owner, fragment))
    victim = world.items[0]
    # Another session pinned its own item and was given it: neither opens it to others.
    pipe.pin(victim.fragment.uko_uri)
    victims = _need(pipe.store.backends(RequestScope(session=victim.owner)).sessions)
    victims.record_use([item.fragment.uko_uri for item in world.items[:4]])
    world.fragments = pipe.stats().fragments
    world.log = lambda: [
        f.uko_uri for f in victims.recently_used(100, RequestFilters(session=victim.owner))
    ]
    world.logged = world.log()
    context.world = world
    context.prober = Prober(world)
    register_strategy(context, context.prober)


# -- the invariants ------------------------------------------------------------------------


@dataclass
class Outcome:
    case: ScopeCase
    hidden: list[Item]
    seen: list[Observation]
    context: AssembledContext | None
    error: Exception | None
    world: World


def check_succeeds(outcome: Outcome) -> None:
    assert outcome.error is None, (
        f"the request failed: {type(outcome.error).__name__}: {outcome.error}"
    )
    prober = next(r for r in _context(outcome).strategies if r.name == PROBER)
    assert prober.status == "ok", f"the prober was reported {prober.status}: {prober.reason}"


def _context(outcome: Outcome) -> AssembledContext:
    assert outcome.context is not None
    return outcome.context


def _hidden_names(outcome: Outcome) -> set[str]:
    """Every id, URI, path and content hash of the memory the request may not see."""
    return {
        name
        for item in outcome.hidden
        for name in (
            item.fragment.id,
            item.fragment.uko_uri,
            item.fragment.source.path,
            item.fragment.content_hash,
        )
    }


def check_reads(outcome: Outcome) -> None:
    names = _hidden_names(outcome)
    for observation in outcome.seen:
        answer = observation.answer
        for found in _fragments(answer):
            held = {found.id, found.uko_uri, found.source.path, found.content_hash} & names
            assert not held, f"{observation.probe} gave {held}"
        for node in _nodes(answer):
            held = {node.uri, node.path} & names
            assert not held, f"{observation.probe} gave {held}"
        if isinstance(answer, dict) and observation.probe.read == "token_counts":
            assert not set(answer) & names, f"{observation.probe} gave {set(answer) & names}"


def _nodes(answer: Any) -> list[GraphNode]:
    if isinstance(answer, GraphNode):
        return [answer]
    if isinstance(answer, list | tuple):
        return [node for node in answer if isinstance(node, GraphNode)]  # pyright: ignore[reportUnknownVariableType]
    return []


#: What a read answers about an item nobody has.
NOTHING: dict[str, Callable[[Any], bool]] = {
    "variants": lambda answer: answer == [],
    "variants_many": lambda answer: answer == {},
    "token_counts": lambda answer: answer == {},
    "scores": lambda answer: list(answer) == [0.0],
    "similarities": lambda answer: list(answer) == [None],
    "graph node": lambda answer: answer is None,
    "neighbours": lambda answer: list(answer) == [],
    "subgraph": lambda answer: list(answer) == [],
}


def check_probes(outcome: Outcome) -> None:
    names = _hidden_names(outcome)
    for observation in outcome.seen:
        nothing = NOTHING.get(observation.probe.read)
        if nothing is None or observation.named.uko_uri not in names:
            continue
        assert nothing(observation.answer), (
            f"{observation.probe} of {observation.named.uko_uri} answered {observation.answer!r}"
        )
    for observation in outcome.seen:
        if observation.probe.read == "graph stats":
            assert "memory" not in observation.answer.nodes, observation.answer


def check_count(outcome: Outcome) -> None:
    expected = outcome.world.fragments - len(outcome.hidden)
    for observation in outcome.seen:
        if observation.probe.read == "count":
            assert observation.answer == expected, (
                f"count() is {observation.answer}; the scope allows {expected}"
            )


def check_forged(outcome: Outcome) -> None:
    context = _context(outcome)
    fates: dict[str, list[str]] = {}
    for whose in ("hidden", "missing"):
        forged = outcome.world.forged(outcome.case.session, outcome.case.user, whose)
        fate = [f"kept at depth {f.detail_depth}" for f in context.fragments if f.id == forged.id]
        fate += [
            f"dropped: {d.reason}".replace(forged.id, "<id>").replace(forged.uko_uri, "<uri>")
            for d in context.dropped
            if d.id == forged.id
        ]
        fates[whose] = fate
    assert fates["hidden"] == fates["missing"], fates


def check_logs(outcome: Outcome) -> None:
    now = outcome.world.log()
    assert now == outcome.world.logged, f"another session's access log became {now}"


def check_output(outcome: Outcome) -> None:
    # Everything but the query, which is the caller's own.
    shown = _context(outcome).model_dump_json(exclude={"query"})
    for item in outcome.hidden:
        for trace in (item.mark, item.fragment.text.split("] ", 1)[1]):
            assert trace not in shown, f"{item.id} ({item.owner}) is in the context: {trace!r}"


INVARIANTS: dict[str, Callable[[Outcome], None]] = {
    "the request succeeds": check_succeeds,
    "no read gave the strategy memory its request's scope does not allow": check_reads,
    "every probe of such memory answered as for an item that does not exist": check_probes,
    "the store's count is the count the request's scope allows": check_count,
    "no other session's access log changed": check_logs,
    "an item forged with another scope's id fared as one forged with an unused id": (check_forged),
    "no text of such memory is in the fragments, the dropped list or the reports": check_output,
}


# -- running -------------------------------------------------------------------------------


def _probes() -> st.SearchStrategy[Probe]:
    return st.builds(
        Probe,
        read=st.sampled_from(sorted(READS)),
        filters=st.sampled_from(sorted(FILTERS)),
        target=st.sampled_from(TARGETS),
        pick=st.integers(0, 20),
    )


def _cases() -> st.SearchStrategy[ScopeCase]:
    return st.builds(
        ScopeCase,
        session=st.sampled_from(SESSIONS),
        user=st.sampled_from(USERS),
        query=st.sampled_from(QUERIES),
        probes=st.lists(_probes(), min_size=1, max_size=10).map(tuple),
        mix=st.booleans(),
    )


def _explicit_cases() -> list[ScopeCase]:
    """Every read with every kind of filters, naming an item the request may not see,
    once as a session of its own and once as nobody.
    """
    cases: list[ScopeCase] = []
    for session, user in (("s-me", "u-me"), (None, None)):
        for number, read in enumerate(sorted(READS)):
            kinds = ["own"] if read in UNFILTERED else sorted(FILTERS)
            probes = tuple(Probe(read, kind, "hidden", number) for kind in kinds)
            cases.append(ScopeCase(session, user, QUERIES[number % len(QUERIES)], probes, True))
    return cases


def _run(context: Context, case: ScopeCase) -> Outcome:
    prober: Prober = context.prober
    prober.case, prober.seen = case, []
    strategies = None if case.mix else {PROBER: StrategySelection()}
    request = ContextRequest(
        query=case.query,
        budget=3000,
        session=case.session,
        user=case.user,
        strategies=strategies,
        deadline_ms=60_000,  # a starved machine must not cut a probe short
    )
    assembled, error = None, None
    try:
        assembled = pipeline(context).assemble(request)
    except Exception as exc:  # the invariant "the request succeeds" reports it
        error = exc
    hidden = context.world.hidden(case.session, case.user)
    return Outcome(case, hidden, list(prober.seen), assembled, error, context.world)


@when(
    "{count:d} random requests run with a generated strategy that probes every read,"
    " each checked that:"
)
def scope_fuzz(context: Context, count: int) -> None:
    checks = [INVARIANTS[row["invariant"]] for row in context.table]
    tally: Counter[str] = Counter()

    @settings(
        max_examples=int(os.environ.get(CASES_ENV) or count),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @for_all(case=_cases())
    def every_case(case: ScopeCase) -> None:
        tally["case"] += 1
        for probe in case.probes:
            tally[f"{probe.read} with {probe.filters} filters"] += 1
        outcome = _run(context, case)
        for check in checks:
            check(outcome)
        tally["held"] += 1

    for case in _explicit_cases():
        every_case = example(case=case)(every_case)
    report: list[str] = []
    started = time.perf_counter()
    try:
        with with_reporter(report.append):
            every_case()
    except Exception as exc:  # the shrunk counterexample's failure
        notes = [*getattr(exc, "__notes__", ()), *report]
        context.fuzz_failure = "\n".join([f"{type(exc).__name__}: {exc}", *notes])
    else:
        context.fuzz_failure = None
    context.fuzz_tally = tally
    seconds = time.perf_counter() - started
    print(f"scope fuzz: {tally['case']} cases in {seconds:.1f} s")
    print(json.dumps({"held": tally["held"], "cases": tally["case"]}))


@then("every read method was probed with every kind of filters")
def every_read_probed(context: Context) -> None:
    tally: Counter[str] = context.fuzz_tally
    wanted = [
        f"{read} with {kind} filters"
        for read in READS
        for kind in (["own"] if read in UNFILTERED else FILTERS)
    ]
    missing = [name for name in wanted if not tally[name]]
    assert not missing, f"never probed: {missing}"
