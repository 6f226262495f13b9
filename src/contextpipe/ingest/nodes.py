"""Turn one file into UKO nodes with text at each detail depth, and the raw edges it
declares (imports, calls, links...) for the graph to resolve.

Nodes: a file or document, the definitions or sections inside it (nested), module-level
code blocks and paragraphs. Depths: 9 full text, 4 skeleton (signatures and docstring
summaries; headings and first sentences), 0 a one-line listing.

Edge targets are `EdgeTarget`s resolved when the graph is loaded, so that editing one file
never needs another file to be re-read: a node of the file, a definition by name, or a file
by path, dotted module, Java class, C include, Go import path or Rust path.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..contract.records import EdgeTarget, TargetForm
from ..text.words import shown_name
from .code import PARSED_LANGUAGES, Definition, NameUse, ParsedCode, flatten, parse_code

CODE_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".kt": "kotlin",
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
}
DATA_LANGUAGES: dict[str, str] = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
}
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
RST_SUFFIXES = frozenset({".rst"})


@dataclass
class Node:
    """One UKO node of a file, with its text at each depth it has."""

    uri: str
    kind: str
    name: str
    start_line: int
    end_line: int
    parent: str | None
    texts: dict[int, str]
    search_text: str | None = None  # what the full-text index sees; None: not searchable


@dataclass
class FileNodes:
    """What one file contributes to the store and the graph."""

    nodes: list[Node] = field(default_factory=list[Node])
    edges: list[tuple[str, str, EdgeTarget]] = field(
        default_factory=list[tuple[str, str, EdgeTarget]]
    )
    language: str = ""
    has_errors: bool = False


def language_of(path: str) -> str:
    """The language of a source path ('' for prose)."""
    suffix = PurePosixPath(path).suffix.lower()
    return CODE_LANGUAGES.get(suffix) or DATA_LANGUAGES.get(suffix, "")


def file_nodes(path: str, text: str, max_lines: int) -> FileNodes:
    """Nodes and raw edges of the file at `path` (relative, '/'-separated) with `text`."""
    suffix = PurePosixPath(path).suffix.lower()
    lines = text.splitlines()
    language = language_of(path)
    if suffix in MARKDOWN_SUFFIXES:
        result = _document(path, lines, _markdown_headings(lines), max_lines, markdown=True)
    elif suffix in RST_SUFFIXES:
        result = _document(path, lines, _rst_headings(lines), max_lines, markdown=False)
    elif language in PARSED_LANGUAGES:
        result = _code(path, text, lines, language, max_lines)
    elif language in DATA_LANGUAGES.values():
        result = _blocks(path, lines, "doc", "part", language, max_lines)
    elif language:
        result = _blocks(path, lines, "code", "block", language, max_lines)
    else:
        result = _blocks(path, lines, "doc", "paragraph", "", max_lines)
    result.language = language
    return result


# -- shared ----------------------------------------------------------------------------


def _span_text(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1 : end])


def _trimmed(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """The span without its leading and trailing blank lines; None when all are blank."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _parts(start: int, end: int, max_lines: int) -> Iterator[tuple[int, int]]:
    for first in range(start, end + 1, max_lines):
        yield first, min(end, first + max_lines - 1)


def _slug(name: str) -> str:
    return re.sub(r"[^\w.]+", "-", name.strip().lower()).strip("-") or "section"


class _Anchors:
    """Unique anchors within one file: a repeated name gets -2, -3..."""

    def __init__(self) -> None:
        self._used: dict[str, int] = {}

    def __call__(self, name: str) -> str:
        count = self._used.get(name, 0) + 1
        self._used[name] = count
        return name if count == 1 else f"{name}-{count}"


def _listing(kind: str, name: str, path: str, start: int, end: int) -> str:
    # One line, whatever the file is called: names are shown as output shows them.
    return f"{kind} {shown_name(name)} ({shown_name(path)}:{start}-{end})"


_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)")


def _first_sentence(lines: list[str]) -> str:
    text = " ".join(line.strip() for line in lines if line.strip())
    match = _SENTENCE.match(text)
    return (match.group(1) if match else text)[:240]


# -- prose and data --------------------------------------------------------------------


def _blocks(
    path: str, lines: list[str], scheme: str, kind: str, language: str, max_lines: int
) -> FileNodes:
    """A document (or data/source file we do not parse) split into paragraphs/blocks."""
    root = f"uko://{scheme}/{path}"
    whole = "\n".join(lines)
    result = FileNodes()
    # Data files are one document, cut into parts only by size; prose and unparsed code
    # split at blank lines.
    data = language in DATA_LANGUAGES.values()
    spans = [(1, len(lines))] if data else list(_paragraph_spans(lines))
    children: list[Node] = []
    for number, (start, end) in enumerate(spans, start=1):
        for part, (first, last) in enumerate(_parts(start, end, max_lines), start=1):
            span = _trimmed(lines, first, last)
            if span is None:
                continue
            name = f"{kind}-{number}" + (f"-part-{part}" if part > 1 else "")
            body = _span_text(lines, *span)
            children.append(
                Node(
                    f"{root}#{name}",
                    kind,
                    name,
                    *span,
                    root,
                    {9: body, 0: _listing(kind, name, path, *span)},
                    body,
                )
            )
    summary = "\n".join(
        _first_sentence(_span_text(lines, c.start_line, c.end_line).splitlines())
        for c in children[:20]
    )
    kind_of_file = "module" if scheme == "code" else "document"
    result.nodes.append(
        Node(
            root,
            kind_of_file,
            path,
            1,
            max(1, len(lines)),
            None,
            {9: whole, 4: summary, 0: _listing(kind_of_file, path, path, 1, max(1, len(lines)))},
        )
    )
    result.nodes.extend(children)
    return result


def _paragraph_spans(lines: list[str]) -> Iterator[tuple[int, int]]:
    start: int | None = None
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            start = start or number
        elif start is not None:
            yield start, number - 1
            start = None


# -- markdown and reStructuredText -----------------------------------------------------

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:._])\1{2,}\s*$")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_INLINE_CODE = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")


@dataclass(frozen=True)
class _Heading:
    line: int  # first line of the heading's markup (an overline for reStructuredText)
    level: int
    title: str
    label: str  # the heading as a skeleton shows it
    body_start: int  # first line after the heading's markup


def _markdown_headings(lines: list[str]) -> list[_Heading]:
    """ATX headings outside fenced code."""
    headings: list[_Heading] = []
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        if match := _FENCE.match(line):
            marker = match.group(1)
            fence = None if fence == marker else fence or marker
            continue
        if fence is None and (heading := _ATX.match(line)):
            title = heading.group(2) or "section"
            headings.append(
                _Heading(number, len(heading.group(1)), title, line.strip(), number + 1)
            )
    return headings


def _rst_headings(lines: list[str]) -> list[_Heading]:
    """Underlined (and overlined) titles; levels in order of first use."""
    levels: dict[str, int] = {}
    headings: list[_Heading] = []
    for index in range(1, len(lines)):
        underline, title = lines[index], lines[index - 1].strip()
        match = _RST_UNDERLINE.match(underline)
        if not match or not title or _RST_UNDERLINE.match(lines[index - 1]):
            continue
        if len(underline.rstrip()) < len(title):
            continue
        overlined = index >= 2 and lines[index - 2].strip() == underline.strip()
        style = ("over" if overlined else "") + match.group(1)
        level = levels.setdefault(style, len(levels) + 1)
        start = index - 1 if overlined else index  # 1-based: the overline, or the title
        headings.append(_Heading(start, level, title, title, index + 2))
    return headings


def _document(
    path: str,
    lines: list[str],
    headings: list[_Heading],
    max_lines: int,
    markdown: bool,
) -> FileNodes:
    root = f"uko://doc/{path}"
    result = FileNodes()
    anchors = _Anchors()
    title = headings[0].title if headings else PurePosixPath(path).stem
    outline: list[str] = []
    sections: list[Node] = []
    stack: list[tuple[int, str]] = []  # (level, uri) of open sections
    first_heading = headings[0].line if headings else len(lines) + 1
    preamble = _trimmed(lines, 1, first_heading - 1) if first_heading > 1 else None
    if preamble is not None:
        sections.append(
            _section(root, anchors("preamble"), "preamble", path, lines, preamble, root, "", 1)
        )
    for index, heading_at in enumerate(headings):
        start, level, heading = heading_at.line, heading_at.level, heading_at.title
        own_end = headings[index + 1].line - 1 if index + 1 < len(headings) else len(lines)
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else root
        span = _trimmed(lines, start, own_end) or (start, start)
        for part, (first, last) in enumerate(_parts(*span, max_lines), start=1):
            part_span = _trimmed(lines, first, last)
            if part_span is None:
                continue
            anchor = anchors(_slug(heading) + (f"-part-{part}" if part > 1 else ""))
            name = heading if part == 1 else f"{heading} (part {part})"
            label, text_from = (
                (heading_at.label, heading_at.body_start) if part == 1 else (name, first)
            )
            node = _section(root, anchor, name, path, lines, part_span, parent, label, text_from)
            sections.append(node)
            if part == 1:
                stack.append((level, node.uri))
                outline.append(
                    f"{'#' * level if markdown else '-' * level} {heading}: "
                    f"{_first_sentence(lines[heading_at.body_start - 1 : own_end][:5])}"
                )
    whole = "\n".join(lines)
    end = max(1, len(lines))
    result.nodes.append(
        Node(
            root,
            "document",
            title,
            1,
            end,
            None,
            {
                9: whole,
                4: "\n".join(outline) or _first_sentence(lines[:10]),
                0: _listing("document", title, path, 1, end),
            },
            None if sections else whole,
        )
    )
    result.nodes.extend(sections)
    for node in sections:
        body = node.texts[9]
        for target in _LINK.findall(body):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            relative = target.split("#", 1)[0]
            if relative:
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), relative))
                result.edges.append(
                    (node.uri, "links_to", EdgeTarget(TargetForm.FILE, (resolved,)))
                )
        for name in sorted(set(_INLINE_CODE.findall(body))):
            result.edges.append((node.uri, "mentions", _symbol(name.rsplit(".", 1)[-1])))
    return result


def _section(
    root: str,
    anchor: str,
    name: str,
    path: str,
    lines: list[str],
    span: tuple[int, int],
    parent: str,
    label: str,
    text_from: int,
) -> Node:
    """A section node. Its skeleton is `label` (the heading; '' for a preamble) and the
    first sentence of the text from line `text_from` (after the heading's markup).
    """
    start, end = span
    body = _span_text(lines, start, end)
    skeleton = f"{label}\n{_first_sentence(lines[text_from - 1 : end][:6])}".strip()
    return Node(
        f"{root}#{anchor}",
        "section",
        name,
        start,
        end,
        parent,
        {9: body, 4: skeleton, 0: _listing("section", name, path, start, end)},
        body,
    )


# -- code ------------------------------------------------------------------------------

_CONTAINERS = frozenset(
    {"class", "struct", "impl", "trait", "interface", "enum", "record", "namespace", "module"}
)


def _code(path: str, text: str, lines: list[str], language: str, max_lines: int) -> FileNodes:
    parsed = parse_code(text.encode("utf-8"), language)
    root = f"uko://code/{path}"
    result = FileNodes(has_errors=parsed.has_errors)
    anchors = _Anchors()
    uris: dict[int, str] = {}
    definitions = list(flatten(parsed.definitions))
    for definition in definitions:
        uri = f"{root}#{anchors(definition.qualname.replace(' ', '_'))}"
        uris[id(definition)] = uri
        parent = uris[id(definition.parent)] if definition.parent else root
        result.nodes.append(_definition_node(definition, uri, parent, path, lines))
        for use in sorted(definition.calls):
            result.edges.append((uri, "calls", _name_target(use, path)))
        for use in sorted(definition.references - definition.calls):
            result.edges.append((uri, "references", _name_target(use, path)))
        for base in definition.bases:
            result.edges.append((uri, "inherits", _name_target(base, path)))
    # Module-level code between top-level definitions: imports, constants, scripts.
    covered = 0
    blocks: list[tuple[int, int]] = []
    for definition in parsed.definitions:
        if definition.start_line - 1 > covered:
            blocks.append((covered + 1, definition.start_line - 1))
        covered = max(covered, definition.end_line)
    if covered < len(lines):
        blocks.append((covered + 1, len(lines)))
    for start, end in blocks:
        for first, last in _parts(start, end, max_lines):
            span = _trimmed(lines, first, last)
            if span is None:
                continue
            uri = f"{root}#{anchors('module')}"
            body = _span_text(lines, *span)
            result.nodes.append(
                Node(
                    uri,
                    "block",
                    uri.rsplit("#", 1)[1],
                    *span,
                    root,
                    {9: body, 0: _listing("block", "module code", path, *span)},
                    body,
                )
            )
    skeleton = "\n".join(
        [lines[i.line - 1].strip() for i in parsed.imports if 0 < i.line <= len(lines)]
        + [_header(d, lines) for d in parsed.definitions]
    )
    end = max(1, len(lines))
    result.nodes.insert(
        0,
        Node(
            root,
            "module",
            path,
            1,
            end,
            None,
            {9: text.rstrip("\n"), 4: skeleton, 0: _listing("module", path, path, 1, end)},
        ),
    )
    result.edges.extend((root, "imports", key) for key in _import_keys(path, language, parsed))
    return result


def _header(definition: Definition, lines: list[str]) -> str:
    header = _span_text(lines, definition.start_line, definition.header_end_line)
    if definition.docstring:
        last = lines[definition.header_end_line - 1]
        header += f"\n{last[: len(last) - len(last.lstrip())]}    {definition.docstring}"
    return header


def _definition_node(
    definition: Definition, uri: str, parent: str, path: str, lines: list[str]
) -> Node:
    body = _span_text(lines, definition.start_line, definition.end_line)
    skeleton = _header(definition, lines)
    if definition.children:
        skeleton += "\n" + "\n".join(_header(child, lines) for child in definition.children)
        # The index sees the container's own text; its members are indexed on their own.
        covered: set[int] = set()
        for child in definition.children:
            covered.update(range(child.start_line, child.end_line + 1))
        own = [
            lines[number - 1]
            for number in range(definition.start_line, definition.end_line + 1)
            if number not in covered
        ]
        search_text = "\n".join(own)
    else:
        search_text = body
    return Node(
        uri,
        definition.kind,
        definition.qualname,
        definition.start_line,
        definition.end_line,
        parent,
        {
            9: body,
            4: skeleton,
            0: _listing(
                definition.kind,
                definition.qualname,
                path,
                definition.start_line,
                definition.end_line,
            ),
        },
        search_text,
    )


def _symbol(name: str) -> EdgeTarget:
    return EdgeTarget(TargetForm.SYMBOL, (name,))


def _name_target(use: NameUse, path: str) -> EdgeTarget:
    """What a name a definition in `path` uses points at (see `NameUse`): a definition of
    the module it is reached through, one near the file for a builtin's name, else one of
    that name.
    """
    if use.module:
        return EdgeTarget(TargetForm.MEMBER, (use.name,), _absolute_module(use.module, path))
    return EdgeTarget(TargetForm.LOCAL, (use.name,)) if use.builtin else _symbol(use.name)


def _absolute_module(module: str, path: str) -> str:
    """A relative Python module (`..pkg.mod`) as the dotted path of its folder from the
    project's root (`src.pkg.mod`), which names the file by its full path; others as they are.
    """
    name = module.lstrip(".")
    level = len(module) - len(name)
    if not level:
        return module
    base = posixpath.dirname(path)
    for _ in range(level - 1):
        base = posixpath.dirname(base)
    return ".".join(part for part in (*base.split("/"), *name.split(".")) if part)


def _import_keys(path: str, language: str, parsed: ParsedCode) -> list[EdgeTarget]:
    directory = posixpath.dirname(path)
    keys: list[EdgeTarget] = []
    for statement in parsed.imports:
        target = statement.target
        if not target and not statement.relative_level:
            continue
        if language == "python":
            # `from X import a` imports the submodule X.a when there is one, else X itself.
            if statement.relative_level:
                base = directory
                for _ in range(statement.relative_level - 1):
                    base = posixpath.dirname(base)
                module = posixpath.join(base, *target.split(".")) if target else base
                inside = f"{module}/" if module else ""
                options = [f"{inside}{name}.py" for name in statement.names]
                if module:
                    options.append(f"{module}.py")
                options.append(f"{inside}__init__.py")
                keys.append(EdgeTarget(TargetForm.FILE, tuple(options)))
            else:
                options = [f"{target}.{name}" for name in statement.names]
                keys.append(EdgeTarget(TargetForm.PYTHON, (*options, target)))
        elif language in ("javascript", "jsx", "typescript", "tsx"):
            if target.startswith("."):
                base = posixpath.normpath(posixpath.join(directory, target))
                options = [base] + [
                    f"{base}{ext}" for ext in (".ts", ".tsx", ".js", ".jsx", ".mjs")
                ]
                options += [f"{base}/index{ext}" for ext in (".ts", ".tsx", ".js")]
                keys.append(EdgeTarget(TargetForm.FILE, tuple(options)))
        elif language in ("c", "cpp"):
            # `#include "x.h"` is looked up next to the file first, then anywhere.
            near = directory if statement.relative_level else ""
            keys.append(EdgeTarget(TargetForm.INCLUDE, (target,), near))
        elif language == "java":
            keys.append(EdgeTarget(TargetForm.JAVA, (target,)))
        elif language == "go":
            keys.append(EdgeTarget(TargetForm.GO, (target,)))
        elif language == "rust":
            keys.append(EdgeTarget(TargetForm.RUST, (target.split("::{")[0],)))
    return list(dict.fromkeys(keys))
