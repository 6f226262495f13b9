"""Chat requests: a model's conversation in, the same conversation with context before it
out, and what was injected (`/v1/chat/assemble`, gRPC's `AssembleContext`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import StrategyReport

#: Why a chat request got less than an assembled context (empty: it did not).
FallbackReason = str


class ChatTurn(BaseModel):
    """One message of the caller's conversation, as chat APIs take it. Fields besides these
    are kept as they came: the caller's messages go back unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | tuple[dict[str, Any], ...] | None = Field(
        default=None, description="Text, or content parts (`{type: text, text}` and others)."
    )
    name: str | None = None
    tool_calls: tuple[dict[str, Any], ...] | None = None
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        """The message's text: its content, or its text parts one per line."""
        if isinstance(self.content, str):
            return self.content
        parts = self.content or ()
        return "\n".join(str(part.get("text", "")) for part in parts if part.get("type") == "text")


class ChatRequest(BaseModel):
    """A model's conversation to enrich with context."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1, description="The model it is for: its window and tokenizer.")
    messages: tuple[ChatTurn, ...] = Field(min_length=1)
    tools: tuple[dict[str, Any], ...] = Field(
        default=(), description="Tool definitions sent with the messages: they take room too."
    )
    query: str | None = Field(
        default=None, min_length=1, description="What to look up; default: the last user text."
    )
    budget: int | None = Field(
        default=None, gt=0, description="Most tokens of context; default `[chat] max_budget`."
    )
    output_reserve: int | None = Field(
        default=None, ge=0, description="Tokens kept for the answer; default: the model's."
    )
    directive: str | None = Field(
        default=None, description='Text before the context; default `[chat] directive`, "" none.'
    )
    session: str | None = Field(default=None, min_length=1, description="Who asks: the session.")
    user: str | None = Field(default=None, min_length=1, description="Who asks: the user.")
    deadline_ms: int | None = Field(
        default=None, gt=0, description="Bounds the whole call; default `[executor] deadline_ms`."
    )
    request_id: str | None = Field(
        default=None, min_length=1, max_length=200, description="Default: a new random id."
    )


class ChatMetadata(BaseModel):
    """What a chat request was given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str
    model: str
    window: int | None = Field(description="The model's context window (None: not known).")
    budget: int = Field(description="Tokens the context could take (0: no room).")
    tokens_in_messages: int = Field(description="The caller's messages and tools, counted.")
    tokens_injected: int = Field(description="The injected message, counted.")
    window_used: float | None = Field(description="Share of the window the messages now take.")
    fragments_injected: int
    fragments_available: int = Field(description="Injected, and found but left out for room.")
    truncated: bool = Field(description="Something found was left out for lack of room.")
    directive_injected: bool
    fallback_reason: FallbackReason = Field(
        description='Empty, or why no context was added: "deadline", "store_unavailable",'
        ' "no_room", "error:<type>", or (the service) "busy".'
    )
    fragment_ids: tuple[str, ...]
    elapsed_ms: float


class ChatContext(BaseModel):
    """The caller's messages, in order, after the injected context; and what it held."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[ChatTurn, ...]
    metadata: ChatMetadata
    strategies: tuple[StrategyReport, ...] = Field(
        default=(), description="What each strategy did (none when nothing was assembled)."
    )
