"""Budget fill: how much of the usable budget an assembly uses, and where the rest went.

**Fill** of one assembly is `tokens_used / usable`, where usable is the budget minus the
output's frame (what the renderer costs besides the blocks, as the packer measures it: 0
for markdown). A set of queries is summarised per budget by the median and the 10th
percentile of the fill, and the share of queries at 90 % or more (issue 7, point 11).

To say why a budget is not filled, every strategy's `retrieve` is wrapped (`ProposalLog`)
so that what it proposed is known, and each proposed candidate is traced to the result:

- **packed**: its node is among `fragments` (at any depth);
- **dropped**: its id or node is in `dropped`, counted by the kind of reason;
- **in neither**: it is in neither list. Fusion merges candidates with equal content or
  overlapping lines of one file into one item that keeps one fragment, so such a candidate
  is explained as "same content as" or "overlaps" a candidate that is listed; anything
  else is "unexplained".

"Left out though it fits": proposed nodes not packed (nor their text, as a copy) whose own
token count is at most the unused budget (`usable - tokens_used`); the block header a
renderer adds is not counted, so a few of them may not fit after all.
"""

from __future__ import annotations

import inspect
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import contextpipe
from contextpipe import AssembledContext, Candidate, ContextFragment, OutputFormat
from contextpipe.assembly.packing import Packer, PackingPolicy
from contextpipe.assembly.rendering import renderer_for

BUDGETS = (1_000, 4_000, 16_000)
#: The target of issue 7, point 11: median fill at least this share of the usable budget.
TARGET = 0.9

#: Kinds of `dropped` reasons, by a phrase the reason contains (first match wins).
DROP_KINDS = (
    ("cut at allocation", "over the allocation"),
    ("past the list's reach", "list already held"),
    ("offered shallower", "proposed at depth"),
    ("rejected", "rejected:"),
    ("same node", "same node as"),
    ("overlapping lines", "overlaps lines"),
    ("copy of a merged text", "same text as"),
    ("duplicate", "duplicate of"),
    ("too big for the room left", "budget: needs"),
    ("no room left", "no room left"),
    ("trimmed to fit the output", "rendered output"),
    ("below min_score", "below threshold"),
)


#: How an unlisted candidate is explained (the start of `Unlisted.why`).
UNLISTED_KINDS = ("same content", "overlaps", "unexplained")


def drop_kind(reason: str) -> str:
    """The kind of a `dropped` reason (its first words when it is of no known kind)."""
    for kind, phrase in DROP_KINDS:
        if phrase in reason:
            return kind
    return "other: " + " ".join(reason.split()[:4])


class ProposalLog:
    """Wraps the `retrieve` of every strategy on `pipeline` to keep what each returned
    during the last assembly (cleared by `clear`). Measurement only: the wrapped method
    returns exactly what the strategy returned.
    """

    def __init__(self, pipeline: contextpipe.Pipeline) -> None:
        self.proposed: dict[str, list[ContextFragment]] = {}
        for registered in pipeline.strategies:
            self._wrap(registered.strategy)

    def clear(self) -> None:
        """Forget the last assembly's proposals."""
        self.proposed = {}

    def _record(self, name: str, returned: object) -> None:
        fragments: list[ContextFragment] = []
        if isinstance(returned, list | tuple):
            for item in returned:
                try:
                    candidate = (
                        item if isinstance(item, Candidate) else Candidate.model_validate(item)
                    )
                except ValueError:
                    continue  # malformed: the executor rejects the whole list anyway
                fragments.append(candidate.fragment)
        self.proposed[name] = fragments

    def _wrap(self, strategy: Any) -> None:
        inner: Callable[..., Any] = strategy.retrieve
        name: str = strategy.name

        if inspect.iscoroutinefunction(inner):

            async def retrieve_async(*args: Any, **kwargs: Any) -> Any:
                returned = await inner(*args, **kwargs)
                self._record(name, returned)
                return returned

            strategy.retrieve = retrieve_async
        else:

            def retrieve(*args: Any, **kwargs: Any) -> Any:
                returned = inner(*args, **kwargs)
                self._record(name, returned)
                return returned

            strategy.retrieve = retrieve


def usable_budget(pipeline: contextpipe.Pipeline, budget: int, output: OutputFormat) -> int:
    """The budget minus the output's frame, measured as the pipeline's packer measures it."""
    request = pipeline.request("frame", budget=budget, output=output)
    packer = Packer(
        renderer_for(output),
        contextpipe.get_tokenizer(pipeline.settings.tokenizer.name),
        PackingPolicy.from_settings(pipeline.settings.packing),
    )
    return budget - packer.frame_tokens(request)


@dataclass(frozen=True)
class Unlisted:
    """A proposed candidate that is in neither `fragments` nor `dropped`."""

    strategy: str
    fragment: ContextFragment
    why: str  # "same content as ...", "overlaps ...", "unexplained"


@dataclass(frozen=True)
class Assembly:
    """One measured assembly."""

    query: str
    budget: int
    usable: int
    tokens_used: int
    packed: int
    proposed: int  # candidates returned, summed over strategies
    supply_tokens: int  # token counts of the distinct proposed nodes (largest depth each)
    drops: Counter[str]
    unlisted: tuple[Unlisted, ...]
    fits_left_out: tuple[ContextFragment, ...]
    strategies: dict[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])

    @property
    def fill(self) -> float:
        """Tokens used per usable token."""
        return self.tokens_used / self.usable if self.usable > 0 else 0.0


def _overlaps(a: ContextFragment, b: ContextFragment) -> bool:
    return (
        a.source.path == b.source.path
        and a.detail_depth == b.detail_depth
        and a.source.start_line <= b.source.end_line
        and b.source.start_line <= a.source.end_line
    )


def _merged_into(fragment: ContextFragment, listed: Sequence[ContextFragment]) -> str:
    """How fusion would have merged `fragment` into one of `listed` ("" when it would not)."""
    twin = next((f for f in listed if f.content_hash == fragment.content_hash), None)
    if twin is not None:
        return f"same content as {twin.source.path}:{twin.source.start_line}"
    near = next((f for f in listed if _overlaps(f, fragment)), None)
    if near is not None:
        lines = f"{near.source.path}:{near.source.start_line}-{near.source.end_line}"
        return f"overlaps {near.uko_uri.rsplit('#', 1)[-1]} ({lines})"
    return ""


def trace(
    context: AssembledContext, proposed: dict[str, list[ContextFragment]], usable: int
) -> Assembly:
    """Trace every proposed candidate to `fragments`, `dropped` or neither."""
    packed_keys = {f.id for f in context.fragments} | {f.uko_uri for f in context.fragments}
    dropped_keys = {d.id for d in context.dropped} | {d.uko_uri for d in context.dropped}
    listed = [
        f
        for fragments in proposed.values()
        for f in fragments
        if {f.id, f.uko_uri} & (packed_keys | dropped_keys)
    ]
    pending = [
        (name, fragment)
        for name, fragments in sorted(proposed.items())
        for fragment in fragments
        if not {fragment.id, fragment.uko_uri} & (packed_keys | dropped_keys)
    ]
    # Fusion merges transitively (a twin of a method of a listed class), so an explained
    # candidate explains others in turn.
    explained: dict[int, str] = {}
    progress = True
    while progress:
        progress = False
        for position, (_, fragment) in enumerate(pending):
            if position in explained:
                continue
            why = _merged_into(fragment, listed)
            if why:
                explained[position] = why
                listed.append(fragment)
                progress = True
    unlisted = [
        Unlisted(name, fragment, explained.get(position, "unexplained"))
        for position, (name, fragment) in enumerate(pending)
    ]
    largest: dict[str, ContextFragment] = {}
    for fragments in proposed.values():
        for fragment in fragments:
            known = largest.get(fragment.uko_uri)
            if known is None or fragment.token_count > known.token_count:
                largest[fragment.uko_uri] = fragment
    room = usable - context.tokens_used
    packed_texts = {f.content_hash for f in context.fragments}
    fits = tuple(
        f
        for uri, f in sorted(largest.items())
        if uri not in packed_keys
        and f.id not in packed_keys
        and f.content_hash not in packed_texts  # a copy of a packed text is packed
        and f.token_count <= room
    )
    return Assembly(
        query=context.query,
        budget=context.budget,
        usable=usable,
        tokens_used=context.tokens_used,
        packed=len(context.fragments),
        proposed=sum(len(fragments) for fragments in proposed.values()),
        supply_tokens=sum(f.token_count for f in largest.values()),
        drops=Counter(drop_kind(d.reason) for d in context.dropped),
        unlisted=tuple(unlisted),
        fits_left_out=fits,
        strategies={s.name: (s.allocated_tokens, s.used_tokens) for s in context.strategies},
    )


def measure(
    pipeline: contextpipe.Pipeline,
    log: ProposalLog,
    query: str,
    budget: int,
    output: OutputFormat = OutputFormat.MARKDOWN,
) -> tuple[AssembledContext, Assembly]:
    """Assemble `query` at `budget` and trace it."""
    log.clear()
    context = pipeline.assemble(query, budget=budget, output=output)
    return context, trace(context, log.proposed, usable_budget(pipeline, budget, output))


def measure_all(
    pipeline: contextpipe.Pipeline,
    queries: Sequence[str],
    budgets: Iterable[int] = BUDGETS,
    output: OutputFormat = OutputFormat.MARKDOWN,
) -> list[Assembly]:
    """Every query at every budget (after one warm-up assembly)."""
    log = ProposalLog(pipeline)
    pipeline.assemble(queries[0], budget=1000, output=output)
    return [
        measure(pipeline, log, query, budget, output)[1] for budget in budgets for query in queries
    ]


def _mean(values: Iterable[float]) -> float:
    return round(statistics.fmean(values), 1)


def summarise(assemblies: Sequence[Assembly]) -> dict[int, dict[str, float]]:
    """Per budget: fill median, 10th percentile and share at the target; means per query of
    proposed, packed, each kind of drop, unlisted and left-out-though-it-fits candidates.
    """
    summary: dict[int, dict[str, float]] = {}
    for budget in sorted({a.budget for a in assemblies}):
        rows = [a for a in assemblies if a.budget == budget]
        fills = sorted(a.fill for a in rows)
        known = [kind for kind, _ in DROP_KINDS]
        kinds = known + sorted({kind for a in rows for kind in a.drops} - set(known))
        summary[budget] = {
            "queries": len(rows),
            "usable": rows[0].usable,
            "median_fill": round(statistics.median(fills), 4),
            "p10_fill": round(statistics.quantiles(fills, n=10, method="inclusive")[0], 4)
            if len(fills) > 1
            else round(fills[0], 4),
            "share_at_target": round(sum(f >= TARGET for f in fills) / len(fills), 3),
            "median_tokens": statistics.median(a.tokens_used for a in rows),
            "proposed": _mean(a.proposed for a in rows),
            "supply_over_usable": round(
                statistics.median(a.supply_tokens / a.usable for a in rows), 2
            ),
            "packed": _mean(a.packed for a in rows),
            **{f"dropped: {kind}": _mean(a.drops[kind] for a in rows) for kind in kinds},
            **{
                f"in neither: {why}": _mean(
                    sum(u.why.startswith(why) for u in a.unlisted) for a in rows
                )
                for why in UNLISTED_KINDS
            },
            "left out though it fits": _mean(len(a.fits_left_out) for a in rows),
        }
    return summary
