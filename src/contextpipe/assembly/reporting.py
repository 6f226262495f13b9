"""The report of one assembly: the `AssembledContext` a caller gets, and its log events.

- Fragments are those packed, in packing order, each with its fused score and the votes
  of every strategy that proposed it.
- Every strategy has one report, sorted by name: those that ran count what of theirs was
  packed (`accepted`) and the tokens it took (`used_tokens`); the others say why not.
- `dropped` lists, in this order, what acceptance left out, what packing left out, and
  every copy of a text that fusion merged, pointing at the item that stands for it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..core.logs import logger
from ..core.models import (
    AssembledContext,
    ContextRequest,
    DroppedFragment,
    DroppedRow,
    StrategyReport,
    result_fragments,
)
from ..text.tokens import Tokenizer
from .fusion import FusedItem
from .packing import Packed


def assembled_context(
    request: ContextRequest,
    tokenizer: Tokenizer,
    reports: Sequence[StrategyReport],
    left_out: Sequence[DroppedRow],
    fused: Sequence[FusedItem],
    packed: Packed,
    timings: dict[str, float],
    started: float,
) -> AssembledContext:
    """The result of an assembly that began at `started` (a `time.perf_counter()` value)."""
    return AssembledContext(
        query=request.query,
        budget=request.budget,
        tokens_used=packed.tokens_used,
        tokenizer=tokenizer.name,
        output=request.output,
        text=packed.rendered.text,
        messages=packed.rendered.messages,
        fragments=result_fragments(
            {
                **vars(selected.fragment),
                "score": round(selected.item.score, 6),
                "provenance": [vote._asdict() for vote in selected.item.provenance],
            }
            for selected in packed.selected
        ),
        strategies=_final_reports(reports, packed),
        dropped=tuple(
            DroppedFragment(id=id_, uko_uri=uri, reason=reason)
            for id_, uri, reason in (*left_out, *packed.dropped, *_copies(fused))
        ),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
        timings_ms=timings,
    )


def log_assembly(context: AssembledContext) -> None:
    """One `strategy` event per strategy report, then one `assembled` event."""
    for report in context.strategies:
        logger.info(
            "strategy",
            strategy=report.name,
            status=report.status,
            reason=report.reason,
            elapsed_ms=report.elapsed_ms,
            proposed=report.proposed,
            rejected=report.rejected,
            accepted=report.accepted,
            allocated_tokens=report.allocated_tokens,
            used_tokens=report.used_tokens,
        )
    logger.info(
        "assembled",
        query=context.query,
        budget=context.budget,
        tokens_used=context.tokens_used,
        fragments=len(context.fragments),
        dropped=len(context.dropped),
        elapsed_ms=context.elapsed_ms,
    )


def _copies(fused: Sequence[FusedItem]) -> list[DroppedRow]:
    """The copies of a text, each listed once, pointing at the item that stands for them."""
    return [
        (id_, uri, f"same text as {item.fragment.id} ({item.fragment.uko_uri})")
        for item in fused
        for id_, uri in item.copies
    ]


def _final_reports(reports: Sequence[StrategyReport], packed: Packed) -> tuple[StrategyReport, ...]:
    """Reports with accepted counts and used tokens from what was packed, by name."""
    accepted: dict[str, int] = {}
    used: dict[str, int] = {}
    for selected in packed.selected:
        for vote in selected.item.provenance:
            accepted[vote.strategy] = accepted.get(vote.strategy, 0) + 1
            used[vote.strategy] = used.get(vote.strategy, 0) + selected.tokens
    return tuple(
        report.model_copy(
            update={
                "accepted": accepted.get(report.name, 0),
                "used_tokens": used.get(report.name, 0),
            }
        )
        for report in sorted(reports, key=lambda r: r.name)
    )
