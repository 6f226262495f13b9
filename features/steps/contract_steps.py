"""Steps for the candidate contract (identity is the content; rejected candidates) and for
filling the budget: what each strategy proposed, and where every candidate ended up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from behave import given, then
from behave.runner import Context
from testkit import (
    ScriptedStrategy,
    fragments_from_table,
    named,
    pipeline,
    register_strategy,
    report,
    result,
    write_files,
)

from contextpipe import (
    AssembledContext,
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    RequestFilters,
)
from contextpipe.core.models import content_hash
from contextpipe.plugins import RegisteredStrategy


@dataclass
class _Recording:
    """A registered strategy, unchanged, whose every list of candidates is kept."""

    inner: object
    proposals: dict[str, list[Candidate]] = field(default_factory=dict[str, list[Candidate]])

    @property
    def name(self) -> str:
        return str(getattr(self.inner, "name"))  # noqa: B009 - any object a plugin gave

    @property
    def quality(self) -> float:
        return float(getattr(self.inner, "quality"))  # noqa: B009

    @property
    def required_backends(self) -> frozenset[str]:
        return frozenset(getattr(self.inner, "required_backends"))  # noqa: B009

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        return float(getattr(self.inner, "can_handle")(request, backends))  # noqa: B009

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> object:
        candidates = getattr(self.inner, "retrieve")(request, backends, budget)  # noqa: B009
        self.proposals[self.name] = [c for c in candidates if isinstance(c, Candidate)]
        return candidates

    def explain(self) -> str:
        return str(getattr(self.inner, "explain")())  # noqa: B009


def _proposals(context: Context) -> dict[str, list[Candidate]]:
    recorded: list[_Recording] = getattr(context, "recorded", [])
    assert recorded, "nothing was recorded: add 'Given what every strategy proposes is recorded'"
    found: dict[str, list[Candidate]] = {}
    for recording in recorded:
        found.update(recording.proposals)
    return found


@given("what every strategy proposes is recorded")
def record_every_strategy(context: Context) -> None:
    registry = pipeline(context).registry
    context.recorded = []
    for name, registered in list(registry.strategies.items()):
        recording = _Recording(registered.strategy)
        context.recorded.append(recording)
        registry.strategies[name] = RegisteredStrategy(recording, registered.plugin)


def _first_hit(context: Context, query: str) -> ContextFragment:
    hits = pipeline(context).store.search(query, 1, RequestFilters())
    assert hits, f"the store finds nothing for {query!r}"
    return hits[0].fragment


def _forger(
    context: Context, name: str, forged: ContextFragment, original: ContextFragment
) -> None:
    context.fragments["original"] = original
    context.fragments["forged"] = forged
    strategy = ScriptedStrategy(
        name, lambda request, budget: [Candidate(fragment=forged, score=1.0, reason="trust me")]
    )
    context.strategies[name] = strategy
    register_strategy(context, strategy)


@given(
    'a strategy "{name}" that returns the fragment simple-keyword finds first for "{query}",'
    ' with its text replaced by "{text}"'
)
def strategy_forging(context: Context, name: str, query: str, text: str) -> None:
    original = _first_hit(context, query)
    _forger(context, name, original.model_copy(update={"text": text}), original)


@given(
    'a strategy "{name}" that returns the fragment simple-keyword finds first for "{query}",'
    ' with its text replaced by "{text}" and its content hash and token count made to match'
)
def strategy_forging_honestly(context: Context, name: str, query: str, text: str) -> None:
    _forge_honestly(context, name, query, text)


@given(
    'a strategy "{name}" that returns the fragment simple-keyword finds first for "{query}",'
    " with its text replaced by {count:d} words and its content hash and token count made"
    " to match"
)
def strategy_forging_long(context: Context, name: str, query: str, count: int) -> None:
    _forge_honestly(context, name, query, " ".join(f"forged{n}" for n in range(count)))


@given(
    'a strategy "{name}" that returns the fragment simple-keyword finds first for "{query}",'
    " claiming 1 token"
)
def strategy_claiming_one_token(context: Context, name: str, query: str) -> None:
    original = _first_hit(context, query)
    _forger(context, name, original.model_copy(update={"token_count": 1}), original)


@given("every text the tokenizer counts is recorded")
def record_counted_texts(context: Context) -> None:
    tokenizer = pipeline(context).tokenizer
    kind = type(tokenizer)
    count = kind.count
    counted: list[str] = []

    def recorded(self: object, text: str) -> int:
        counted.append(text)
        return count(self, text)  # type: ignore[arg-type]

    setattr(kind, "count", recorded)  # noqa: B010 - the class, for the workers' calls too
    context.add_cleanup(setattr, kind, "count", count)
    context.counted_texts = counted


@then("the tokenizer counted at most {chars:d} characters of text in all")
def counted_at_most(context: Context, chars: int) -> None:
    counted = sum(len(text) for text in context.counted_texts)
    assert counted <= chars, f"the tokenizer counted {counted:,} characters of text"


@then('the rejection of "{name}" names the token count the store holds for the text')
def rejection_names_stored_count(context: Context, name: str) -> None:
    original: ContextFragment = context.fragments["original"]
    real = pipeline(context).tokenizer.count(original.text)
    assert original.token_count == real, f"the store holds {original.token_count}, not {real}"
    reason = report(context, name).reason
    assert f"its text has {real} tokens" in reason, reason


@then("the tokenizer counted none of the texts proposed as the store holds them")
def stored_texts_not_counted(context: Context) -> None:
    lookup = pipeline(context).store.backends().fragments
    assert lookup is not None
    proposed = [c.fragment for found in _proposals(context).values() for c in found]
    stored = {
        fragment.text
        for fragment in proposed
        if any(v.content_hash == fragment.content_hash for v in lookup.variants(fragment.uko_uri))
    }
    assert len(stored) > 1, f"only {len(stored)} stored texts were proposed"
    again = [text[:40] for text in stored if text in context.counted_texts]
    assert not again, f"{len(again)} of {len(stored)} stored texts counted again: {again}"


def _forge_honestly(context: Context, name: str, query: str, text: str) -> None:
    original = _first_hit(context, query)
    tokens = pipeline(context).tokenizer.count(text)
    forged = original.model_copy(
        update={"text": text, "content_hash": content_hash(text), "token_count": tokens}
    )
    _forger(context, name, forged, original)


_SIX_MEGABYTES = "budget " * 900_000


def _broken(fragment: ContextFragment, first: ContextFragment, how: str) -> tuple[object, float]:
    """The fragment and score of a candidate that breaks the contract as `how` says."""
    if how == "has the score NaN":
        return fragment, math.nan
    if how == "has the score inf":
        return fragment, math.inf
    if how == "repeats the id of the first":
        return fragment.model_copy(update={"id": first.id}), 1.0
    if how == "claims 1 token":
        return fragment.model_copy(update={"token_count": 1}), 1.0
    if how == "is a 6 MB text that claims 1 token":
        update = {
            "text": _SIX_MEGABYTES,
            "content_hash": content_hash(_SIX_MEGABYTES),
            "token_count": 1,
        }
        return fragment.model_copy(update=update), 1.0
    raise AssertionError(f"no such way to break a candidate: {how}")


@given('a strategy "{name}" whose {which} candidate {how}:')
def strategy_breaking_contract(context: Context, name: str, which: str, how: str) -> None:
    """Two candidates from the table, the first or the second of them broken as `how` says."""
    position = {"first": 0, "second": 1}[which]
    fragments = fragments_from_table(context)
    broken, score = _broken(fragments[position], fragments[0], how)
    assert isinstance(broken, ContextFragment)
    context.fragments[context.table[position]["fragment"]] = broken
    candidates: list[Candidate] = [
        Candidate(fragment=fragment, score=2.0 - number, reason="as scripted")
        for number, fragment in enumerate(fragments)
    ]
    candidates[position] = Candidate.model_construct(fragment=broken, score=score, reason="bad")
    strategy = ScriptedStrategy(name, lambda request, budget: candidates)
    context.strategies[name] = strategy
    register_strategy(context, strategy)


@given('a document "{path}" with {count:d} short sections about {topic}')
def document_of_sections(context: Context, path: str, count: int, topic: str) -> None:
    # Each section mentions the topic a different number of times, so that each ranks
    # differently and copies of one section rank together.
    sections = [
        f"## Note {number}\n\nNote {number} says something new about "
        f"{' and '.join([topic] * (number % 11 + 1))}: "
        f"{' '.join(f'word{number}x{w}' for w in range(number % 7 + 3))}.\n"
        for number in range(count)
    ]
    write_files(context.project, {path: "# Notes\n\n" + "\n".join(sections)})


@then('no fragment in the context holds "{text}"')
def no_fragment_holds(context: Context, text: str) -> None:
    holding = [f.id for f in result(context).fragments if text in f.text]
    assert not holding, f"fragments {holding} hold {text!r}"


def credited_only_to_proposers(
    assembled: AssembledContext,
    proposals: dict[str, Sequence[Candidate]],
    stored: Callable[[str], Sequence[ContextFragment]],
) -> list[str]:
    """What is wrong with the context's identity and provenance, given what each strategy
    proposed: a fragment whose text is not its content hash, or a vote from a strategy
    that proposed neither that text nor a deeper depth of that node as the store holds it
    (from which the packer may fall back to a shallower one).
    """

    def earns_vote(proposed: ContextFragment, shown: ContextFragment) -> bool:
        if proposed.text == shown.text:
            return True
        if proposed.uko_uri != shown.uko_uri or proposed.detail_depth <= shown.detail_depth:
            return False
        texts = {f.detail_depth: f.text for f in stored(proposed.uko_uri)}
        stored_as_proposed = texts.get(proposed.detail_depth) == proposed.text
        return stored_as_proposed and texts.get(shown.detail_depth) == shown.text

    problems: list[str] = []
    for fragment in assembled.fragments:
        if content_hash(fragment.text) != fragment.content_hash:
            problems.append(f"{fragment.id}: content_hash is not the hash of its text")
        for vote in fragment.provenance:
            proposed = proposals.get(vote.strategy, ())
            if not any(earns_vote(c.fragment, fragment) for c in proposed):
                problems.append(f"{fragment.id}: credited to {vote.strategy}, not a proposer")
    return problems


@then(
    "every fragment in the context has its own content hash and is credited only to"
    " strategies that proposed its text or a deeper depth of its node as stored"
)
def credited_only_to_proposers_step(context: Context) -> None:
    stored = pipeline(context).store.variants
    problems = credited_only_to_proposers(result(context), _proposals(context), stored)
    assert not problems, problems


@then('the context holds "{uri}" as "{text}", credited only to "{strategy}"')
def holds_credited_only(context: Context, uri: str, text: str, strategy: str) -> None:
    found = [f for f in result(context).fragments if f.uko_uri == uri]
    assert len(found) == 1, f"the context holds {len(found)} fragments of {uri}"
    (fragment,) = found
    assert fragment.text == text, f"its text is {fragment.text!r}"
    assert fragment.content_hash == content_hash(text), "its content_hash is not its text's"
    assert [vote.strategy for vote in fragment.provenance] == [strategy], fragment.provenance


@then('a candidate of the node of "{name}" is listed in dropped with a reason mentioning "{words}"')
def candidate_of_node_dropped(context: Context, name: str, words: str) -> None:
    candidate_of_uri_dropped(context, named(context, name).uko_uri, words)


@then('a candidate of "{uri}" is listed in dropped with a reason mentioning "{words}"')
def candidate_of_uri_dropped(context: Context, uri: str, words: str) -> None:
    reasons = [entry.reason for entry in result(context).dropped if entry.uko_uri == uri]
    assert any(words in reason for reason in reasons), f"dropped entries of {uri}: {reasons}"


@then('the report of "{name}" counts {count:d} rejected')
def report_counts_rejected(context: Context, name: str, count: int) -> None:
    assert report(context, name).rejected == count, report(context, name)


@then("the JSON of the context reads back as the same context, every score a number")
def json_reads_back(context: Context) -> None:
    text = result(context).to_json()
    data = json.loads(text)
    scores = [f["score"] for f in data["fragments"]]
    scores += [vote["score"] for f in data["fragments"] for vote in f["provenance"]]
    assert all(isinstance(score, int | float) for score in scores), scores
    assert AssembledContext.model_validate_json(text) == result(context)


@then('the fragment "{name}" is in the context under its own id')
def in_context_under_own_id(context: Context, name: str) -> None:
    fragment = named(context, name)
    ids = [f.id for f in result(context).fragments if f.uko_uri == fragment.uko_uri]
    assert ids == [fragment.id], f"the context holds {fragment.uko_uri} as {ids}"


@then("every candidate proposed is in the context or listed in dropped")
def every_candidate_accounted(context: Context) -> None:
    assembled = result(context)
    packed_uris = {f.uko_uri for f in assembled.fragments}
    dropped = {(entry.id, entry.uko_uri) for entry in assembled.dropped}
    lost = [
        candidate.fragment.uko_uri
        for candidates in _proposals(context).values()
        for candidate in candidates
        if candidate.fragment.uko_uri not in packed_uris
        and (candidate.fragment.id, candidate.fragment.uko_uri) not in dropped
    ]
    assert not lost, f"{len(lost)} candidates are neither in the context nor dropped: {lost[:5]}"


@then('the fragment "{name}" is listed in dropped as the same text as "{original}"')
def dropped_as_copy(context: Context, name: str, original: str) -> None:
    copy, kept = named(context, name), named(context, original)
    reasons = [
        e.reason for e in result(context).dropped if (e.id, e.uko_uri) == (copy.id, copy.uko_uri)
    ]
    assert reasons == [f"same text as {kept.id} ({kept.uko_uri})"], reasons


@then("the context uses at least {percent:d} % of the budget")
def uses_at_least(context: Context, percent: int) -> None:
    assembled = result(context)
    assert assembled.tokens_used * 100 >= percent * assembled.budget, (
        f"{assembled.tokens_used} of {assembled.budget} tokens used"
    )
