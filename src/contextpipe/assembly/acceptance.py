"""Acceptance: which of a strategy's candidates the pipeline takes, and in which tier.

A strategy's candidates arrive best first, already checked to be `Candidate`s (see the
executor). First the contract; a candidate that breaks it is rejected:

1. Its score is a finite number: fusion ranks by it and the JSON result must carry it.
2. Its id does not repeat the id of an earlier candidate of the same strategy.
3. Its `content_hash` is the SHA-256 of its text. Identity is the content: fusion merges
   candidates by it, so a candidate cannot borrow another fragment's identity.
4. Its `token_count` agrees with the request's tokenizer (not under half nor over twice
   the real count, give or take 8 tokens, which tolerates a store counted with another
   tokenizer). A text too long to fit the request's budget at all is not counted: it can
   never be packed at that depth. A text the store holds, counted by the request's
   tokenizer, is not counted again: the store's count is its real count
   (`FragmentLookup.token_counts`, asked once for the first candidates). Once one
   candidate is caught, the strategy's remaining candidates are rejected unchecked: its
   counts cannot be trusted.

Then the allocation (`budget` in the strategy's `retrieve`):

5. Candidates are charged against the strategy's allocation at their real token count,
   best first. Equal texts, and the depth alternatives of one node, are charged once
   (at the largest).
6. A candidate that does not fit what is left of the allocation lies *beyond* it; later,
   smaller candidates may still fit. The packer takes what lies beyond an allocation only
   into the room that every strategy's candidates within theirs left over. A candidate
   too big for the whole allocation is proposed instead at the deepest shallower depth of
   its node (from the store, when it is the node's text as stored) that fits what is
   left, if there is one, and its full text is left out, saying so.
7. Candidates are taken until the strategy's list, within and beyond its allocation,
   holds twice its allocation; the rest are left out unchecked. The packer never needs
   more: room left over is what other strategies did not use of theirs.

Every candidate left out is listed in `dropped[]` with the rule it broke; the strategy's
report counts the rejected ones and names the first few.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..contract.proposals import REACH
from ..core.models import Candidate, ContextFragment, DroppedRow, StrategyReport
from ..text.tokens import Tokenizer
from .variants import RequestVariants, VariantLookup, stored_shallower

#: Rejections named in a report's reason; the rest are counted.
_NAMED_IN_REPORT = 3
#: Candidates, best first, whose stored token counts are asked in one read: more than the
#: built-in strategies propose, and rule 7 rarely takes more.
_ASKED_OF_STORE = 256


@dataclass(frozen=True)
class Accepted:
    """One strategy's accepted candidates, best first, with their ranks in its own list;
    the positions (in `candidates`) of those beyond its allocation; what was left out;
    and its report, updated with all of it.
    """

    report: StrategyReport
    candidates: tuple[Candidate, ...]
    ranks: tuple[int, ...]
    beyond: frozenset[int]
    dropped: tuple[DroppedRow, ...]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _contradicts(claimed: int, real: int) -> bool:
    return claimed * 2 + 8 < real or real * 2 + 8 < claimed


class CandidateChecks:
    """Applies the acceptance rules to one request's candidates (`budget` is the
    request's), strategy by strategy; the token counts it learns, from the store or by
    counting, are kept for the request's other strategies and for packing (`counted`).
    """

    def __init__(self, tokenizer: Tokenizer, budget: int, variants: RequestVariants) -> None:
        self._tokenizer, self._budget, self._variants = tokenizer, budget, variants
        self._counts: dict[str, int] = {}  # by content hash

    def accept(self, report: StrategyReport, candidates: Sequence[Candidate]) -> Accepted:
        """Apply the rules to one strategy's candidates."""
        self._recall_stored(candidates[:_ASKED_OF_STORE])
        run = _Run(self, report, self._tokenizer, self._budget, self._variants)
        for rank, candidate in enumerate(candidates, start=1):
            if run.spent >= REACH * report.allocated_tokens:
                run.leave_out(candidates[rank - 1 :], rank)
                break
            run.take(rank, candidate)
        return run.result(len(candidates))

    def _recall_stored(self, candidates: Sequence[Candidate]) -> None:
        """Rule 4: the counts the store holds for texts not yet counted, kept as counts."""
        unknown = [c.fragment for c in candidates if c.fragment.content_hash not in self._counts]
        self._counts.update(self._variants.token_counts(unknown, self._tokenizer.name))

    def tokens(self, fragment: ContextFragment) -> int | None:
        """The real token count of a fragment whose hash is checked; None when its text is
        too long to fit the budget (told from its length, without counting).
        """
        chars_per_token = self._tokenizer.max_token_chars
        if chars_per_token is not None and len(fragment.text) > self._budget * chars_per_token:
            return None
        known = self._counts.get(fragment.content_hash)
        if known is None:
            known = self._counts[fragment.content_hash] = self._tokenizer.count(fragment.text)
        return known

    def counted(self, fragment: ContextFragment) -> int | None:
        """The token count of a fragment's text if it was counted already, else None."""
        return self._counts.get(fragment.content_hash)


class _Run:
    """One strategy's candidates going through the rules."""

    def __init__(
        self,
        checks: CandidateChecks,
        report: StrategyReport,
        tokenizer: Tokenizer,
        budget: int,
        variants: VariantLookup,
    ) -> None:
        self.checks, self.report, self.tokenizer = checks, report, tokenizer
        self.budget, self.variants = budget, variants
        self.allocation = report.allocated_tokens
        self.accepted: list[Candidate] = []
        self.ranks: list[int] = []
        self.beyond: set[int] = set()
        self.dropped: list[DroppedRow] = []
        self.problems: list[str] = []  # one per rejected candidate
        self.first_rank: dict[str, int] = {}  # fragment id -> its first rank
        self.charged: dict[str, int] = {}  # node URI or content hash -> tokens charged
        self.within = 0  # tokens charged against the allocation
        self.spent = 0  # tokens charged within and beyond it
        self.liar = 0  # the rank of the first candidate caught misstating its tokens

    def take(self, rank: int, candidate: Candidate) -> None:
        fragment = candidate.fragment
        tokens: int | None = None
        problem = self._broken_rule(candidate)
        if not problem:
            tokens = self.checks.tokens(fragment)
            problem = self._misstated(fragment, tokens)
            if problem:
                self.liar = rank
        self.first_rank.setdefault(fragment.id, rank)
        if problem:
            self.problems.append(f"#{rank} {problem}")
            self._leave(fragment, f"rejected: {problem} ({self.report.name} #{rank})")
            return
        extra = self._extra(fragment, tokens)
        if tokens is not None and self.within + extra <= self.allocation:
            self._charge(fragment, tokens, extra)
            self._accept(rank, candidate)
            return
        shallower = None if extra <= self.allocation else self._shallower_fitting(fragment)
        if shallower is not None:
            variant, variant_tokens = shallower
            needs = "more" if tokens is None else str(tokens)
            self._leave(
                fragment,
                f"budget: needs {needs} tokens, {self.allocation - self.within} left of the "
                f"allocation of {self.report.name}; proposed at depth {variant.detail_depth} "
                "instead",
            )
            self._charge(variant, variant_tokens, self._extra(variant, variant_tokens))
            self._accept(rank, candidate.model_copy(update={"fragment": variant}))
            return
        self.beyond.add(len(self.accepted))
        self.spent += extra if tokens is not None else 0  # a text that fits no budget
        self._accept(rank, candidate)

    def _broken_rule(self, candidate: Candidate) -> str:
        fragment = candidate.fragment
        if not math.isfinite(candidate.score):
            return f"score is {candidate.score}"
        if fragment.id in self.first_rank:
            return f"repeats the id of its candidate #{self.first_rank[fragment.id]}"
        if _sha256(fragment.text) != fragment.content_hash:
            return "content_hash is not the SHA-256 of its text"
        if self.liar:
            return f"not checked: candidate #{self.liar} misstated its token count"
        return ""

    def _misstated(self, fragment: ContextFragment, tokens: int | None) -> str:
        """Rule 4: what is wrong with the fragment's token count ('' if nothing)."""
        claimed, name = fragment.token_count, self.tokenizer.name
        if tokens is not None:
            if _contradicts(claimed, tokens):
                return f"its token_count is {claimed}, its text has {tokens} tokens ({name})"
            return ""
        at_least = len(fragment.text) // (self.tokenizer.max_token_chars or len(fragment.text))
        if claimed * 2 + 8 < at_least:
            return f"its token_count is {claimed}, its text has at least {at_least} tokens ({name})"
        return ""

    def _extra(self, fragment: ContextFragment, tokens: int | None) -> int:
        """Tokens a fragment adds to what its node, or its text, was charged already."""
        if tokens is None:
            return self.budget + 1  # fits no allocation
        charged = self.charged
        before = max(charged.get(fragment.uko_uri, 0), charged.get(fragment.content_hash, 0))
        return max(0, tokens - before)

    def _charge(self, fragment: ContextFragment, tokens: int, extra: int) -> None:
        for key in (fragment.uko_uri, fragment.content_hash):
            self.charged[key] = max(self.charged.get(key, 0), tokens)
        self.within += extra
        self.spent += extra

    def _shallower_fitting(self, fragment: ContextFragment) -> tuple[ContextFragment, int] | None:
        """The deepest shallower depth of the fragment's node that fits what is left, with
        its token count.
        """
        left = self.allocation - self.within
        for variant in stored_shallower(fragment, self.variants):
            tokens = self.checks.tokens(variant)
            if tokens is not None and self._extra(variant, tokens) <= left:
                return variant, tokens
        return None

    def _accept(self, rank: int, candidate: Candidate) -> None:
        self.accepted.append(candidate)
        self.ranks.append(rank)

    def _leave(self, fragment: ContextFragment, reason: str) -> None:
        self.dropped.append((fragment.id, fragment.uko_uri, reason))

    def leave_out(self, rest: Sequence[Candidate], first_rank: int) -> None:
        """Rule 7: the candidates after the list reached its share of the budget."""
        reason = (
            f"budget: {self.report.name}'s list already held {REACH}x its allocation of "
            f"{self.allocation} tokens (from #{first_rank} on, unchecked)"
        )
        self.dropped += [(c.fragment.id, c.fragment.uko_uri, reason) for c in rest]

    def result(self, proposed: int) -> Accepted:
        parts = [self.report.reason] if self.report.reason else []
        if self.problems:
            named = "; ".join(self.problems[:_NAMED_IN_REPORT])
            more = len(self.problems) - _NAMED_IN_REPORT
            parts.append(
                f"rejected {len(self.problems)} of {proposed} candidates: {named}"
                + (f"; and {more} more" if more > 0 else "")
            )
        if self.beyond:
            parts.append(
                f"{len(self.beyond)} candidates beyond its allocation of {self.allocation} "
                "tokens, packed only into room left over"
            )
        counts = {"proposed": proposed, "rejected": len(self.problems)}
        report = self.report.model_copy(update={**counts, "reason": "; ".join(parts)})
        return Accepted(
            report,
            tuple(self.accepted),
            tuple(self.ranks),
            frozenset(self.beyond),
            tuple(self.dropped),
        )
