"""Chat requests: the room a model's window leaves for context, a deadline the whole call
keeps, and the caller's messages back with the context before them.

Rules, in order (`Pipeline.assemble_chat` follows them):

1. The model names its window, tokenizer and output reserve (`model_window`). An unknown
   model is an error unless the request gives a budget: then that budget is the room, and
   `[tokenizer] name` counts.
2. The messages cost their text, every other field of theirs (tool calls, names, content
   parts that are not text) as JSON, `MESSAGE_TOKENS` each, and the tool definitions as
   JSON, counted with the model's tokenizer: on the safe side of what the provider counts.
3. The context may take the window minus the messages, the output reserve and its own
   message (`MESSAGE_TOKENS`, the directive, `SEAM_TOKENS`), capped by the request's budget
   or `[chat] max_budget`. No room left: the messages go back untouched (`no_room`).
4. What is looked up is the request's query, else the text of the last user message;
   without either the request is an error.
5. The request's deadline (else `[executor] deadline_ms`) bounds the whole call: the
   strategies get `STRATEGY_SHARE` of it, and when it passes the call answers without the
   assembly, which finishes on its worker thread and is dropped (`deadline`).
6. A failure never fails the call: the messages go back untouched with the reason
   (`store_unavailable`, `no_room` for a budget no output fits, `error:<type>`).
7. The injected message is a system message, the directive then the context, before the
   caller's messages, which are unchanged and in order. Nothing found: nothing injected.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TypeVar

from ..config import Settings, model_window
from ..core.chat import ChatContext, ChatMetadata, ChatRequest, ChatTurn, FallbackReason
from ..core.errors import ContextpipeError
from ..core.models import AssembledContext
from ..core.workers import DaemonWorkers
from ..text.tokens import Tokenizer, get_tokenizer

T = TypeVar("T")

#: A message's own tokens besides its content (role, separators), and the reply's priming,
#: as OpenAI documents them for its chat format (3 and 3), rounded up for the others.
MESSAGE_TOKENS = 4
#: Tokens the join of the directive and the context may add to what each counts alone.
SEAM_TOKENS = 2
#: Share of a chat request's deadline its strategies get; the rest is for acceptance,
#: fusion, packing and rendering.
STRATEGY_SHARE = 0.75
_SEPARATOR = "\n\n"
_WORKERS = DaemonWorkers("contextpipe-chat")


@dataclass(frozen=True)
class ChatPlan:
    """What rules 1-4 decided for one chat request."""

    request_id: str
    window: int | None
    tokenizer: Tokenizer
    messages_tokens: int
    #: Tokens the injected message may take (context, directive, its message tokens).
    room: int
    #: Tokens the rendered context may take; 0 or less: no room.
    budget: int
    directive: str
    query: str
    deadline_ms: int


def plan_chat(settings: Settings, chat: ChatRequest) -> ChatPlan:
    """Rules 1-4: the room, the budget and the query of `chat`."""
    known = model_window(settings, chat.model)
    if known is None and chat.budget is None:
        raise ContextpipeError(
            f"unknown model {chat.model!r}: give a budget, or add [models.{json.dumps(chat.model)}]"
            " window = N to config.toml"
        )
    tokenizer = get_tokenizer(known.tokenizer if known else settings.tokenizer.name)
    used = messages_tokens(tokenizer, chat)
    directive = settings.chat.directive if chat.directive is None else chat.directive
    own = (
        MESSAGE_TOKENS + SEAM_TOKENS + (tokenizer.count(directive + _SEPARATOR) if directive else 0)
    )
    cap = chat.budget or settings.chat.max_budget
    if known is None:
        room = cap + own
    else:
        reserve = known.output_reserve if chat.output_reserve is None else chat.output_reserve
        room = min(known.window - used - reserve, cap + own)
    return ChatPlan(
        request_id=chat.request_id or uuid.uuid4().hex,
        window=known.window if known else None,
        tokenizer=tokenizer,
        messages_tokens=used,
        room=room,
        budget=room - own,
        directive=directive,
        query=_query(chat),
        deadline_ms=chat.deadline_ms or settings.executor.deadline_ms,
    )


def messages_tokens(tokenizer: Tokenizer, chat: ChatRequest) -> int:
    """Rule 2: what the caller's messages and tool definitions take of the window."""
    total = MESSAGE_TOKENS  # the reply's priming
    for turn in chat.messages:
        rest = turn.model_dump(exclude={"role", "content"}, exclude_none=True)
        if not isinstance(turn.content, str):
            rest["content"] = [p for p in turn.content or () if p.get("type") != "text"]
        total += MESSAGE_TOKENS + tokenizer.count(turn.role) + tokenizer.count(turn.text)
        if any(rest.values()):
            total += tokenizer.count(json.dumps(rest, sort_keys=True))
    if chat.tools:
        total += tokenizer.count(json.dumps(chat.tools, sort_keys=True))
    return total


def _query(chat: ChatRequest) -> str:
    if chat.query is not None:
        return chat.query
    for turn in reversed(chat.messages):
        if turn.role == "user" and turn.text.strip():
            return turn.text
    raise ContextpipeError("messages: no user message with text to look up; give a query")


def strategies_deadline(plan: ChatPlan) -> int:
    """Rule 5: the strategies' share of the call's deadline, in whole milliseconds."""
    return max(1, int(plan.deadline_ms * STRATEGY_SHARE))


def within(seconds: float, call: Callable[[], T]) -> T:
    """Rule 5: `call()`'s result, or `TimeoutError` once `seconds` have passed. The call
    runs on a daemon worker, which a deadline leaves to finish unwatched. Reused: a
    thread of its own per call opened the store's connections anew each time, and left
    them in reference cycles for a full collection to free.
    """
    answer: Future[T] = Future()

    def run() -> Callable[[], None]:
        try:
            result = call()
        except BaseException as exc:  # the caller reads it from the future
            return functools.partial(answer.set_exception, exc)
        return functools.partial(answer.set_result, result)

    _WORKERS.submit(run)
    return answer.result(timeout=max(0.0, seconds))


def chat_context(
    chat: ChatRequest,
    plan: ChatPlan,
    context: AssembledContext | None,
    reason: FallbackReason,
    elapsed_ms: float,
) -> ChatContext:
    """Rules 6-7: the messages out, with the injected one when there is a context that
    fits the room, and what it held.
    """
    fragments = context.fragments if context is not None else ()
    injected = _injected(plan, context.text) if context is not None and fragments else None
    tokens = 0 if injected is None else MESSAGE_TOKENS + plan.tokenizer.count(injected)
    if tokens > plan.room:  # the join merged worse than counted: never past the window
        injected, tokens, fragments, reason = None, 0, (), "no_room"
    dropped = context.dropped if context is not None else ()
    left_out = sum(1 for row in dropped if row.reason.startswith("budget:"))
    messages = chat.messages
    if injected is not None:
        messages = (ChatTurn(role="system", content=injected), *messages)
    window_used = None
    if plan.window:
        window_used = round((plan.messages_tokens + tokens) / plan.window, 4)
    return ChatContext(
        messages=messages,
        metadata=ChatMetadata(
            request_id=plan.request_id,
            model=chat.model,
            window=plan.window,
            budget=max(plan.budget, 0),
            tokens_in_messages=plan.messages_tokens,
            tokens_injected=tokens,
            window_used=window_used,
            fragments_injected=len(fragments),
            fragments_available=len(fragments) + left_out,
            truncated=left_out > 0,
            directive_injected=injected is not None and bool(plan.directive),
            fallback_reason=reason,
            fragment_ids=tuple(fragment.id for fragment in fragments),
            elapsed_ms=round(elapsed_ms, 2),
        ),
        strategies=context.strategies if context is not None else (),
    )


def _injected(plan: ChatPlan, text: str) -> str:
    return plan.directive + _SEPARATOR + text if plan.directive else text
