"""The UKO graph: a store's nodes and declared edges, resolved into a graph that any store
backend can offer as its `GraphView`.

Edges are stored as their source file declared them (an import of `json.decoder`, a call
of `loads`), and resolved here, so re-indexing one file never requires re-reading another.
A store reads them back as `DeclaredEdges`, one group per file, type and target, and each
group is resolved once. Resolution is best-effort and by name:

- `contains`: each node's `parent` to the node, within a file (not declared: a store keeps
  it with the node); the repository to directories to files.
- `imports`: Python modules by dotted name (the longest path suffix that matches) or
  relative path, JS/TS relative paths, C/C++ includes next to the file then anywhere,
  Java classes by package path, Go packages by directory, Rust `crate::` paths.
- `calls`, `references`, `inherits`, `mentions`: a definition of that name in the same file,
  else in a file the source file imports, else the only definition of that name anywhere;
  otherwise the edge is dropped (ambiguous or outside the index). A builtin's name (a
  `local` target: `len`, `d.values()`) is looked for in the same file and the files it
  imports only. A name reached through a Python module (a `member` target: `math.floor`,
  `pkg.mod.Class.method`) is a definition in the longest leading part of that module that
  is an indexed file (the one whose qualified name ends as the call does, first), else the
  only definition of that name anywhere; when no part is indexed (another library), the
  edge is dropped.
- `links_to`: a markdown link to another indexed file.

An edge is kept once per source, target and type, and only between nodes. What a group's
target resolves to depends only on every file's root node and the definitions of the name
it uses, so that a store can keep the resolved targets (`ResolvedEdges`) and resolve again
only the groups a change of the index touches (`resolve_targets`). `ResolvedGraph.stats`
counts what the graph holds without building it (the networkx graph of a large store
takes seconds to build); everything else builds it once, on first use.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple, cast

from ..contract.capabilities import Direction
from ..contract.records import (
    DeclaredEdges,
    EdgeTarget,
    GraphEdge,
    GraphNode,
    GraphStats,
    NodeRecord,
    TargetForm,
)
from ..text.words import is_file_name
from ._bulk import collector_paused

if TYPE_CHECKING:
    import networkx as nx

_NOT_DEFINITIONS = frozenset({"module", "document", "section", "paragraph", "block", "part"})
_TYPE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "record", "type", "namespace"}
)


def defined_name(node: NodeRecord) -> str | None:
    """The name a symbol target uses for this node, if it is a definition (the last part
    of its qualified name: a call of `decode` may mean `JSONDecoder.decode`).
    """
    if node.parent is None or node.kind in _NOT_DEFINITIONS:
        return None
    return node.name.rsplit(".", 1)[-1]


class _Resolver:
    def __init__(self, nodes: list[NodeRecord]) -> None:
        self.file_root: dict[str, str] = {}
        # Definitions by name, then by file (both in node order), and the types among them:
        # a name like `__init__` has thousands of definitions, looked up once per call.
        self.by_name: defaultdict[str, dict[str, list[NodeRecord]]] = defaultdict(dict)
        self.all_named: defaultdict[str, list[NodeRecord]] = defaultdict(list)
        self.types_named: defaultdict[str, list[NodeRecord]] = defaultdict(list)
        self.by_suffix: defaultdict[str, list[str]] = defaultdict(list)
        for node in nodes:
            if node.parent is None:
                self.file_root[node.path] = node.uri
            elif (name := defined_name(node)) is not None:
                self.by_name[name].setdefault(node.path, []).append(node)
                self.all_named[name].append(node)
                if node.kind in _TYPE_KINDS:
                    self.types_named[name].append(node)
        for path in sorted(self.file_root, key=lambda p: (p.count("/"), p)):
            parts = path.split("/")  # stored paths are normalised POSIX paths
            for start in range(len(parts)):
                self.by_suffix["/".join(parts[start:])].append(path)
        self.imported: defaultdict[str, set[str]] = defaultdict(set)

    def file(self, target: EdgeTarget) -> str | None:
        """The path of the indexed file an import or link target names, if there is one."""
        form, names = target.form, target.names
        if form is TargetForm.FILE:
            return next((p for p in names if p in self.file_root), None)
        if form is TargetForm.PYTHON:
            return next(filter(None, map(self._python_module, names)), None)
        if form is TargetForm.JAVA:
            return self._suffix(names[0].replace(".", "/") + ".java")
        if form is TargetForm.INCLUDE:
            header = names[0]
            local = posixpath.normpath(posixpath.join(target.near, header)) if target.near else ""
            return local if local in self.file_root else self._suffix(header)
        if form is TargetForm.GO:
            package = names[0].rsplit("/", 1)[-1]
            return next(
                (p for p in self.file_root if p.endswith(".go") and f"/{package}/" in f"/{p}"),
                None,
            )
        if form is TargetForm.RUST:
            parts = [p for p in names[0].split("::") if p not in ("crate", "self", "super")]
            for end in range(len(parts), 0, -1):
                module = "/".join(parts[:end])
                found = self._suffix(f"{module}.rs") or self._suffix(f"{module}/mod.rs")
                if found:
                    return found
        return None

    def _python_module(self, dotted: str) -> str | None:
        module = dotted.replace(".", "/")
        return self._suffix(f"{module}.py") or self._suffix(f"{module}/__init__.py")

    def _suffix(self, suffix: str) -> str | None:
        """The indexed file with this path suffix, the shallowest one when several match."""
        found = self.by_suffix.get(suffix)
        return found[0] if found else None

    def symbol(self, name: str, source_path: str, anywhere: bool = True) -> str | None:
        """The definition a name used in this file means, once `imported` is complete;
        not `anywhere`: only one in the file or in a file it imports.
        """
        by_path = self.by_name.get(name)
        if not by_path:
            return None
        same_file = by_path.get(source_path)
        if same_file:
            return same_file[0].uri
        # Walk the smaller side: a file imports a few dozen files, most names are defined
        # in one or two, a name like `__init__` in thousands.
        imports = self.imported[source_path]
        if len(imports) < len(by_path):
            imported = [n for path in imports for n in by_path.get(path, ())]
        else:
            imported = [n for path, named in by_path.items() if path in imports for n in named]
        found = _only(imported, [n for n in imported if n.kind in _TYPE_KINDS])
        return found if found or not anywhere else self._anywhere(name)

    def member(self, name: str, module: str) -> str | None:
        """The definition `name` of the dotted Python `module` (see the module docstring)."""
        parts = module.split(".")
        for end in range(len(parts), 0, -1):
            if found := self._python_module(".".join(parts[:end])):
                break
        else:
            return None  # no part of it is indexed: another library's
        defined = self.by_name.get(name, {}).get(found)
        if not defined:
            return self._anywhere(name)  # re-exported by that module, perhaps
        qualified = ".".join((*parts[end:], name))
        return next((n.uri for n in defined if n.name == qualified), defined[0].uri)

    def _anywhere(self, name: str) -> str | None:
        """The only definition of `name` in the index, or its only type."""
        return _only(self.all_named[name], self.types_named.get(name, []))


def _only(pool: Sequence[NodeRecord], types: Sequence[NodeRecord]) -> str | None:
    """The one definition of a pool, or its one type: a constructor shares its class's name
    (Java, C++), and the type is meant.
    """
    if len(pool) == 1:
        return pool[0].uri
    return types[0].uri if len(types) == 1 else None


_REPOSITORY = "uko://repo/"


def _containment(file_root: Mapping[str, str]) -> Iterator[tuple[str, str, str | None]]:
    """`contains` edges (parent, child, folder) from the repository through the folders to
    every file; `folder` names a directory node the edge reaches first, else None.
    """
    folders: set[str] = set()
    for path, uri in sorted(file_root.items()):
        parent = _REPOSITORY
        directory = ""
        for part in path.split("/")[:-1]:
            directory = f"{directory}{part}/"
            folder = f"uko://dir/{directory}"
            if folder not in folders:
                folders.add(folder)
                yield parent, folder, directory
            parent = folder
        yield parent, uri, None


def _parents(
    nodes: Iterable[NodeRecord], is_node: Callable[[str], bool]
) -> Iterator[tuple[str, str]]:
    """`contains` edges (parent, child) within files: every node under a parent node."""
    for node in nodes:
        if node.parent is not None and node.parent != node.uri and is_node(node.parent):
            yield node.parent, node.uri


class ResolvedEdges(NamedTuple):
    """A file's declared edges of one type, with the node URI their target resolved to."""

    sources: tuple[str, ...]
    kind: str
    target: str
    path: str


def resolve_targets(
    nodes: Iterable[NodeRecord], declared: Sequence[DeclaredEdges]
) -> list[str | None]:
    """The node URI each declared group's target resolves to, or None (see the module
    docstring; a `node` target is taken as it is, and kept only if it is a node). `nodes`
    need hold only every file's root node and every definition of the names that symbol
    targets use, and `declared` every `imports` group of the files whose symbols it holds:
    that is all a resolution reads.
    """
    resolver = _Resolver(list(nodes))
    # Imports first: name resolution prefers definitions in the files a file imports.
    for _, kind, target, path in declared:
        if kind == "imports" and (found := resolver.file(target)):
            resolver.imported[path].add(found)
    targets: list[str | None] = []
    for _, _, target, path in declared:
        if target.form is TargetForm.NODE:
            targets.append(target.names[0])
        elif target.form is TargetForm.SYMBOL:
            targets.append(resolver.symbol(target.names[0], path))
        elif target.form is TargetForm.LOCAL:
            targets.append(resolver.symbol(target.names[0], path, anywhere=False))
        elif target.form is TargetForm.MEMBER:
            targets.append(resolver.member(target.names[0], target.near))
        else:
            found = resolver.file(target)
            targets.append(resolver.file_root.get(found) if found else None)
    return targets


def resolve(nodes: list[NodeRecord], declared: Sequence[DeclaredEdges]) -> list[ResolvedEdges]:
    """Every declared group whose target resolves, with what it resolves to."""
    return [
        ResolvedEdges(group.sources, group.type, target, group.path)
        for group, target in zip(declared, resolve_targets(nodes, declared), strict=True)
        if target is not None
    ]


def _between_nodes(
    resolved: Iterable[ResolvedEdges], is_node: Callable[[str], bool]
) -> Iterator[tuple[str, str, str, list[str]]]:
    """Resolved groups as (path, type, target, sources) between nodes: sources that are
    no node or the target itself are left out, and so are targets that are no node.
    """
    for sources, kind, target, path in resolved:
        if is_node(target):
            kept = [source for source in sources if source != target and is_node(source)]
            if kept:
                yield path, kind, target, kept


#: What a store hands the graph: every node and every declared group that resolved, read
#: in one state of the store.
GraphSource = Callable[[], tuple[list[NodeRecord], list[ResolvedEdges]]]
#: Every node, read in one state of the store: all that looking nodes up needs.
NodeSource = Callable[[], list[NodeRecord]]


def _file_roots(nodes: Iterable[NodeRecord]) -> dict[str, str]:
    """Each file's root node URI by path."""
    return {node.path: node.uri for node in nodes if node.parent is None}


#: A node as the graph keeps it: `NodeRecord`'s fields in a plain tuple. The cyclic
#: collector stops tracking a plain tuple of strings and numbers, never a named tuple: kept
#: as records, the nodes of a large store made every full collection of a service that
#: holds the graph walk them all (0.1-0.2 s each at 100k nodes).
_Row = tuple[str, str, str, str, int, int, str | None]
_PATH = 3


def _node_table(nodes: list[NodeRecord]) -> dict[str, _Row]:
    """Every node of the graph by URI: the repository, the records read, and a node per
    folder (rows are made `GraphNode`s when asked for: most are never looked at).
    """
    table: dict[str, _Row] = {
        _REPOSITORY: (_REPOSITORY, "repository", "repository", "", 0, 0, None)
    }
    table.update((node.uri, cast(_Row, tuple(node))) for node in nodes)
    for _, child, folder in _containment(_file_roots(nodes)):
        if folder is not None:
            table[child] = (child, "directory", folder, folder, 0, 0, None)
    return table


#: Each node's edges one way, as (type, other end) pairs.
_Ends = dict[str, tuple[tuple[str, str], ...]]


class _Adjacency:
    """The resolved edges as plain dicts, each node's edges both ways in the order they
    were resolved. Walks read this; it builds several times faster than a networkx graph
    of the same store, which matters to a command that walks a large graph once and exits.
    Kept as tuples in plain dicts, which the cyclic collector stops tracking: a dict of
    dicts it walks in every full collection (40 ms more each at 100k fragments, in a service).
    """

    def __init__(
        self,
        table: Mapping[str, _Row],
        nodes: list[NodeRecord],
        resolved: list[ResolvedEdges],
    ) -> None:
        # Per node, its edges as (type, other end), kept once each: dicts as ordered sets.
        out: defaultdict[str, dict[tuple[str, str], None]] = defaultdict(dict)
        into: defaultdict[str, dict[tuple[str, str], None]] = defaultdict(dict)

        def add(source: str, kind: str, target: str) -> None:
            out[source][kind, target] = None
            into[target][kind, source] = None

        for parent, child, _ in _containment(_file_roots(nodes)):
            add(parent, "contains", child)
        is_node = table.__contains__
        for parent, child in _parents(nodes, is_node):
            add(parent, "contains", child)
        for _, kind, target, sources in _between_nodes(resolved, is_node):
            incoming = into[target]
            for source in sources:  # `add`, inlined: most edges are added here
                out[source][kind, target] = None
                incoming[kind, source] = None
        self.out: _Ends = {uri: tuple(ends) for uri, ends in out.items()}
        self.into: _Ends = {uri: tuple(ends) for uri, ends in into.items()}

    def edges(self) -> Iterator[GraphEdge]:
        """Every edge, in the order resolved."""
        for source, edges in self.out.items():
            for kind, target in edges:
                yield GraphEdge(source, kind, target)


class ResolvedGraph:
    """A `GraphView` of the nodes and resolved edges `read` returns, built once. A store
    keeps one per state of its index and makes a new one when the index changes.
    `read_nodes`, when given, reads the nodes alone: lookups then wait for no edges, so
    that a strategy can decide from names within its short `can_handle` window (should
    the index change before the edges are read, a walk may meet nodes a lookup did not).
    `known_stats` are counts kept from an earlier resolution of the same state, and
    `keep_stats` is told the counts when they are first made, to keep them.
    """

    def __init__(
        self,
        read: GraphSource,
        known_stats: GraphStats | None = None,
        keep_stats: Callable[[GraphStats], None] | None = None,
        read_nodes: NodeSource | None = None,
    ) -> None:
        self._read = read
        self._read_nodes = read_nodes
        self._stats = known_stats
        self._keep_stats = keep_stats

    @cached_property
    def _whole(self) -> tuple[dict[str, _Row], _Adjacency]:
        with collector_paused():
            nodes, resolved = self._read()
            table = _node_table(nodes)
            return table, _Adjacency(table, nodes, resolved)

    @property
    def _adjacency(self) -> _Adjacency:
        return self._whole[1]

    @property
    def _nodes(self) -> dict[str, _Row]:
        """Every node by URI: the whole graph's once it is built, else the nodes alone."""
        return self._whole[0] if "_whole" in self.__dict__ else self._nodes_alone

    @cached_property
    def _nodes_alone(self) -> dict[str, _Row]:
        if self._read_nodes is None:
            return self._whole[0]
        with collector_paused():
            return _node_table(self._read_nodes())

    @cached_property
    def networkx(self) -> nx.MultiDiGraph[str]:
        """The whole resolved graph as a networkx graph (nodes carry kind, name, path and
        lines; edges are keyed by type).
        """
        import networkx as nx  # seconds of import for commands that never walk it

        table, adjacency = self._whole
        graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        with collector_paused():
            for uri, (_, kind, name, path, start_line, end_line, _) in table.items():
                graph.add_node(
                    uri,
                    kind=kind,
                    name=name,
                    path=path,
                    start_line=start_line,
                    end_line=end_line,
                )
            for source, kind, target in adjacency.edges():
                graph.add_edge(source, target, key=kind, type=kind)
        return graph

    def stats(self) -> GraphStats:
        """How many nodes of each kind and edges of each type the graph holds, counted
        without building it.
        """
        if self._stats is None:
            # The records are dropped right after: left to the collector, the first
            # collection would walk them all.
            with collector_paused():
                self._stats = _count(*self._read())
            if self._keep_stats is not None:
                self._keep_stats(self._stats)
        return self._stats

    def node(self, uri: str) -> GraphNode | None:
        """The node with this URI, if there is one."""
        record = self._nodes.get(uri)
        return None if record is None else _graph_node(record)

    def edges(self) -> list[GraphEdge]:
        """Every edge, sorted."""
        return sorted(self._adjacency.edges())

    def neighbours(
        self, uri: str, edge_types: Collection[str] = (), direction: Direction = "both"
    ) -> list[GraphEdge]:
        """Edges at `uri` (of these types; all when empty), sorted."""
        adjacency = self._adjacency
        found: list[GraphEdge] = []
        if direction != "in":
            found += [
                GraphEdge(uri, k, t)
                for k, t in adjacency.out.get(uri, ())
                if not edge_types or k in edge_types
            ]
        if direction != "out":
            # Each end's edges are kept once: only a loop is both out and in.
            loops = direction == "both"
            found += [
                GraphEdge(s, k, uri)
                for k, s in adjacency.into.get(uri, ())
                if (not edge_types or k in edge_types) and not (loops and s == uri)
            ]
        found.sort()
        return found

    def subgraph(self, uris: Iterable[str], hops: int) -> list[GraphEdge]:
        """Edges among the nodes within `hops` of `uris` (either direction) that lie on a
        path of at most `hops` edges from them, sorted.
        """
        table, adjacency = self._whole
        out, into = adjacency.out, adjacency.into
        reached = dict.fromkeys((u for u in uris if u in table), 0)
        frontier = list(reached)
        for distance in range(1, hops + 1):
            step: list[str] = []
            for node in frontier:
                for _, other in (*out.get(node, ()), *into.get(node, ())):
                    if other not in reached:
                        reached[other] = distance
                        step.append(other)
            frontier = step
        found = {
            GraphEdge(source, kind, target)
            for source in reached
            for kind, target in out.get(source, ())
            if target in reached and (reached[source] < hops or reached[target] < hops)
        }
        return sorted(found)

    @cached_property
    def _names(self) -> _Names:
        nodes = self._nodes
        with collector_paused():
            return _Names(nodes)

    def lookup(self, name: str) -> list[GraphNode]:
        """The nodes a user may mean by `name`, sorted by URI (see `GraphView.lookup`)."""
        names = self._names
        nodes = names.table  # the nodes its names were made from, whatever came since
        name = name.strip()
        found: Sequence[str]
        if name in nodes:
            found = [name]
        elif "/" in name or "\\" in name or is_file_name(name):
            found = names.file(name)
        elif "." in name.strip("."):
            files, rest = names.module(name)
            found = files if not rest else []
            if rest:
                inside = {nodes[f][_PATH] for f in files}
                found = [
                    uri
                    for uri in names.definitions.get(rest, ())
                    if not inside or nodes[uri][_PATH] in inside
                ]
        else:
            found = [*names.definitions.get(name, ()), *names.stems.get(name, ())]
        return [_graph_node(nodes[uri]) for uri in sorted(set(found))]


def _graph_node(row: _Row) -> GraphNode:
    uri, kind, name, path, start_line, end_line, _ = row
    return GraphNode(uri, kind, name, path, start_line, end_line)


class _Names:
    """The graph's nodes by the names users give them: files by every tail of their path
    and by their name without its ending (a package by its folder's name; leading
    underscores optional), definitions by qualified name and by last name.
    """

    def __init__(self, table: Mapping[str, _Row]) -> None:
        self.table = table
        files: defaultdict[str, list[str]] = defaultdict(list)
        definitions: defaultdict[str, list[str]] = defaultdict(list)
        stems: defaultdict[str, list[str]] = defaultdict(list)
        for uri, kind, name, path, _, _, _ in table.values():
            if kind in ("repository", "directory"):
                continue
            if "#" not in uri:
                parts = path.split("/")  # stored paths are normalised POSIX paths
                for start in range(len(parts)):
                    files["/".join(parts[start:])].append(uri)
                stem = posixpath.splitext(parts[-1])[0]
                if stem == "__init__":
                    stem = parts[-2] if len(parts) > 1 else ""
                for name in {stem, stem.strip("_")} - {""}:
                    stems[name].append(uri)
            elif kind not in _NOT_DEFINITIONS:
                definitions[name].append(uri)
                if "." in name:
                    definitions[name.rsplit(".", 1)[-1]].append(uri)
        # Tuples, not lists: the collector stops tracking them (see `_Row`).
        self.files = _untracked(files)
        self.definitions = _untracked(definitions)
        self.stems = _untracked(stems)

    def file(self, name: str) -> tuple[str, ...]:
        """Files whose path ends with the longest tail of `name` that any path ends with."""
        parts = [p for p in name.strip().replace("\\", "/").split("/") if p not in ("", ".")]
        for start in range(len(parts)):
            found = self.files.get("/".join(parts[start:]))
            if found:
                return found
        return ()

    def module(self, dotted: str) -> tuple[tuple[str, ...], str]:
        """The files the longest module prefix of a dotted name names, and the rest of it
        (`click.core.Context.invoke` -> click/core.py, `Context.invoke`).
        """
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            module = "/".join(parts[:end])
            for candidate in (f"{module}.py", f"{module}/__init__.py"):
                found = self.files.get(candidate)
                if found:
                    return found, ".".join(parts[end:])
        return (), dotted


def _untracked(lists: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {key: tuple(values) for key, values in lists.items()}


def _count(nodes: list[NodeRecord], resolved: list[ResolvedEdges]) -> GraphStats:
    kinds = Counter(node.kind for node in nodes)
    kinds["repository"] += 1
    uris = {node.uri for node in nodes}
    uris.add(_REPOSITORY)
    types: Counter[str] = Counter()
    # Containment runs from the repository and the folders, which no file declares edges
    # from, and from each node's parent, which a file may declare too.
    for _, child, folder in _containment(_file_roots(nodes)):
        if folder is not None:
            kinds["directory"] += 1
            uris.add(child)
        types["contains"] += 1
    parent_of = {child: parent for parent, child in _parents(nodes, uris.__contains__)}
    types["contains"] += len(parent_of)
    # A file's edges of one type to one target come as one group of distinct sources,
    # unless two of its targets resolve alike (`import a.b` and `from a import b`).
    counted: dict[tuple[str, str, str], Collection[str]] = {}
    for path, kind, target, sources in _between_nodes(resolved, uris.__contains__):
        if kind == "contains" and target in parent_of:
            sources = [source for source in sources if source != parent_of[target]]
            if not sources:
                continue
        earlier = counted.get(key := (path, kind, target))
        if earlier is None:
            counted[key] = sources
            types[kind] += len(sources)
        else:
            merged = {*earlier, *sources}
            types[kind] += len(merged) - len(earlier)
            counted[key] = merged
    return GraphStats(dict(sorted(kinds.items())), dict(sorted(types.items())))
