"""Render selected fragments as markdown, xml, json or chat messages.

Each renderer says exactly which text counts against the budget (`Rendered.counted`), so
the packer's token accounting is the accounting of what is emitted, headers and separators
included.

A file's name is not text the model should read as structure: a name holding a line break
would add lines of its own (a fake `###` heading, a `SYSTEM:` line). So what comes from file
names and paths is shown by `shown_name` in markdown (and chat messages) and xml: line
breaks and other control characters written as escapes (`\n`, `\r`, `\x1b`, `\u2028`),
and a backslash doubled, so that the name stays on its line and reads unambiguously. json
gives names exactly, escaped as JSON strings, with the line breaks JSON may leave raw
(U+0085, U+2028, U+2029) escaped too, so that every object stays on its line.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from xml.sax.saxutils import escape, quoteattr

from ..core.chunks import CHUNK_KIND
from ..core.models import ChatMessage, ContextFragment, ContextRequest, OutputFormat
from ..text.words import shown_name

SYSTEM_PROMPT = (
    "Use the context below to answer. Each part names its source path and lines; cite them."
)


@dataclass(frozen=True)
class Frame:
    """The counted text around the blocks: for one or more fragments,
    `render(fragments, request).counted == before + separator.join(blocks) + after`.
    """

    before: str
    after: str


@dataclass(frozen=True)
class Rendered:
    """Rendered output and the exact text whose tokens count against the budget."""

    text: str
    messages: tuple[ChatMessage, ...] = ()

    @property
    def counted(self) -> str:
        """For chat messages every role and content counts, as `role\\ncontent\\n`."""
        if self.messages:
            return "".join(_counted_message(m) for m in self.messages)
        return self.text


class Renderer(Protocol):
    """Turns an ordered list of fragments into output."""

    separator: str

    def block(self, fragment: ContextFragment) -> str:
        """One fragment's text as it appears in the output."""
        ...

    def render(self, fragments: Sequence[ContextFragment], request: ContextRequest) -> Rendered:
        """The whole output for these fragments, in this order."""
        ...

    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered:
        """The whole output for fragments already rendered by `block`, in this order."""
        ...

    def frame(self, request: ContextRequest) -> Frame:
        """What `render` puts around the blocks when there is at least one."""
        ...


class _BlockRenderer(ABC):
    """`render` is `render_blocks` over each fragment's `block`."""

    @abstractmethod
    def block(self, fragment: ContextFragment) -> str: ...

    @abstractmethod
    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered: ...

    def render(self, fragments: Sequence[ContextFragment], request: ContextRequest) -> Rendered:
        return self.render_blocks([self.block(f) for f in fragments], request)


# Line breaks that JSON leaves raw in a string (it escapes those below U+0020).
_JSON_LINE_BREAKS = {code: f"\\u{code:04x}" for code in (0x85, 0x2028, 0x2029)}


def _location(fragment: ContextFragment) -> str:
    source = fragment.source
    if source.kind == CHUNK_KIND:  # a caller's chunk has no lines to cite, only its id
        return shown_name(source.path)
    return f"{shown_name(source.path)}:{source.start_line}-{source.end_line}"


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


class MarkdownRenderer(_BlockRenderer):
    """A heading per fragment with path and lines; code in fenced blocks."""

    separator = "\n\n"

    def block(self, fragment: ContextFragment) -> str:
        if fragment.detail_depth == 0:
            return f"- {fragment.text}"
        title = shown_name(fragment.metadata.get("title", ""))  # a file's name, at times
        header = f"### {_location(fragment)}" + (f" · {title}" if title else "")
        language = fragment.metadata.get("language", "")
        if language:
            fence = _fence(fragment.text)
            return f"{header}\n{fence}{language}\n{fragment.text}\n{fence}"
        return f"{header}\n\n{fragment.text}"

    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered:
        return Rendered(self.separator.join(blocks))

    def frame(self, request: ContextRequest) -> Frame:
        return Frame("", "")


class XmlRenderer(_BlockRenderer):
    """`<documents>` holding one `<document source=... lines=...>` per fragment."""

    separator = "\n"

    def block(self, fragment: ContextFragment) -> str:
        source = fragment.source
        lines = f"{source.start_line}-{source.end_line}"
        attributes = (
            f"source={quoteattr(shown_name(source.path))} lines={quoteattr(lines)}"
            f' uri={quoteattr(shown_name(fragment.uko_uri))} depth="{fragment.detail_depth}"'
        )
        return f"<document {attributes}>\n{escape(fragment.text)}\n</document>"

    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered:
        if not blocks:
            return Rendered("")
        frame = self.frame(request)
        return Rendered(frame.before + self.separator.join(blocks) + frame.after)

    def frame(self, request: ContextRequest) -> Frame:
        return Frame("<documents>\n", "\n</documents>")


class JsonRenderer(_BlockRenderer):
    """A JSON array, one object per fragment on its own line."""

    separator = ",\n"

    def block(self, fragment: ContextFragment) -> str:
        source = fragment.source
        entry = json.dumps(
            {
                "source": source.path,
                "lines": [source.start_line, source.end_line],
                "uri": fragment.uko_uri,
                "depth": fragment.detail_depth,
                "text": fragment.text,
            },
            ensure_ascii=False,
        )
        return entry.translate(_JSON_LINE_BREAKS)

    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered:
        frame = self.frame(request)
        return Rendered(frame.before + self.separator.join(blocks) + frame.after)

    def frame(self, request: ContextRequest) -> Frame:
        return Frame("[\n", "\n]")


class MessagesRenderer(_BlockRenderer):
    """A system message carrying the context (as markdown), then the user's messages."""

    def __init__(self) -> None:
        self._markdown = MarkdownRenderer()
        self.separator = self._markdown.separator

    def block(self, fragment: ContextFragment) -> str:
        return self._markdown.block(fragment)

    def render_blocks(self, blocks: Sequence[str], request: ContextRequest) -> Rendered:
        context = self._markdown.render_blocks(blocks, request).text
        system = f"{SYSTEM_PROMPT}\n\n{context}" if context else SYSTEM_PROMPT
        messages = (ChatMessage(role="system", content=system), *_conversation(request))
        return Rendered(system, messages)

    def frame(self, request: ContextRequest) -> Frame:
        after = "".join(_counted_message(m) for m in _conversation(request))
        return Frame(f"system\n{SYSTEM_PROMPT}\n\n", "\n" + after)


def _conversation(request: ContextRequest) -> tuple[ChatMessage, ...]:
    return request.messages or (ChatMessage(role="user", content=request.query),)


def _counted_message(message: ChatMessage) -> str:
    return f"{message.role}\n{message.content}\n"


def renderer_for(output: OutputFormat) -> Renderer:
    """The renderer for an output format."""
    renderers: dict[OutputFormat, type[Renderer]] = {
        OutputFormat.MARKDOWN: MarkdownRenderer,
        OutputFormat.XML: XmlRenderer,
        OutputFormat.JSON: JsonRenderer,
        OutputFormat.MESSAGES: MessagesRenderer,
    }
    return renderers[output]()
