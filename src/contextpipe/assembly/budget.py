"""BudgetAllocator: share a token budget among the strategies that will run.

Rules, in order:

1. A strategy with confidence 0 (or weight 0) gets nothing and is skipped.
2. Each strategy's cap is `floor(cap_fraction x usable)`, or its `cap_tokens` when that is
   lower.
3. Each strategy first receives its floor (`floor_tokens`, never above its cap). When the
   floors together exceed the usable budget they are scaled down proportionally.
4. The rest is shared in proportion to `weight x quality x confidence`, by water-filling:
   a strategy that reaches its cap stops, and what it could not take goes to the others.
5. Shares are whole tokens (largest remainders, ties by name), and their sum never exceeds
   the usable budget. Tokens no strategy can take stay in the pool: the packer fills the
   whole budget from all candidates, so whatever a strategy leaves unused is not lost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.errors import BudgetError


@dataclass(frozen=True)
class AllocationRequest:
    """One strategy's claim on the budget."""

    name: str
    weight: float
    quality: float
    confidence: float
    floor_tokens: int = 0
    cap_fraction: float = 1.0
    cap_tokens: int | None = None  # a cap in tokens, besides the share of the budget

    def cap(self, usable: int) -> int:
        """Its cap when `usable` tokens are shared (rule 2)."""
        cap = math.floor(self.cap_fraction * usable)
        return cap if self.cap_tokens is None else max(0, min(cap, self.cap_tokens))

    @property
    def priority(self) -> float:
        """The proportionality factor: weight x quality x confidence."""
        return max(0.0, self.weight) * max(0.0, self.quality) * max(0.0, self.confidence)


def check_budget(budget: int) -> None:
    """Reject budgets no assembly can honour."""
    if budget <= 0:
        raise BudgetError(f"budget must be a positive number of tokens, got {budget}")


class BudgetAllocator:
    """Splits a usable token budget among strategies; see the module docstring for rules."""

    def allocate(self, usable: int, claims: Sequence[AllocationRequest]) -> dict[str, int]:
        """Tokens per strategy name (every claim appears, possibly with 0)."""
        if usable < 0:
            raise BudgetError(f"usable budget must not be negative, got {usable}")
        result = dict.fromkeys((c.name for c in claims), 0)
        active = sorted((c for c in claims if c.priority > 0), key=lambda c: c.name)
        if not active or usable == 0:
            return result
        caps = {c.name: c.cap(usable) for c in active}
        floors = {c.name: min(c.floor_tokens, caps[c.name]) for c in active}
        total_floor = sum(floors.values())
        if total_floor > usable:
            floors = _whole_tokens({n: f * usable / total_floor for n, f in floors.items()}, usable)
        exact = {name: float(tokens) for name, tokens in floors.items()}
        remaining = float(usable - sum(floors.values()))
        open_claims = {c.name: c.priority for c in active if exact[c.name] < caps[c.name]}
        while remaining > 1e-9 and open_claims:
            # Only ratios matter: relative to the largest open claim, even the largest
            # finite weights sum without overflowing to infinity (which would share out NaN).
            top = max(open_claims.values())
            scaled = {name: priority / top for name, priority in open_claims.items()}
            total = sum(scaled.values())
            filled: list[str] = []
            handed_out = 0.0
            for name, priority in scaled.items():
                share = remaining * priority / total
                headroom = caps[name] - exact[name]
                if share >= headroom:
                    share = headroom
                    filled.append(name)
                exact[name] += share
                handed_out += share
            remaining -= handed_out
            if not filled:
                break
            for name in filled:
                del open_claims[name]
        budget_for_rounding = min(usable, math.floor(sum(exact.values()) + 1e-6))
        result.update(_whole_tokens(exact, budget_for_rounding))
        return result


def _whole_tokens(exact: Mapping[str, float], total: int) -> dict[str, int]:
    """Round shares to integers summing to at most `total` (largest remainder method)."""
    shares = {name: math.floor(value + 1e-9) for name, value in exact.items()}
    spare = total - sum(shares.values())
    by_remainder = sorted(exact, key=lambda name: (-(exact[name] - shares[name]), name))
    for name in by_remainder[: max(0, spare)]:
        shares[name] += 1
    return shares
