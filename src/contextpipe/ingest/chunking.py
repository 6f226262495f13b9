"""Split one file's text into chunks: markdown by heading, Python by top-level definition,
everything else by paragraph, each with its line span and a stable UKO URI.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

CODE_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".sql": "sql",
    ".html": "html",
    ".css": "css",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".xml": "xml",
}
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


@dataclass(frozen=True)
class Chunk:
    """One node's text with its place in the file."""

    uri: str
    kind: str
    name: str
    start_line: int
    end_line: int
    text: str


def language_of(path: str) -> str:
    """The fence language for a path, or '' for prose."""
    return CODE_LANGUAGES.get(PurePosixPath(path).suffix.lower(), "")


def chunk_file(path: str, text: str, max_lines: int) -> list[Chunk]:
    """Chunks of `text` (the content of `path`), in file order, none longer than `max_lines`
    lines except where a single line is longer.
    """
    suffix = PurePosixPath(path).suffix.lower()
    lines = text.splitlines()
    if suffix in MARKDOWN_SUFFIXES:
        spans = _markdown_sections(lines)
        scheme = "doc"
    elif suffix in {".py", ".pyi"}:
        spans = _python_definitions(text, lines)
        scheme = "code"
    else:
        scheme = "code" if suffix in CODE_LANGUAGES else "doc"
        spans = _paragraphs(lines, "block" if scheme == "code" else "paragraph")
    chunks: list[Chunk] = []
    used: dict[str, int] = {}
    for kind, name, start, end in spans:
        for part, (first, last) in enumerate(_split(start, end, max_lines), start=1):
            span = _trimmed(lines, first, last)
            if span is None:
                continue
            part_start, part_end = span
            body = "\n".join(lines[part_start - 1 : part_end])
            anchor = _slug(name) if part == 1 else f"{_slug(name)}-part-{part}"
            used[anchor] = used.get(anchor, 0) + 1
            if used[anchor] > 1:
                anchor = f"{anchor}-{used[anchor]}"
            label = name if part == 1 else f"{name} (part {part})"
            chunks.append(
                Chunk(f"uko://{scheme}/{path}#{anchor}", kind, label, part_start, part_end, body)
            )
    return chunks


_Span = tuple[str, str, int, int]  # kind, name, first line, last line (1-based, inclusive)


def _trimmed(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """The span without its leading and trailing blank lines; None when all are blank."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _split(start: int, end: int, max_lines: int) -> Iterator[tuple[int, int]]:
    for part_start in range(start, end + 1, max_lines):
        yield part_start, min(end, part_start + max_lines - 1)


def _slug(name: str) -> str:
    slug = re.sub(r"[^\w.]+", "-", name.strip().lower()).strip("-")
    return slug or "section"


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown_sections(lines: list[str]) -> list[_Span]:
    headings: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        if match := _FENCE.match(line):
            marker = match.group(1)
            fence = None if fence == marker else fence or marker
            continue
        if fence is None and (heading := _HEADING.match(line)):
            headings.append((number, heading.group(2) or "section"))
    spans: list[_Span] = []
    first = headings[0][0] if headings else len(lines) + 1
    if first > 1 and any(line.strip() for line in lines[: first - 1]):
        spans.append(("section", "preamble", 1, first - 1))
    for index, (start, title) in enumerate(headings):
        end = headings[index + 1][0] - 1 if index + 1 < len(headings) else len(lines)
        spans.append(("section", title, start, end))
    return spans


def _python_definitions(text: str, lines: list[str]) -> list[_Span]:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return _paragraphs(lines, "block")
    spans: list[_Span] = []
    covered_until = 0
    for node in module.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        if start - 1 > covered_until:
            spans.extend(_module_blocks(lines, covered_until + 1, start - 1))
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        spans.append((kind, node.name, start, end))
        covered_until = end
    if covered_until < len(lines):
        spans.extend(_module_blocks(lines, covered_until + 1, len(lines)))
    return spans


def _module_blocks(lines: list[str], start: int, end: int) -> list[_Span]:
    """Module-level code between definitions (imports, constants, scripts)."""
    return [("module", "module", start, end)] if _trimmed(lines, start, end) else []


def _paragraphs(lines: list[str], kind: str) -> list[_Span]:
    spans: list[_Span] = []
    start: int | None = None
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            start = start or number
        elif start is not None:
            spans.append((kind, f"{kind}-{len(spans) + 1}", start, number - 1))
            start = None
    return spans
