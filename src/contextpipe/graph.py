"""The UKO graph: the store's nodes and declared edges, resolved into a networkx
MultiDiGraph on demand.

Edges are stored as their source file declared them (an import of `json.decoder`, a call
of `loads`), and resolved here, so re-indexing one file never requires re-reading another.
Resolution is best-effort and by name:

- `contains`: parent to child within a file; repository to directories to files.
- `imports`: Python modules by dotted name (the longest path suffix that matches) or
  relative path, JS/TS relative paths, C/C++ includes next to the file then anywhere,
  Java classes by package path, Go packages by directory, Rust `crate::` paths.
- `calls`, `references`, `inherits`, `mentions`: a definition of that name in the same file,
  else in a file the source file imports, else the only definition of that name anywhere;
  otherwise the edge is dropped (ambiguous or outside the index).
- `links_to`: a markdown link to another indexed file.

`graph_stats` counts what `build_graph` would hold without building it (the networkx graph
of a large store takes seconds to build): both go through the same resolution.
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from .store.embedded import EdgeRow, EmbeddedStore, StoredEdge, StoredNode

if TYPE_CHECKING:
    import networkx as nx

_NOT_DEFINITIONS = frozenset({"module", "document", "section", "paragraph", "block", "part"})
_TYPE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "record", "type", "namespace"}
)


@dataclass(frozen=True)
class GraphStats:
    """Node counts by kind and edge counts by type."""

    nodes: dict[str, int]
    edges: dict[str, int]


class _Resolver:
    def __init__(self, nodes: list[StoredNode]) -> None:
        self.file_root: dict[str, str] = {}
        # Definitions by name, then by file (both in node order), and the types among them:
        # a name like `__init__` has thousands of definitions, looked up once per call.
        self.by_name: defaultdict[str, dict[str, list[StoredNode]]] = defaultdict(dict)
        self.all_named: defaultdict[str, list[StoredNode]] = defaultdict(list)
        self.types_named: defaultdict[str, list[StoredNode]] = defaultdict(list)
        self.by_suffix: defaultdict[str, list[str]] = defaultdict(list)
        for node in nodes:
            if node.parent is None:
                self.file_root[node.path] = node.uri
            elif node.kind not in _NOT_DEFINITIONS:
                name = node.name.rsplit(".", 1)[-1]
                self.by_name[name].setdefault(node.path, []).append(node)
                self.all_named[name].append(node)
                if node.kind in _TYPE_KINDS:
                    self.types_named[name].append(node)
        for path in sorted(self.file_root, key=lambda p: (p.count("/"), p)):
            parts = PurePosixPath(path).parts
            for start in range(len(parts)):
                self.by_suffix["/".join(parts[start:])].append(path)
        self.imported: defaultdict[str, set[str]] = defaultdict(set)
        # Answers of `symbol`, once `imported` is complete: a file calls the same names often.
        self._symbols: dict[tuple[str, str], str | None] = {}

    def file(self, key: str, source_path: str) -> str | None:
        """The path of the file an import or link key names, if it is indexed."""
        kind, _, value = key.partition(":")
        if kind == "path":
            return next((p for p in value.split("|") if p in self.file_root), None)
        if kind == "py":
            for dotted in value.split("|"):
                module = dotted.replace(".", "/")
                found = self._suffix(f"{module}.py") or self._suffix(f"{module}/__init__.py")
                if found:
                    return found
            return None
        if kind == "java":
            return self._suffix(value.replace(".", "/") + ".java")
        if kind == "include":
            directory, _, header = value.partition("|")
            local = posixpath.normpath(posixpath.join(directory, header)) if directory else ""
            return local if local in self.file_root else self._suffix(header)
        if kind == "go":
            package = value.rsplit("/", 1)[-1]
            return next(
                (p for p in self.file_root if p.endswith(".go") and f"/{package}/" in f"/{p}"),
                None,
            )
        if kind == "rust":
            parts = [p for p in value.split("::") if p not in ("crate", "self", "super")]
            for end in range(len(parts), 0, -1):
                module = "/".join(parts[:end])
                found = self._suffix(f"{module}.rs") or self._suffix(f"{module}/mod.rs")
                if found:
                    return found
        return None

    def _suffix(self, suffix: str) -> str | None:
        """The indexed file with this path suffix, the shallowest one when several match."""
        found = self.by_suffix.get(suffix)
        return found[0] if found else None

    def symbol(self, name: str, source_path: str) -> str | None:
        key = (name, source_path)
        if key not in self._symbols:
            self._symbols[key] = self._symbol(name, source_path)
        return self._symbols[key]

    def _symbol(self, name: str, source_path: str) -> str | None:
        by_path = self.by_name.get(name)
        if not by_path:
            return None
        same_file = by_path.get(source_path)
        if same_file:
            return same_file[0].uri
        imported = [n for path in self.imported[source_path] for n in by_path.get(path, ())]
        imported_types = [n for n in imported if n.kind in _TYPE_KINDS]
        for pool, types in (
            (imported, imported_types),
            (self.all_named[name], self.types_named.get(name, [])),
        ):
            if len(pool) == 1:
                return pool[0].uri
            # A constructor shares its class's name (Java, C++): the type is meant.
            if len(types) == 1:
                return types[0].uri
        return None


_REPOSITORY = "uko://repo/"


def _containment(resolver: _Resolver) -> Iterator[tuple[str, str, str | None]]:
    """`contains` edges (parent, child, folder) from the repository through the folders to
    every file; `folder` names a directory node the edge reaches first, else None.
    """
    folders: set[str] = set()
    for path, uri in sorted(resolver.file_root.items()):
        parent = _REPOSITORY
        directory = ""
        for part in PurePosixPath(path).parts[:-1]:
            directory = f"{directory}{part}/"
            folder = f"uko://dir/{directory}"
            if folder not in folders:
                folders.add(folder)
                yield parent, folder, directory
            parent = folder
        yield parent, uri, None


def _resolved(
    resolver: _Resolver, declared: Sequence[EdgeRow], is_node: Callable[[str], bool]
) -> Iterator[tuple[str, str, str]]:
    """Declared edges resolved to (source, type, target) between nodes (see the module
    docstring); edges that resolve to nothing or to their own source are left out.
    """
    # Imports first: name resolution prefers definitions in the files a file imports.
    for _, kind, target, path in declared:
        if kind == "imports" and (found := resolver.file(target, path)):
            resolver.imported[path].add(found)
    for source, kind, key, path in declared:
        if not is_node(source):
            continue
        form, _, value = key.partition(":")
        target: str | None
        if form == "uri":
            target = value if is_node(value) else None
        elif form == "sym":
            target = resolver.symbol(value, path)
        else:
            found = resolver.file(key, path)
            target = resolver.file_root.get(found) if found else None
        if target is not None and target != source:
            yield source, kind, target


def build_graph(nodes: list[StoredNode], edges: Iterable[StoredEdge]) -> nx.MultiDiGraph[str]:
    """The resolved graph of these nodes and declared edges (see the module docstring)."""
    import networkx as nx  # 0.15 s to import: only building a graph needs it

    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    graph.add_node(_REPOSITORY, kind="repository", name="repository", path="")
    for node in nodes:
        graph.add_node(
            node.uri,
            kind=node.kind,
            name=node.name,
            path=node.path,
            start_line=node.start_line,
            end_line=node.end_line,
        )
    resolver = _Resolver(nodes)
    for parent, child, folder in _containment(resolver):
        if folder is not None:
            graph.add_node(child, kind="directory", name=folder, path=folder)
        graph.add_edge(parent, child, key="contains", type="contains")
    declared = [(e.source, e.type, e.target, e.path) for e in edges]
    for source, kind, target in _resolved(resolver, declared, graph.__contains__):
        graph.add_edge(source, target, key=kind, type=kind)
    return graph


def load_graph(store: EmbeddedStore) -> nx.MultiDiGraph[str]:
    """The UKO graph of everything in `store`."""
    return build_graph(store.nodes(), store.edges())


def graph_stats(store: EmbeddedStore) -> GraphStats:
    """How many nodes of each kind and edges of each type `load_graph(store)` would hold,
    counted without building the graph, and remembered in the store until it changes. An
    edge is counted once per source, target and type, as the graph keeps it.
    """
    with store.snapshot():
        generation = store.generation()
        kept = store.remembered("graph_stats", generation)
        if kept is not None:
            counts = json.loads(kept)
            return GraphStats(counts["nodes"], counts["edges"])
        stats = _count(store.nodes(), store.edge_rows())
    store.remember("graph_stats", json.dumps(asdict(stats)), generation)
    return stats


def _count(nodes: list[StoredNode], declared: list[EdgeRow]) -> GraphStats:
    resolver = _Resolver(nodes)
    kinds = Counter(node.kind for node in nodes)
    kinds["repository"] += 1
    uris = {node.uri for node in nodes}
    uris.add(_REPOSITORY)
    edges: set[tuple[str, str, str]] = set()
    for parent, child, folder in _containment(resolver):
        if folder is not None:
            kinds["directory"] += 1
            uris.add(child)
        edges.add((parent, "contains", child))
    edges.update(_resolved(resolver, declared, uris.__contains__))
    types = Counter(kind for _, kind, _ in edges)
    return GraphStats(dict(sorted(kinds.items())), dict(sorted(types.items())))


def neighbourhood(graph: nx.MultiDiGraph[str], uri: str, hops: int) -> list[tuple[str, str, str]]:
    """Edges (source, type, target) within `hops` of `uri`, in either direction, sorted."""
    import networkx as nx  # see build_graph

    undirected = graph.to_undirected(as_view=True)
    reached = nx.single_source_shortest_path_length(undirected, uri, cutoff=hops)
    inside = set(reached)
    found = {
        (source, str(key), target)
        for source, target, key in graph.edges(keys=True)
        if source in inside
        and target in inside
        and (reached[source] < hops or reached[target] < hops)
    }
    return sorted(found)
