"""Text analysis shared by every store backend and strategy, so that all of them read a
query and a fragment the same way.

- A query's terms are its quoted phrases, then its words, lower-cased, without stopwords,
  deduplicated, in order of appearance, at most `MAX_QUERY_TERMS`.
- A longer query (an issue report, a traceback) is analysed instead of cut: template
  boilerplate (HTML comments, checklists, the usual section headings), interpreter banners,
  URLs and numbers are left out; then identifiers come first (words in backticks, compound
  and dotted names, the parts of paths), then the other words, longest (rarest) first; the
  first `MAX_QUERY_TERMS` of those are searched.
- `code_mentions` finds what a text names in code: file paths, `path:line` locations
  (tracebacks), dotted module names and symbols, for strategies to match against paths
  and the graph; `source_role` says whether a path is source, a test, docs, a changelog,
  CI or build configuration or an example, for code questions that prefer source.
- An identifier also counts as the words it is made of: `BudgetAllocator` and
  `budget_allocator` both say `budget allocator`, so a question in plain words finds code.
- Stemming is the text index's business (the embedded store's FTS5 uses Porter); terms here
  are whole words, so that every backend can stem them its own way.
- A name or path is shown on one line wherever it is printed (`shown_name`: control
  characters escaped), in an index's node listings as in the rendered context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from ..core._memo import memoised

#: The most terms a query is searched for; longer queries keep their first terms.
MAX_QUERY_TERMS = 32

# Words too common to say anything about relevance; they only slow OR queries down.
_STOPWORDS = frozenset(
    (
        "a an and are as at be but by do does for from has have how i if in into is it its of on"
        " or so than that the their then there these this to was we what when where which who why"
        " will with you your"
    ).split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
#: Every ASCII character `\w` does not match, as a space: in ASCII text the words between
#: spaces are then the words `_WORD` finds, in a third of the time.
_NOT_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
_PHRASE = re.compile(r'"([^"]+)"')
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def words_in(text: str) -> list[str]:
    r"""The words (`\w+`) of `text`, in order."""
    if text.isascii():
        return text.translate(_NOT_WORD).split()
    return _WORD.findall(text)


def content_words(text: str) -> frozenset[str]:
    """The distinct words of `text` that say something: lower-cased, stopwords left out."""
    return frozenset(word for word in words_in(text.lower()) if word not in _STOPWORDS)


def claim_overlap(one: frozenset[str], other: frozenset[str]) -> float:
    """How much two texts' content words say the same claim: the share of the smaller set
    found in the other (1 when either is empty), whatever else the longer one says; and 0
    when their numbers differ, since "fires at 900 degrees" and "fires at 1200 degrees" are
    two claims however alike their words.
    """
    if {w for w in one if w.isdigit()} != {w for w in other if w.isdigit()}:
        return 0.0
    smaller = min(len(one), len(other))
    return len(one & other) / smaller if smaller else 1.0


def identifier_words(text: str) -> str:
    """The words of every compound identifier in `text`, space-separated
    (`BudgetAllocator.allocate` -> `budget allocator`); plain words add nothing.
    """
    return " ".join(filter(None, map(_word_parts, words_in(text))))


@memoised(200_000)
def _word_parts(word: str) -> str:
    """`BudgetAllocator` -> `budget allocator`; '' for a word that is not compound. Code
    repeats its identifiers endlessly, so this is cached per word.
    """
    pieces = _IDENTIFIER_PART.findall(word)
    if len(pieces) > 1 or "_" in word:
        return " ".join(piece.lower() for piece in pieces)
    return ""


def name_words(name: str) -> tuple[str, ...]:
    """The words of a title or a path, lower-cased, each once: its own (cut at spaces,
    `/` and `.`, so that a file's stem and a dotted name's parts are words), then those of
    its identifiers (`src/BudgetAllocator.py` -> `src`, `budgetallocator`, `py`, `budget`,
    `allocator`).
    """
    words = f"{name} {identifier_words(name)}".lower().replace("/", " ").replace(".", " ")
    return tuple(dict.fromkeys(words.split()))


def query_terms(query: str) -> list[str]:
    """The search terms of a user query (see the module docstring)."""
    terms = _terms(query)
    if len(terms) <= MAX_QUERY_TERMS:
        return terms
    return _long_query_terms(query)[:MAX_QUERY_TERMS]


def _phrases(query: str) -> tuple[list[str], str]:
    """Quoted phrases of several words, and the query without them. A quoted path or
    dotted name is no phrase: its parts are searched as words and it is matched as a path.
    """
    phrases: list[str] = []

    def taken(match: re.Match[str]) -> str:
        quoted = match.group(1)
        words = [w.lower() for w in _WORD.findall(quoted)]
        if _PATHLIKE.fullmatch(quoted.strip()):
            return f" {quoted} "
        if len(words) > 1:
            phrases.append(" ".join(words))
        return " "

    rest = _PHRASE.sub(taken, query)
    return phrases, rest


def _terms(query: str) -> list[str]:
    """Every term of the query, in order of appearance."""
    terms, rest = _phrases(query)
    for word in _WORD.findall(rest):
        # Split before lower-casing: `BudgetAllocator` also searches `budget` and `allocator`.
        terms.extend([word.lower(), *identifier_words(word).split()])
    informative = [t for t in terms if t not in _STOPWORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(informative or terms))


# -- long queries --------------------------------------------------------------------------

# Lines that say nothing about the problem: issue-template headings and prompts, checklist
# items, interpreter start-up banners and prompts without code.
_BOILERPLATE_LINE = re.compile(
    r"""^\s*(?:
        \#{1,6}\s*(?:describe|expected|actual|steps|to\s+reproduce|reproduc|environment|
            version|additional|context|summary|checklist|description|what|how|current|
            minimal|system|platform|screenshots|bug|feature|related|motivation|proposal)
            [^\n]*
      | [-*]\s*\[[\sxX]?\][^\n]*
      | (?:python|ipython)\s+\d[\w.+-]*\s*[(|][^\n]*
      | type\s+['"]?(?:help|copyright|credits|license)[^\n]*
      | ipython\s+\d[^\n]*--\s*an\s+enhanced\s+interactive\s+python[^\n]*
      | \[(?:gcc|clang|msc)[^\n]*\]\s*on\s+\w+
      | (?:>>>|\.\.\.|in\s*\[\d+\]:|out\s*\[\d+\]:)\s*$
      | (?:os|python|platform|version)\s*(?:version)?\s*:\s*[\w .+-]*\d[\w .+()-]*$
    )\s*$""",
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_URL = re.compile(r"\b(?:https?|ftp)://\S+", re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_NUMBER = re.compile(r"\d+|0x[0-9a-f]+|[0-9a-f]{7,40}|\d[\w.]*")
# A dotted name (`click.core.Context`), a path (`src/click/core.py`, `C:\\x\\y.py`).
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_PATHLIKE = re.compile(r"[\w.~-]*(?:[/\\][\w.-]+)+|[\w-]+\.[A-Za-z]\w{0,4}")


def _long_query_terms(query: str) -> list[str]:
    """A long query's terms, most telling first (see the module docstring)."""
    text = _HTML_COMMENT.sub(" ", query)
    text = _BOILERPLATE_LINE.sub(" ", text)
    text = _URL.sub(" ", text)
    identifiers: list[str] = []
    for found in (*_BACKTICKED.findall(text), *_DOTTED.findall(text)):
        identifiers.extend(_WORD.findall(found))
    for word in _WORD.findall(text):
        if _word_parts(word):
            identifiers.append(word)
    terms: list[str] = []
    for word in identifiers:
        terms.extend([word.lower(), *identifier_words(word).split()])
    phrases, rest = _phrases(text)
    words = [w.lower() for w in _WORD.findall(rest)]
    # Longer words are rarer (Zipf): a stable sort puts them first, ties in text order.
    terms.extend(sorted(dict.fromkeys(words), key=len, reverse=True))
    kept = [
        term
        for term in dict.fromkeys([*phrases, *terms])
        if term not in _STOPWORDS and len(term) > 2 and not _NUMBER.fullmatch(term)
    ]
    return kept or _terms(query)


def matched_terms(terms: Sequence[str], text: str) -> tuple[str, ...]:
    """The terms that occur in `text` or in the words of its identifiers."""
    lowered = text.lower()
    # An identifier's words are pieces of it, so a term without a space is in them only if
    # it is in the text: only phrases need them (splitting a long text costs).
    words: list[str] = []

    def found(term: str) -> bool:
        if term in lowered:
            return True
        if " " not in term:
            return False
        if not words:
            words.append(identifier_words(text))
        return term in f"{lowered} {words[0]}"

    return tuple(term for term in terms if found(term))


# -- what a text names in code -------------------------------------------------------------


@dataclass(frozen=True)
class CodeLocation:
    """A `path:line` a text names (a traceback frame), with the function when it says."""

    path: str
    line: int
    function: str = ""


@dataclass(frozen=True)
class CodeMentions:
    """What a text names in code, each kind in order of appearance, each once: file paths
    (as written, '/'-separated), `path:line` locations, dotted names (modules, or
    `Class.method`) and symbols (identifiers in backticks, compound identifiers, calls, and
    whatever it asks the callers of). `callers_of` are the names whose callers or uses it
    asks for: `who calls X`, `callers of X`, `where is X used`.
    """

    paths: tuple[str, ...] = ()
    locations: tuple[CodeLocation, ...] = ()
    dotted: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    callers_of: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths or self.locations or self.dotted or self.symbols)

    @property
    def names(self) -> tuple[str, ...]:
        """What a graph lookup takes of them: the paths, dotted names and symbols."""
        return (*self.paths, *self.dotted, *self.symbols)


_TRACEBACK_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in (\w+))?')
_PATH_LINE = re.compile(r"((?:[\w.~-]+[/\\])*[\w.-]+\.[A-Za-z]\w{0,4}):(\d+)")
_FILE_PATH = re.compile(
    r"(?<![\w./\\-])((?:[\w.~-]+[/\\])*[\w-]+(?:\.[\w-]+)*\.([A-Za-z]\w{0,4}))\b"
)
_SLASHED_PATH = re.compile(r"(?<![\w./\\:-])((?:[\w.-]+[/\\])+[\w.-]+)")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
#: File name endings that are code or configuration a question may name (not `e.g`).
_FILE_ENDINGS = frozenset(
    "py pyi js mjs cjs jsx ts tsx go rs java c h cc cpp cxx hh hpp kt cs rb php swift scala"
    " sh bash sql html css json yaml yml toml xml md rst txt cfg ini".split()
)


def is_file_name(name: str) -> bool:
    """`core.py`, `setup.cfg`: a name ending like a file of code, configuration or docs,
    rather than a dotted module or `Class.method`.
    """
    stem, dot, ending = name.rpartition(".")
    return bool(stem and dot) and ending in _FILE_ENDINGS


def code_mentions(text: str) -> CodeMentions:
    """Paths, `path:line` locations, dotted names and symbols `text` names (see
    `CodeMentions`); URLs are left out.
    """
    text = _URL.sub(" ", text)
    locations: dict[CodeLocation, None] = {}
    for path, line, function in _TRACEBACK_FRAME.findall(text):
        locations[CodeLocation(_posix(path), int(line), function)] = None
    for path, line in _PATH_LINE.findall(text):
        if path.rsplit(".", 1)[-1].lower() in _FILE_ENDINGS:
            locations.setdefault(CodeLocation(_posix(path), int(line)), None)
    paths: dict[str, None] = {}
    for path, ending in _FILE_PATH.findall(text):
        if ending.lower() in _FILE_ENDINGS:
            paths[_posix(path)] = None
    for path in _SLASHED_PATH.findall(text):
        paths.setdefault(_posix(path).rstrip("/."), None)
    for location in locations:
        paths.setdefault(location.path, None)
    dotted: dict[str, None] = {}
    for name in _DOTTED.findall(text):
        if (
            not is_file_name(name)
            and min(map(len, name.split("."))) > 1
            and not any(name in path for path in paths)
        ):
            dotted[name] = None
    symbols: dict[str, None] = {}
    for quoted in _BACKTICKED.findall(text):
        for name in _IDENTIFIER.findall(quoted):
            if name.lower() not in _STOPWORDS:
                symbols[name] = None
    for name in (*_CALL.findall(text), *_WORD.findall(text)):
        if _is_symbol_like(name):
            symbols[name] = None
    for location in locations:
        if location.function and location.function != "<module>":
            symbols.setdefault(location.function, None)
    for name in dotted:
        symbols.setdefault(name.rsplit(".", 1)[-1], None)
    callers_of = {
        name: None
        for match in _CALLERS_OF.finditer(text)
        if (name := next(group for group in match.groups() if group)).lower() not in _STOPWORDS
    }
    for name in callers_of:
        if "." not in name:  # a dotted one is among the dotted names already
            symbols.setdefault(name, None)
    return CodeMentions(
        tuple(paths), tuple(locations), tuple(dotted), tuple(symbols), tuple(callers_of)
    )


# A name as a question writes it: `x.y`, x.y(), x.
_ASKED_NAME = r"`?([A-Za-z_][\w.]*\w|[A-Za-z_])(?:\(\))?`?"
_CALLERS_OF = re.compile(
    rf"\b(?:who|what|which(?:\s+\w+)?)\s+(?:calls?|uses?|invokes?)\s+(?:the\s+)?{_ASKED_NAME}"
    rf"|\b(?:callers|usages|uses|call\s+sites|invocations)\s+(?:of|for)\s+(?:the\s+)?{_ASKED_NAME}"
    rf"|\bwhere\s+(?:is|are)\s+(?:the\s+)?{_ASKED_NAME}\s+(?:called|used|invoked)",
    re.IGNORECASE,
)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _is_symbol_like(word: str) -> bool:
    """A compound identifier (`snake_case`, `CamelCase`, `_private`), not a plain word."""
    if word[0].isdigit() or word.isupper():
        return False
    return "_" in word.strip("_") or word.startswith("_") or bool(_CAMEL.search(word))


_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]")


def _posix(path: str) -> str:
    return path.replace("\\", "/")


#: What a file is for, as code questions weigh it.
SourceRole = Literal["source", "test", "docs", "changelog", "ci", "config", "example"]

_TEST_PARTS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
_DOCS_PARTS = frozenset({"doc", "docs", "documentation"})
_DOCS_ENDINGS = frozenset({".md", ".rst", ".txt", ".adoc", ".markdown"})
_CHANGELOG_STEMS = ("change", "changelog", "changes", "history", "news", "releases")
_CI_PARTS = frozenset({".github", ".gitlab", ".circleci", ".ci"})
_EXAMPLE_PARTS = frozenset({"example", "examples", "demo", "demos", "sample", "samples"})
# Build, packaging and tool configuration: data, not code to change for a bug.
_CONFIG_ENDINGS = frozenset({".toml", ".lock", ".yaml", ".yml", ".ini", ".cfg", ".json"})
_CONFIG_NAMES = frozenset({"setup.py", "noxfile.py", "tox.ini", "makefile", "dockerfile"})


@memoised(100_000)
def source_role(path: str) -> SourceRole:
    """Whether a stored path is source code, a test, documentation (a file without an
    ending too: README, LICENSE), a changelog, CI configuration (`.github`,
    `.gitlab-ci.yml`...), build or tool configuration (`pyproject.toml`, lock files,
    dotfiles, `setup.py`) or an example, from its folders and name.
    """
    pure = PurePosixPath(path.lower())
    folders = set(pure.parts[:-1])
    name = pure.name
    if folders & _CI_PARTS or name in {".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml"}:
        return "ci"
    if name.startswith(_CHANGELOG_STEMS) and (not pure.suffix or pure.suffix in _DOCS_ENDINGS):
        return "changelog"
    if (
        folders & _TEST_PARTS
        or name.startswith("test_")
        or pure.stem.endswith(("_test", "_tests", ".test", ".spec"))
        or name == "conftest.py"
    ):
        return "test"
    if name in _CONFIG_NAMES:
        return "config"
    if folders & _DOCS_PARTS or pure.suffix in _DOCS_ENDINGS or not pure.suffix:
        return "docs"
    if folders & _EXAMPLE_PARTS:
        return "example"
    if pure.suffix in _CONFIG_ENDINGS or name.startswith("."):
        return "config"
    return "source"


# Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
} | {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\"}


def shown_name(name: str) -> str:
    """A file name or path as output shows it: on one line, control characters escaped."""
    return name.translate(_ESCAPES)
