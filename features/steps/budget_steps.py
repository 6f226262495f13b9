"""Steps for the BudgetAllocator, alone and inside an assembly."""

from __future__ import annotations

import math

from behave import given, then, when
from behave.runner import Context
from hypothesis import given as for_all
from hypothesis import settings
from hypothesis import strategies as st
from testkit import ScriptedStrategy, assemble, make_fragment, register_strategy, report, result

from contextpipe import (
    AllocationRequest,
    BudgetAllocator,
    BudgetError,
    Candidate,
    ContextRequest,
)


@given("strategies claiming the budget:")
def claims_table(context: Context) -> None:
    context.claims = [
        AllocationRequest(
            name=row["strategy"],
            weight=float(row["weight"]),
            quality=float(row["quality"]),
            confidence=float(row["confidence"]),
            floor_tokens=int(row["floor"]) if "floor" in row.headings else 0,
            cap_fraction=float(row["cap"]) if "cap" in row.headings else 1.0,
            cap_tokens=int(row["cap tokens"]) if "cap tokens" in row.headings else None,
        )
        for row in context.table
    ]


@when("{usable:d} usable tokens are shared")
def share(context: Context, usable: int) -> None:
    context.usable = usable
    context.shares, context.allocation_error = None, None
    try:
        context.shares = BudgetAllocator().allocate(usable, context.claims)
    except BudgetError as exc:
        context.allocation_error = exc


@then("the shares are:")
def shares_are(context: Context) -> None:
    expected = {row["strategy"]: int(row["tokens"]) for row in context.table}
    assert context.shares == expected, f"the shares are {context.shares}"


@then("{tokens:d} tokens stay in the pool")
def pool_left(context: Context, tokens: int) -> None:
    left = context.usable - sum(context.shares.values())
    assert left == tokens, f"{left} tokens stay in the pool"


@then('the allocator refuses with "{message}"')
def allocator_refuses(context: Context, message: str) -> None:
    assert context.allocation_error is not None, f"it shared {context.shares}"
    assert str(context.allocation_error) == message, str(context.allocation_error)


_claims = st.lists(
    st.builds(
        AllocationRequest,
        name=st.text("abcdefgh", min_size=1, max_size=3),
        weight=st.one_of(st.floats(0, 10), st.floats(0, allow_infinity=False)),
        quality=st.floats(0, 1),
        confidence=st.floats(0, 1),
        floor_tokens=st.integers(0, 3000),
        cap_fraction=st.floats(0.01, 1),
        cap_tokens=st.one_of(st.none(), st.integers(0, 60_000)),
    ),
    max_size=6,
    unique_by=lambda claim: claim.name,
)


@when("the allocator shares random budgets among random claims {times:d} times")
def allocator_property(context: Context, times: int) -> None:
    context.promises = {"cap": 0, "sum": 0, "used up": 0}

    @settings(max_examples=times, deadline=None, derandomize=True, database=None)
    @for_all(st.integers(0, 100_000), _claims)
    def keeps_its_promises(usable: int, claims: list[AllocationRequest]) -> None:
        shares = BudgetAllocator().allocate(usable, claims)
        assert set(shares) == {claim.name for claim in claims}
        for claim in claims:
            cap = math.floor(claim.cap_fraction * usable) if claim.priority > 0 else 0
            if claim.cap_tokens is not None:
                cap = min(cap, claim.cap_tokens)
            assert 0 <= shares[claim.name] <= cap, (claim, shares)
        context.promises["cap"] += 1
        assert sum(shares.values()) <= usable, (usable, shares)
        context.promises["sum"] += 1
        active = [claim for claim in claims if claim.priority > 0]
        room = sum(
            min(
                math.floor(claim.cap_fraction * usable),
                usable if claim.cap_tokens is None else claim.cap_tokens,
            )
            for claim in active
        )
        if active and room >= usable:
            # Whole tokens: at most one token per strategy is lost to rounding.
            assert sum(shares.values()) >= usable - len(active), (usable, claims, shares)
            context.promises["used up"] += 1

    keeps_its_promises()


@then("no share ever exceeded its strategy's cap or went to a strategy with no priority")
def caps_kept(context: Context) -> None:
    assert context.promises["cap"] > 0


@then("the shares never added up to more than the budget")
def sums_kept(context: Context) -> None:
    assert context.promises["sum"] > 0


@then("the budget was used up whenever the caps allowed it")
def used_up(context: Context) -> None:
    assert context.promises["used up"] > 0, "no example had room to use the budget up"


@given('a strategy "{name}" that proposes only candidates with a forged hash')
def strategy_forging_hashes(context: Context, name: str) -> None:
    def forged(request: ContextRequest, budget: int) -> list[Candidate]:
        fragments = [
            make_fragment(f"uko://doc/forged.md#n{n}", f"Budgets, forged {n}.", "forged.md", n, n)
            for n in range(1, 21)
        ]
        return [
            Candidate(
                fragment=fragment.model_copy(update={"content_hash": "0" * 64}),
                score=1.0,
                reason="forged",
            )
            for fragment in fragments
        ]

    register_strategy(context, ScriptedStrategy(name, forged))


@when('I send a request for "{query}" with a budget of {budget:d} tokens')
def send_request(context: Context, query: str, budget: int) -> None:
    assemble(context, ContextRequest(query=query, budget=budget))


@then('the report of "{name}" shows {tokens:d} tokens allocated')
def allocated(context: Context, name: str, tokens: int) -> None:
    strategy_report = report(context, name)
    assert strategy_report.allocated_tokens == tokens, strategy_report


@then("the dropped list explains that the budget was too small")
def dropped_for_budget(context: Context) -> None:
    assembled = result(context)
    reports = [(r.name, r.status, r.proposed, r.reason) for r in assembled.strategies]
    assert assembled.dropped, (
        "nothing is listed as dropped, so nothing says why the context is empty; "
        f"strategy reports (name, status, proposed, reason): {reports}"
    )
    reasons = [entry.reason for entry in assembled.dropped]
    assert all(reason.startswith("budget") for reason in reasons), reasons
