"""The property test of the graph a store keeps resolved: hypothesis draws small code bases
whose files define, import and call a handful of shared names, changes them in random
write sessions (some of them killed halfway), and after each session compares what the
store reads back with resolving everything at once.

Files are written through the store's writer directly, with nodes and declared edges the
test makes itself: the property is about resolution, and this reaches its hard cases
(a name defined in two files, then one; an import that starts to resolve when its file
appears; a target that is no node) in far fewer runs than parsed source would.
"""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from behave import then, when
from behave.runner import Context
from hypothesis import HealthCheck, example, settings
from hypothesis import given as for_all
from hypothesis import strategies as st

from contextpipe import EdgeRecord, EdgeTarget, NodeRecord, StoredFile, TargetForm
from contextpipe.stores.embedded._resolution import stored_resolution
from contextpipe.stores.embedded.backend import EmbeddedStore
from contextpipe.stores.graph import ResolvedGraph, resolve

PATHS = ("a.py", "pkg/__init__.py", "pkg/b.py", "pkg/sub/c.py", "c.py", "x/c.py", "lib/d.go")
MODULES = ("a", "pkg", "pkg.b", "pkg.sub.c", "c", "x.c", "missing")
NAMES = ("run", "Base", "__init__")
KINDS = ("function", "class", "method", "block")


class _SessionKilledError(Exception):
    """A write session that dies after its first commit."""


@dataclass(frozen=True)
class _Version:
    """One state of a file: its nodes and the edges it declares."""

    nodes: tuple[NodeRecord, ...]
    edges: tuple[EdgeRecord, ...]


def _root(path: str) -> str:
    return f"uko://code/{path}"


@st.composite
def _version(draw: st.DrawFn, path: str) -> _Version:
    root = _root(path)
    nodes = [NodeRecord(root, "module", path, path, 1, 100, None)]
    for number in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(NAMES))
        qualified = draw(st.sampled_from((name, f"Thing.{name}", f"Base.{name}")))
        parent = draw(st.sampled_from([node.uri for node in nodes]))
        uri = f"{root}#{qualified}.{number}"
        kind = draw(st.sampled_from(KINDS))
        nodes.append(NodeRecord(uri, kind, qualified, path, number + 2, number + 3, parent))
    uris = [node.uri for node in nodes]
    symbols = st.builds(lambda n: EdgeTarget(TargetForm.SYMBOL, (n,)), st.sampled_from(NAMES))
    modules = st.builds(lambda m: EdgeTarget(TargetForm.PYTHON, (m,)), st.sampled_from(MODULES))
    members = st.builds(
        lambda n, m: EdgeTarget(TargetForm.MEMBER, (n,), m),
        st.sampled_from(NAMES),
        st.sampled_from((*MODULES, "pkg.Thing", "pkg.b.Base")),
    )
    targets = st.one_of(
        symbols,
        symbols,
        st.builds(lambda n: EdgeTarget(TargetForm.LOCAL, (n,)), st.sampled_from(NAMES)),
        members,
        modules,
        modules,
        st.builds(
            lambda p, q: EdgeTarget(TargetForm.FILE, (p, q)),
            st.sampled_from(PATHS),
            st.sampled_from(PATHS),
        ),
        st.builds(lambda m: EdgeTarget(TargetForm.GO, (m,)), st.sampled_from(("lib", "pkg"))),
        st.builds(
            lambda u: EdgeTarget(TargetForm.NODE, (u,)),
            st.sampled_from((*uris, _root("gone.py") + "#x")),
        ),
    )
    edges: list[EdgeRecord] = []
    for _ in range(draw(st.integers(0, 10))):
        target = draw(targets)
        kind = "imports" if target.form in (TargetForm.PYTHON, TargetForm.GO) else "calls"
        kind = draw(st.sampled_from((kind, "references", "contains")))
        source = draw(st.sampled_from((*uris, *uris, f"{root}#not-a-node")))
        edges.append(EdgeRecord(source, kind, target, path))
    return _Version(tuple(nodes), tuple(edges))


#: A file written in a new version, or (one time in four) removed: None.
_CHANGE = st.sampled_from(PATHS).flatmap(
    lambda path: st.tuples(st.just(path), st.one_of(st.none(), *[_version(path)] * 3))
)
#: Changes to a few files, and whether the session is killed after its first commit.
_SESSION = st.tuples(
    st.lists(_CHANGE, min_size=1, max_size=3), st.sampled_from((False, False, False, True))
)
_Session = tuple[list[tuple[str, _Version | None]], bool]
#: A whole code base written at once, then changed session by session.
_HISTORY = st.tuples(
    st.tuples(*[st.tuples(st.just(path), _version(path)) for path in PATHS]),
    st.lists(_SESSION, min_size=1, max_size=6),
)


def _file(
    path: str,
    defines: tuple[str, ...] = (),
    calls: tuple[str, ...] = (),
    imports: str = "",
    through: str = "",
) -> tuple[str, _Version]:
    """A file of an explicit case: functions, the names it calls (through the module
    `through`, or as bare names), a module it imports.
    """
    root = _root(path)
    nodes = [NodeRecord(root, "module", path, path, 1, 100, None)]
    nodes += [NodeRecord(f"{root}#{name}", "function", name, path, 2, 3, root) for name in defines]
    form = TargetForm.MEMBER if through else TargetForm.SYMBOL
    edges = [EdgeRecord(root, "calls", EdgeTarget(form, (n,), through), path) for n in calls]
    if imports:
        edges.append(EdgeRecord(root, "imports", EdgeTarget(TargetForm.PYTHON, (imports,)), path))
    return path, _Version(tuple(nodes), tuple(edges))


#: Cases drawn too rarely at random. A file whose call resolves through its import keeps
#: that import when another file stops defining the name (rule 2 reads the imports of the
#: files it resolves again). A file's import moves to a shallower file that appears, and
#: its call stops resolving through the old one (rule 3). A call through a module (`c.run`)
#: moves to a shallower file of that module that appears and defines no such name (rule 3).
_EXPLICIT = (
    (
        (
            _file("a.py", calls=("run",), imports="pkg.b"),
            _file("pkg/b.py", ("run",)),
            _file("x/c.py", ("run",)),
        ),
        [([_file("x/c.py", ("run", "stop"))], False)],
    ),
    (
        (
            _file("a.py", calls=("run",), imports="c"),
            _file("x/c.py", ("run",)),
            _file("pkg/b.py", ("run",)),
        ),
        [([_file("c.py")], False)],
    ),
    (
        (
            _file("a.py", calls=("run",), through="c"),
            _file("x/c.py", ("run",)),
            _file("pkg/b.py", ("run",)),
        ),
        [([_file("c.py", ("stop",))], False)],
    ),
)


def _apply(store: EmbeddedStore, changes: list[tuple[str, _Version | None]], killed: bool) -> None:
    try:
        with store.writer() as writer:
            for number, (path, version) in enumerate(changes):
                if version is None:
                    writer.remove_file(path)
                else:
                    writer.replace_file(
                        path, StoredFile(1, 1, "", ""), [], version.nodes, version.edges
                    )
                if killed and number == 0:
                    writer.commit()
            if killed:
                raise _SessionKilledError
    except _SessionKilledError:
        pass


def _check(store: EmbeddedStore, killed: bool) -> None:
    nodes, declared = store.nodes(), store.edges()
    everything = resolve(nodes, declared)
    with closing(sqlite3.connect(store.database)) as connection:
        stored = stored_resolution(connection)
    if killed:  # the reader resolves everything itself until the next session ends
        assert stored is None, "a killed session's changes were taken as resolved"
    else:
        assert stored is not None, "no resolution stored after a whole session"
        assert sorted(stored) == sorted(everything), (sorted(stored), sorted(everything))
    graph = store.graph()
    whole = ResolvedGraph(lambda: (nodes, everything))
    assert graph.edges() == whole.edges()
    assert graph.stats() == whole.stats()


@when("the property test changes random code bases in {examples:d} runs")
def run_resolution_property(context: Context, examples: int) -> None:
    context.resolution_sessions = 0
    context.resolution_killed = 0

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @for_all(history=_HISTORY)
    @example(history=_EXPLICIT[0])
    @example(history=_EXPLICIT[1])
    @example(history=_EXPLICIT[2])
    def stays_resolved(history: tuple[tuple[tuple[str, _Version], ...], list[_Session]]) -> None:
        first, sessions = history
        with tempfile.TemporaryDirectory() as folder:
            store = EmbeddedStore(Path(folder))
            try:
                for changes, killed in [
                    (list[tuple[str, _Version | None]](first), False),
                    *sessions,
                ]:
                    _apply(store, changes, killed)
                    _check(store, killed)
                    context.resolution_sessions += 1
                    context.resolution_killed += killed
            finally:
                store.close()

    stays_resolved()


@then("every session's stored graph was the graph of everything resolved at once")
def all_sessions_checked(context: Context) -> None:
    assert context.resolution_sessions > 0


@then("some sessions were killed halfway and the next one caught up")
def some_killed(context: Context) -> None:
    assert context.resolution_killed > 0
