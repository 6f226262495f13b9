"""Parse source code with tree-sitter: definitions (nested), imports, calls, base classes
and type references, for Python, JavaScript, TypeScript, Go, Rust, Java, C and C++.

Grammars come from their PyPI wheels (no compilation, no download) and load per language on
first use. Only definition levels are walked in Python; tree-sitter never raises on bad
syntax, it marks error nodes.

Each name a definition uses (a call, a base class, a type reference) is a `NameUse`. In
Python it is read with the file's imports: a name reached through an import (`math.floor`,
`np.dot`, `Path` from `from pathlib import Path`) carries the dotted module it comes from,
and a builtin's name reached through none (`len(x)`, `ValueError`, and a builtin type's
method called on what no import or `self` names: `totals.values()`) says so, so that the
graph never binds either to an unrelated definition of the project: only to one the file
defines or imports (without types, whose `values` it is cannot be told).
"""

from __future__ import annotations

import builtins
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

# Each language's grammar: its wheel's module and the function returning the grammar. A
# grammar (and tree-sitter itself) is imported when the first file in its language is parsed.
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "jsx": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}
PARSED_LANGUAGES = frozenset(_GRAMMARS)

_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "method_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "method_signature": "method",
    "abstract_method_signature": "method",
}
_DEFINITIONS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": _JS_DEFINITIONS,
    "jsx": _JS_DEFINITIONS,
    "typescript": _JS_DEFINITIONS,
    "tsx": _JS_DEFINITIONS,
    "go": {"function_declaration": "function", "method_declaration": "method", "type_spec": "type"},
    "rust": {
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
    },
    "java": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "method_declaration": "method",
        "constructor_declaration": "method",
    },
    "c": {
        "function_definition": "function",
        "struct_specifier": "struct",
        "enum_specifier": "enum",
    },
    "cpp": {
        "function_definition": "function",
        "struct_specifier": "struct",
        "class_specifier": "class",
        "enum_specifier": "enum",
        "namespace_definition": "namespace",
    },
}
_IMPORTS: dict[str, frozenset[str]] = {
    "python": frozenset({"import_statement", "import_from_statement"}),
    "javascript": frozenset({"import_statement"}),
    "jsx": frozenset({"import_statement"}),
    "typescript": frozenset({"import_statement"}),
    "tsx": frozenset({"import_statement"}),
    "go": frozenset({"import_spec"}),
    "rust": frozenset({"use_declaration"}),
    "java": frozenset({"import_declaration"}),
    "c": frozenset({"preproc_include"}),
    "cpp": frozenset({"preproc_include"}),
}
_CALLS = frozenset(
    {"call", "call_expression", "method_invocation", "object_creation_expression", "new_expression"}
)
_TYPE_NAMES = frozenset({"type_identifier"})
_CLASS_LIKE = frozenset({"class", "struct", "impl", "trait", "interface", "enum", "record"})
_NAME_NODES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "property_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
    }
)
_BODY_FIELDS = ("body", "block")
# Node types that are definitions only sometimes (`const f = () => ...`, Go type specs).
_MAYBE_DEFINITIONS = frozenset({"variable_declarator", "type_spec"})
_COMMENT_WRAPPERS = frozenset({"export_statement", "type_declaration", "decorated_definition"})
#: Python's builtin names, and the methods of its builtin types (dunders left out: in
#: `super().__init__()` the project's own is meant).
_PY_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("__"))
_PY_BUILTIN_METHODS = frozenset(
    name
    for kind in (str, bytes, bytearray, int, float, complex, list, tuple, dict, set, frozenset)
    for name in dir(kind)
    if not name.startswith("__")
)
_STRING_QUOTES = re.compile(r"""^[rRbBuUfF]*("{3}|'{3}|"|')|("{3}|'{3}|"|')$""")
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function"})


@dataclass
class Definition:
    """A definition found in a file; `qualname` joins the names of its enclosing ones."""

    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int
    header_end_line: int
    docstring: str
    parent: Definition | None
    calls: set[NameUse] = field(default_factory=set["NameUse"])
    references: set[NameUse] = field(default_factory=set["NameUse"])
    bases: list[NameUse] = field(default_factory=list["NameUse"])
    children: list[Definition] = field(default_factory=list["Definition"])
    start_byte: int = 0
    end_byte: int = 0


class NameUse(NamedTuple):
    """A name a definition uses, as the graph looks it up: `name` is what is defined
    (the last part of `a.b.f(...)`); `module` the dotted module it is reached through by
    the file's imports (`math` for `math.floor`, `..pkg.mod` relative, as written), '' for
    none; `builtin` whether it is the name of a Python builtin (`len`, `ValueError`) or of a
    builtin type's method (`values` in `totals.values()`) that no import or `self` reaches.
    """

    name: str
    module: str = ""
    builtin: bool = False


@dataclass(frozen=True)
class ImportStatement:
    """One import: the raw module or path it names, as written, and its line. `names` are
    what a Python `from X import a, b` takes, which may be submodules of X.
    """

    target: str
    line: int
    relative_level: int = 0
    names: tuple[str, ...] = ()


@dataclass
class ParsedCode:
    """What one source file defines, imports and calls."""

    definitions: list[Definition]
    imports: list[ImportStatement]
    has_errors: bool


@cache
def _parser(language: str) -> Parser:
    from tree_sitter import Language, Parser  # on first use, see _GRAMMARS

    module, function = _GRAMMARS[language]
    grammar: object = getattr(import_module(module), function)()
    return Parser(Language(grammar))


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _declarator_name(node: Node | None) -> str:
    """C/C++ declarators nest (pointer, function, reference): follow them to the name."""
    while node is not None and node.type not in _NAME_NODES:
        node = node.child_by_field_name("declarator") or (
            node.named_children[0] if node.named_children else None
        )
    return _text(node)


def _name(node: Node, language: str) -> str:
    kind = node.type
    if language in ("c", "cpp") and kind == "function_definition":
        # `double Circle::area()` defined outside its class: qualify it like a member.
        return _declarator_name(node.child_by_field_name("declarator")).replace("::", ".")
    if kind == "impl_item":
        trait, target = node.child_by_field_name("trait"), node.child_by_field_name("type")
        return f"{_text(trait)} for {_text(target)}" if trait else _text(target)
    if kind == "method_declaration" and language == "go":
        receiver = node.child_by_field_name("receiver")
        owner = next((n for n in _walk(receiver) if n.type == "type_identifier"), None)
        return f"{_text(owner)}.{_text(node.child_by_field_name('name'))}"
    return _text(node.child_by_field_name("name")) or "<anonymous>"


def _walk(node: Node | None) -> Iterator[Node]:
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _call_name(node: Node) -> str:
    """The called name: the last segment of `a.b.c(...)`, `a::b(...)`, `new X()`."""
    if node.type == "method_invocation":
        return _text(node.child_by_field_name("name"))
    if node.type == "object_creation_expression":
        return _text(node.child_by_field_name("type"))
    callee = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    if callee is None:
        return ""
    for member in ("attribute", "property", "field", "name"):
        if (part := callee.child_by_field_name(member)) is not None:
            return _text(part)
    return _text(callee).rsplit("::", 1)[-1]


def _python_aliases(statements: Iterable[Node]) -> dict[str, str]:
    """What each name a Python file's imports bind means, as a dotted name: `np` is
    `numpy`, `a` is `a` for `import a.b`, `k` is `m.n` for `from m import n as k`, `x` is
    `..x` for `from .. import x` (relative, as written).
    """
    aliases: dict[str, str] = {}
    for statement in statements:
        module = _text(statement.child_by_field_name("module_name"))
        for child in statement.children_by_field_name("name"):
            aliased = child.type == "aliased_import"
            name = _text(child.child_by_field_name("name") if aliased else child)
            alias = _text(child.child_by_field_name("alias")) if aliased else name
            if statement.type == "import_from_statement":
                aliases[alias] = f"{module}{'' if module.endswith('.') else '.'}{name}"
            elif aliased:
                aliases[alias] = name
            else:
                first = name.split(".", 1)[0]  # `import a.b` binds `a`
                aliases[first] = first
    return aliases


def _dotted(node: Node | None) -> str:
    """`a.b.c` for a chain of names, '' for any other expression (a call, a literal)."""
    if node is None:
        return ""
    if node.type == "identifier":
        return _text(node)
    if node.type == "attribute":
        owner = _dotted(node.child_by_field_name("object"))
        return f"{owner}.{_text(node.child_by_field_name('attribute'))}" if owner else ""
    return ""


def _python_use(node: Node, aliases: Mapping[str, str]) -> NameUse | None:
    """The name an identifier or an attribute (`f`, `a.b.f`, `x().f`) uses, read with the
    file's imports (see `NameUse`); None for any other expression.
    """
    if node.type == "identifier":
        name = _text(node)
        if name in aliases:
            dotted = aliases[name]
            stripped = dotted.lstrip(".")
            module, _, last = stripped.rpartition(".")
            # `from m import f`: f of m; `from . import f`: f of the package; `import m`: m
            return NameUse(last, dotted[: len(dotted) - len(stripped)] + module or last)
        return NameUse(name, builtin=name in _PY_BUILTINS)
    if node.type != "attribute":
        return None
    name = _text(node.child_by_field_name("attribute"))
    receiver = _dotted(node.child_by_field_name("object"))
    first, _, rest = receiver.partition(".")
    if first in aliases:
        return NameUse(name, f"{aliases[first]}.{rest}" if rest else aliases[first])
    if receiver in ("self", "cls"):
        return NameUse(name)
    # `d.values()` on what no import names: a builtin type's as likely as the project's,
    # which then is one the file can see.
    return NameUse(name, builtin=name in _PY_BUILTIN_METHODS)


def _whole_name(node: Node) -> Node:
    """`ast.NodeVisitor` for its `NodeVisitor`: the name is the module's."""
    parent = node.parent
    if parent is not None and parent.type == "attribute":
        return parent if parent.child_by_field_name("attribute") == node else node
    return node


def _header_end(node: Node) -> int:
    """Last line of a definition's header: the line before its body starts, or its own
    first line when the body starts on it.
    """
    for name in _BODY_FIELDS:
        body = node.child_by_field_name(name)
        if body is not None:
            return max(node.start_point.row + 1, body.start_point.row)
    return node.start_point.row + 1


def _docstring(node: Node, language: str) -> str:
    """First line of a Python docstring, or of the comment just above the definition."""
    if language == "python":
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children:
            string = first.named_children[0]
            if string.type == "string":
                return _summary_line(_STRING_QUOTES.sub("", _text(string)))
        return ""
    # The comment sits above what wraps the definition (`export`, Go's `type (...)`), and
    # Rust writes one `///` line comment per line: take the first of the adjacent run.
    anchor = node
    if node.parent is not None and node.parent.type in _COMMENT_WRAPPERS:
        anchor = node.parent
    first: Node | None = None
    previous = anchor.prev_named_sibling
    row = anchor.start_point.row
    while previous is not None and "comment" in previous.type and previous.end_point.row + 1 >= row:
        first, row = previous, previous.start_point.row
        previous = previous.prev_named_sibling
    return _summary_line(_text(first).strip("/*! \n\t")) if first is not None else ""


def _summary_line(text: str) -> str:
    """A docstring's or doc comment's summary: its first non-blank line (PEP 257), unlike a
    section's first sentence (`nodes._first_sentence`), which may run over several lines.
    """
    line = next((part.strip(" *") for part in text.splitlines() if part.strip(" *")), "")
    return line[:200]


def _bases(node: Node, language: str, aliases: Mapping[str, str]) -> list[NameUse]:
    if language == "python":
        arguments = node.child_by_field_name("superclasses")
        found = (_python_use(c, aliases) for c in (arguments.named_children if arguments else []))
        return [use for use in found if use is not None]
    names: list[str] = []
    for child in node.named_children:
        if child.type in (
            "class_heritage",
            "superclass",
            "super_interfaces",
            "extends_interfaces",
            "base_class_clause",
            "extends_clause",
            "implements_clause",
        ):
            names.extend(
                _text(n)
                for n in _walk(child)
                if n.type in ("identifier", "type_identifier")
                and n.parent is not None
                and n.parent.type not in ("type_arguments",)
            )
    return [NameUse(name) for name in names]


def _import(node: Node, language: str) -> ImportStatement:
    line = node.start_point.row + 1
    if language == "python":
        if node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            raw = _text(module)
            level = len(raw) - len(raw.lstrip("."))
            names = tuple(
                _text(child.child_by_field_name("name") or child).split(" as ")[0]
                for child in node.children_by_field_name("name")
            )
            return ImportStatement(raw.lstrip("."), line, level, names)
        name = node.child_by_field_name("name")
        return ImportStatement(_text(name).split(" as ")[0], line)
    if language in ("c", "cpp"):
        path = node.child_by_field_name("path")
        return ImportStatement(_text(path).strip('"<>'), line, 1 if _text(path)[:1] == '"' else 0)
    if language == "go":
        return ImportStatement(_text(node.child_by_field_name("path")).strip('"'), line)
    if language in ("javascript", "jsx", "typescript", "tsx"):
        source = node.child_by_field_name("source")
        return ImportStatement(_text(source).strip("'\"`"), line)
    if language == "java":
        path = next((n for n in node.named_children if "identifier" in n.type), None)
        return ImportStatement(_text(path), line)
    argument = node.child_by_field_name("argument")  # rust: use a::b::{c, d};
    return ImportStatement(_text(argument), line)


def _definition_kind(node: Node, language: str, kinds: dict[str, str]) -> str | None:
    kind = kinds.get(node.type)
    if kind and node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
        return None  # `struct point p;` uses a struct, it does not define one
    if node.type == "type_spec" and language == "go":
        shape = node.child_by_field_name("type")
        return {"struct_type": "struct", "interface_type": "interface"}.get(
            shape.type if shape is not None else "", "type"
        )
    if (
        node.type == "variable_declarator"
        and language in ("javascript", "jsx", "typescript", "tsx")
        and (value := node.child_by_field_name("value")) is not None
        and value.type in _JS_FUNCTION_VALUES
    ):
        return "function"  # const handler = (event) => { ... }
    return kind


@cache
def _query(language: str) -> Query:
    """One query capturing, in C, every node the walk below cares about: definitions
    (@definition), imports (@import), calls (@call) and type-like names (@name).
    """
    from tree_sitter import Query  # on first use, see _GRAMMARS

    grammar = _parser(language).language
    if grammar is None:
        raise ValueError(f"no grammar loaded for {language}")

    def known(kinds: Iterable[str]) -> list[str]:
        return sorted(k for k in set(kinds) if grammar.id_for_node_kind(k, True) is not None)

    patterns = [
        (known([*_DEFINITIONS[language], *_MAYBE_DEFINITIONS]), "definition"),
        (known(_IMPORTS[language]), "import"),
        (known(_CALLS), "call"),
        (known(["identifier"] if language == "python" else _TYPE_NAMES), "name"),
    ]
    source = "\n".join(
        "[" + " ".join(f"({kind})" for kind in kinds) + f"] @{capture}"
        for kinds, capture in patterns
        if kinds
    )
    return Query(grammar, source)


def parse_code(source: bytes, language: str) -> ParsedCode:
    """Definitions (nested, in file order), imports and per-definition calls of a file."""
    from tree_sitter import QueryCursor  # on first use, see _GRAMMARS

    tree = _parser(language).parse(source)
    kinds = _DEFINITIONS[language]
    captures = QueryCursor(_query(language)).captures(tree.root_node)
    statements = sorted(captures.get("import", []), key=lambda n: n.start_byte)
    python = language == "python"
    aliases = _python_aliases(statements) if python else {}
    top: list[Definition] = []
    # Definitions nest properly: in start order, the open ones form a stack.
    spans: list[Definition] = []  # in start order
    open_spans: list[tuple[int, Definition]] = []  # end byte, definition
    for node in sorted(captures.get("definition", []), key=lambda n: (n.start_byte, -n.end_byte)):
        kind = _definition_kind(node, language, kinds)
        if kind is None:
            continue
        while open_spans and open_spans[-1][0] <= node.start_byte:
            open_spans.pop()
        owner = open_spans[-1][1] if open_spans else None
        name = _name(node, language)
        if kind == "function" and (
            (owner is not None and owner.kind in _CLASS_LIKE)
            or (language == "cpp" and "." in name)  # `Circle::area` outside its class
        ):
            kind = "method"
        # Python decorators belong to the definition they decorate.
        parent = node.parent
        outer = parent if parent is not None and parent.type == "decorated_definition" else node
        definition = Definition(
            kind=kind,
            name=name,
            qualname=f"{owner.qualname}.{name}" if owner else name,
            start_line=outer.start_point.row + 1,
            end_line=node.end_point.row + 1,
            header_end_line=_header_end(node),
            docstring=_docstring(node, language),
            parent=owner,
            bases=_bases(node, language, aliases) if kind in _CLASS_LIKE else [],
            start_byte=node.start_byte,
            end_byte=node.end_byte,
        )
        (owner.children if owner else top).append(definition)
        open_spans.append((node.end_byte, definition))
        spans.append(definition)
    starts = [definition.start_byte for definition in spans]

    def owner_of(node: Node) -> Definition | None:
        """The innermost definition around `node`."""
        index = bisect_right(starts, node.start_byte) - 1
        definition = spans[index] if index >= 0 else None
        while definition is not None and node.start_byte >= definition.end_byte:
            definition = definition.parent
        return definition

    for node in captures.get("call", []):
        if (owner := owner_of(node)) is None:
            continue
        if python:
            callee = node.child_by_field_name("function")
            use = _python_use(callee, aliases) if callee is not None else None
        else:
            use = NameUse(called) if (called := _call_name(node)) else None
        if use is not None:
            owner.calls.add(use)
    for node in captures.get("name", []):
        if (python and not _text(node)[:1].isupper()) or (owner := owner_of(node)) is None:
            continue
        use = _python_use(_whole_name(node), aliases) if python else NameUse(_text(node))
        if use is not None:
            owner.references.add(use)
    imports = [_import(node, language) for node in statements]
    for definition in flatten(top):
        definition.references = {u for u in definition.references if u.name != definition.name}
    return ParsedCode(top, imports, tree.root_node.has_error)


def flatten(definitions: list[Definition]) -> Iterator[Definition]:
    """Every definition, parents before their children, in file order."""
    for definition in definitions:
        yield definition
        yield from flatten(definition.children)
