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
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

import networkx as nx

from .store.embedded import EmbeddedStore, StoredEdge, StoredNode

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
        self.by_name: defaultdict[str, list[StoredNode]] = defaultdict(list)
        self.by_suffix: defaultdict[str, list[str]] = defaultdict(list)
        for node in nodes:
            if node.parent is None:
                self.file_root[node.path] = node.uri
            elif node.kind not in _NOT_DEFINITIONS:
                self.by_name[node.name.rsplit(".", 1)[-1]].append(node)
        for path in sorted(self.file_root, key=lambda p: (p.count("/"), p)):
            parts = PurePosixPath(path).parts
            for start in range(len(parts)):
                self.by_suffix["/".join(parts[start:])].append(path)
        self.imported: defaultdict[str, set[str]] = defaultdict(set)

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
        candidates = self.by_name.get(name, [])
        if not candidates:
            return None
        same_file = [c for c in candidates if c.path == source_path]
        if same_file:
            return same_file[0].uri
        imported = [c for c in candidates if c.path in self.imported[source_path]]
        for pool in (imported, candidates):
            if len(pool) == 1:
                return pool[0].uri
            # A constructor shares its class's name (Java, C++): the type is meant.
            types = [c for c in pool if c.kind in _TYPE_KINDS]
            if len(types) == 1:
                return types[0].uri
        return None


def build_graph(nodes: list[StoredNode], edges: Iterable[StoredEdge]) -> nx.MultiDiGraph[str]:
    """The resolved graph of these nodes and declared edges (see the module docstring)."""
    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    graph.add_node("uko://repo/", kind="repository", name="repository", path="")
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
    for path, uri in sorted(resolver.file_root.items()):
        parent = "uko://repo/"
        directory = ""
        for part in PurePosixPath(path).parts[:-1]:
            directory = f"{directory}{part}/"
            folder = f"uko://dir/{directory}"
            if folder not in graph:
                graph.add_node(folder, kind="directory", name=directory, path=directory)
                graph.add_edge(parent, folder, key="contains", type="contains")
            parent = folder
        graph.add_edge(parent, uri, key="contains", type="contains")
    declared = list(edges)
    # Imports first: name resolution prefers definitions in the files a file imports.
    for edge in declared:
        if edge.type == "imports" and (found := resolver.file(edge.target, edge.path)):
            resolver.imported[edge.path].add(found)
    for edge in declared:
        if edge.source not in graph:
            continue
        kind, _, value = edge.target.partition(":")
        target: str | None
        if kind == "uri":
            target = value if value in graph else None
        elif kind == "sym":
            target = resolver.symbol(value, edge.path)
        else:
            path = resolver.file(edge.target, edge.path)
            target = resolver.file_root.get(path) if path else None
        if target is not None and target != edge.source:
            graph.add_edge(edge.source, target, key=edge.type, type=edge.type)
    return graph


def load_graph(store: EmbeddedStore) -> nx.MultiDiGraph[str]:
    """The UKO graph of everything in `store`."""
    return build_graph(store.nodes(), store.edges())


def graph_stats(graph: nx.MultiDiGraph[str]) -> GraphStats:
    """How many nodes of each kind and edges of each type the graph has."""
    nodes = Counter(str(kind) for _, kind in graph.nodes(data="kind"))
    edges = Counter(str(key) for _, _, key in graph.edges(keys=True))
    return GraphStats(dict(sorted(nodes.items())), dict(sorted(edges.items())))


def neighbourhood(graph: nx.MultiDiGraph[str], uri: str, hops: int) -> list[tuple[str, str, str]]:
    """Edges (source, type, target) within `hops` of `uri`, in either direction, sorted."""
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
