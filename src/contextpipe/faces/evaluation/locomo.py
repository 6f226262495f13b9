"""`contextpipe eval locomo`: recall of the evidence turns of LoCoMo's questions, with each
conversation kept as memory.

A LoCoMo file is a JSON list of samples, each with `sample_id`, `conversation`
(`speaker_a`, `speaker_b`, and per session N a list `session_N` of turns `{speaker,
dia_id, text}` with its time `session_N_date_time`, such as "1:56 pm on 8 May, 2023") and
`qa` (questions: `question`, `evidence` (dia_ids), `category` 1-5).

Method (figures are only comparable when measured the same way):

1. Each conversation is remembered as the memory of the user `locomo/<sample_id>`, one
   item per turn that keeps its dia_id, said at its session's time plus its place in the
   session in seconds (so that turns keep their order); a turn that shares a photo reads
   `text [shares <its blip_caption>]`, as the photo is part of what was said (the
   image-search `query` it was found by is not); all conversations go into one
   temporary store under the user's settings (their store is never touched), and vectors
   are computed as `contextpipe index` computes them.
2. Each question is asked as that user, in a session of its own for each configuration
   measured (so that no question sees what another, or another configuration, was
   given), as of the conversation's last turn (every read of a request leaves out what
   came after its `as_of`), with `Pipeline.assemble(question, budget=4000)`. Its ranking
   is the order of the result's
   turns of that conversation.
3. Evidence ids are normalised: a list in one string (`"D8:6; D9:17"`) is split, `D:11:26`
   reads `D11:26`, `D30:05` reads `D30:5`; ids naming no turn of the conversation are
   dropped, and a question left without evidence is skipped and counted (`skipped`).
4. recall@k is the share of a question's evidence turns among the first k turns of its
   ranking, averaged over questions: over categories 1-4 (multi-hop, temporal,
   open-domain, single-hop) overall, per category, and for category 5 (adversarial) apart.
5. The default mix is a request that names no strategy; each loaded strategy is also
   measured alone. Figures are rounded to 4 decimals.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast
from urllib.parse import quote, unquote

from contextpipe import (
    ContextpipeError,
    MemoryItem,
    MemoryScope,
    Pipeline,
    StrategySelection,
)

from .measure import EvalProgress
from .project import IndexingProgress, Project

#: The budget of each question's context (rule 2).
LOCOMO_BUDGET = 4000
#: The cut-offs of recall@k (rule 4).
CUTOFFS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
#: Reported apart, never in the overall figures (rule 4).
ADVERSARIAL = 5
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_TIME_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Question:
    """One question with its normalised evidence (rule 3)."""

    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    """One sample: its turns as memory items, when its last turn was said, its questions."""

    sample_id: str
    turns: tuple[MemoryItem, ...]
    last_said: datetime
    questions: tuple[Question, ...]
    skipped: int

    @property
    def user(self) -> str:
        """The user whose memory the conversation is (rule 1)."""
        return f"locomo/{self.sample_id}"


@dataclass(frozen=True)
class Recall:
    """recall@k over some questions."""

    questions: int
    at: Mapping[int, float]

    def as_json(self) -> dict[str, int | float]:
        """`questions` and `recall@k` for each cut-off."""
        return {"questions": self.questions, **{f"recall@{k}": v for k, v in self.at.items()}}


@dataclass(frozen=True)
class LocomoFigures:
    """One configuration's recall: overall (categories 1-4) and per category."""

    overall: Recall
    by_category: Mapping[str, Recall]

    def as_json(self) -> dict[str, object]:
        """The keys of `eval locomo --format json`, without `per_strategy`."""
        by_category = {name: recall.as_json() for name, recall in self.by_category.items()}
        return {**self.overall.as_json(), "by_category": by_category}


@dataclass(frozen=True)
class LocomoEvaluation:
    """The default mix, each strategy alone, the questions skipped, and why some
    strategies never ran.
    """

    mix: LocomoFigures
    per_strategy: Mapping[str, LocomoFigures]
    skipped: int
    not_run: Mapping[str, str]

    def as_json(self) -> dict[str, object]:
        """`contextpipe eval locomo --format json`."""
        per_strategy = {name: figures.as_json() for name, figures in self.per_strategy.items()}
        return {**self.mix.as_json(), "skipped": self.skipped, "per_strategy": per_strategy}


def read_locomo(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo file; a mistake is one line naming file, sample, key."""
    try:
        parsed: object = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContextpipeError(f"{path}: cannot be read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ContextpipeError(f"{path}: not JSON ({exc})") from None
    if not isinstance(parsed, list) or not parsed:
        raise ContextpipeError(f"{path}: expected a JSON list of LoCoMo samples")
    return [
        _conversation(path, number, sample)
        for number, sample in enumerate(cast(list[object], parsed), start=1)
    ]


def _conversation(path: Path, number: int, sample: object) -> Conversation:
    where = f"{path}: sample {number}"
    record = _object(sample, where)
    sample_id = record.get("sample_id", f"sample-{number}")
    if not isinstance(sample_id, str) or not sample_id:
        raise ContextpipeError(f'{where}: "sample_id" must be a non-empty string')
    where = f"{path}: sample {sample_id!r}"
    conversation = _object(record.get("conversation"), f"{where}: conversation")
    turns: list[MemoryItem] = []
    last: datetime | None = None
    sessions = sorted(
        (int(match.group(1)), key)
        for key in conversation
        if (match := _SESSION.fullmatch(key)) is not None
    )
    for _, key in sessions:
        at = _session_time(conversation.get(f"{key}_date_time"), f"{where}: {key}_date_time")
        last = at if last is None or at > last else last
        said = conversation[key]
        if not isinstance(said, list):
            raise ContextpipeError(f"{where}: {key} must be a list of turns")
        for place, turn in enumerate(cast(list[object], said)):
            turns.append(_turn(turn, f"{where}: {key} turn {place + 1}", sample_id, at, place))
    if last is None:
        raise ContextpipeError(f"{where}: the conversation has no session_N")
    known = {turn.id for turn in turns}
    questions: list[Question] = []
    skipped = 0
    raw_questions = record.get("qa", [])
    if not isinstance(raw_questions, list):
        raise ContextpipeError(f'{where}: "qa" must be a list')
    for place, item in enumerate(cast(list[object], raw_questions), start=1):
        question = _question(item, f"{where}: qa {place}", known)
        if question is None:
            skipped += 1
        else:
            questions.append(question)
    last_said = max((turn.at for turn in turns), default=last)
    return Conversation(sample_id, tuple(turns), last_said, tuple(questions), skipped)


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ContextpipeError(f"{where}: expected a JSON object")
    return cast(dict[str, object], value)


def _session_time(value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise ContextpipeError(f"{where}: missing, or not a string")
    try:
        return datetime.strptime(value.strip(), _TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise ContextpipeError(
            f'{where}: {value!r} is not a time like "1:56 pm on 8 May, 2023"'
        ) from None


def _turn(turn: object, where: str, sample_id: str, at: datetime, place: int) -> MemoryItem:
    record = _object(turn, where)
    values: dict[str, str] = {}
    for key in ("speaker", "dia_id", "text"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ContextpipeError(f'{where}: "{key}" must be a non-empty string')
        values[key] = value
    ids = normalised_ids(values["dia_id"])
    if len(ids) != 1:
        raise ContextpipeError(f'{where}: "dia_id" {values["dia_id"]!r} is not like D1:3')
    caption = record.get("blip_caption")
    shared = f" [shares {caption.strip()}]" if isinstance(caption, str) and caption.strip() else ""
    return MemoryItem(
        id=ids[0],
        text=values["text"] + shared,
        at=at + timedelta(seconds=place),
        scope=MemoryScope.USER,
        owner=f"locomo/{sample_id}",
        speaker=values["speaker"],
    )


def normalised_ids(text: str) -> list[str]:
    """Every evidence id in `text`, normalised (rule 3)."""
    return [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE.findall(text)]


def _question(item: object, where: str, known: set[str]) -> Question | None:
    record = _object(item, where)
    text, category, evidence = (
        record.get("question"),
        record.get("category"),
        record.get("evidence", []),
    )
    if not isinstance(text, str) or not text.strip():
        raise ContextpipeError(f'{where}: "question" must be a non-empty string')
    if not isinstance(category, int) or category not in CATEGORIES:
        raise ContextpipeError(f'{where}: "category" must be 1 to 5')
    if not isinstance(evidence, list):
        raise ContextpipeError(f'{where}: "evidence" must be a list of dia_ids')
    ids = {
        normal
        for raw in cast(list[object], evidence)
        if isinstance(raw, str)
        for normal in normalised_ids(raw)
        if normal in known
    }
    return Question(text, category, frozenset(ids)) if ids else None


@contextmanager
def memory_project(
    conversations: Sequence[Conversation],
    config: Path | None,
    progress: IndexingProgress | None = None,
) -> Generator[Project]:
    """The conversations remembered in a temporary store (rule 1)."""
    with tempfile.TemporaryDirectory(prefix="contextpipe-locomo-") as folder:
        project = Project(Path(folder), config, {})
        pipeline = project.open()
        try:
            pipeline.remember_all(turn for c in conversations for turn in c.turns)
            if pipeline.settings.embedding.enabled:
                pipeline.embed(progress)
        finally:
            pipeline.close()
        yield project


def evaluate_locomo(
    project: Project,
    conversations: Sequence[Conversation],
    progress: EvalProgress | None = None,
) -> LocomoEvaluation:
    """The recall of the default mix and of each loaded strategy alone (module rules)."""
    skipped = sum(conversation.skipped for conversation in conversations)
    pipeline = project.open()
    try:
        mix, _ = _series(pipeline, conversations, None, progress, "default mix")
        per_strategy: dict[str, LocomoFigures] = {}
        not_run: dict[str, str] = {}
        for registered in pipeline.strategies:
            name = registered.strategy.name
            figures, why = _series(pipeline, conversations, name, progress, name)
            if why is None:
                per_strategy[name] = figures
            else:
                not_run[name] = why
        return LocomoEvaluation(mix, per_strategy, skipped, not_run)
    finally:
        pipeline.close()


def _series(
    pipeline: Pipeline,
    conversations: Sequence[Conversation],
    strategy: str | None,
    progress: EvalProgress | None,
    label: str,
) -> tuple[LocomoFigures, str | None]:
    """Figures of every question under the mix or one strategy alone, and, for a strategy
    that ran for no question, the first reason it gave.
    """
    selection = None if strategy is None else {strategy: StrategySelection()}
    if progress is not None:
        progress.started(label, sum(len(c.questions) for c in conversations))
    scored: list[tuple[int, dict[int, float]]] = []
    ran, why = strategy is None, None
    for conversation in conversations:
        # A memory item's stored path is its node URI: owner and id percent-quoted.
        prefix = f"uko://memory/{MemoryScope.USER.value}/{quote(conversation.user, safe='')}/"
        for number, question in enumerate(conversation.questions, start=1):
            context = pipeline.assemble(
                question.text,
                budget=LOCOMO_BUDGET,
                strategies=selection,
                user=conversation.user,
                session=f"{conversation.user}/{label}/q{number}",
                as_of=conversation.last_said,
            )
            turns = (f.source.path for f in context.fragments if f.source.path.startswith(prefix))
            ranking = list(dict.fromkeys(unquote(path.removeprefix(prefix)) for path in turns))
            scored.append((question.category, _recalls(ranking, question.evidence)))
            for report in context.strategies:
                if report.name == strategy:
                    ran = ran or report.status == "ok"
                    why = why or f"{report.status}: {report.reason}"
            if progress is not None:
                progress.advance()
    return _figures(scored), None if ran else (why or "no report")


def _recalls(ranking: Sequence[str], evidence: frozenset[str]) -> dict[int, float]:
    return {k: len(evidence.intersection(ranking[:k])) / len(evidence) for k in CUTOFFS}


def _figures(scored: Iterable[tuple[int, dict[int, float]]]) -> LocomoFigures:
    by_category: dict[int, list[dict[int, float]]] = {}
    for category, recalls in scored:
        by_category.setdefault(category, []).append(recalls)
    overall = [r for category, rs in by_category.items() if category != ADVERSARIAL for r in rs]
    return LocomoFigures(
        _mean(overall),
        {CATEGORIES[c]: _mean(by_category[c]) for c in sorted(by_category)},
    )


def _mean(recalls: Sequence[dict[int, float]]) -> Recall:
    count = len(recalls)
    return Recall(
        count,
        {k: round(sum(r[k] for r in recalls) / count, 4) if count else 0.0 for k in CUTOFFS},
    )
