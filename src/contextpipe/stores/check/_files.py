"""Checks of what a store holds: its capabilities before and after the first index, what
an index writes and gives back, re-indexing, deleting, failed write sessions, moving the
index aside and reading ahead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from contextpipe import (
    ContextFragment,
    EdgeRecord,
    EdgeTarget,
    FragmentLookup,
    GraphEdge,
    GraphView,
    IndexWriter,
    NewFragment,
    NodeRecord,
    RequestFilters,
    SessionTiers,
    SkipReason,
    SourceRef,
    StoredFile,
    StoreError,
    TargetForm,
    TextSearch,
    Timeline,
    content_hash,
    fragment_id,
    get_tokenizer,
)

from ._kit import ALL, TOKENIZER, BrokenPromiseError, Subject, differences, expect, moment

#: The read capabilities, by the name strategies require them by, and their protocols.
REQUIRED = {"store": FragmentLookup, "text": TextSearch}
OPTIONAL = {"graph": GraphView, "timeline": Timeline, "sessions": SessionTiers}

_UTIL_SNAKE = (
    '"""Make snake_case slugs and titles."""\n\n\n'
    "def snake(text: str) -> str:\n"
    '    return title(text).replace(" ", "_")\n\n\n'
    "def title(text: str) -> str:\n"
    "    return text.title()\n"
)


def _check_says_what_to_run(subject: Subject) -> None:
    try:
        subject.store.check()
    except StoreError as exc:
        said = str(exc)
        expect("run `contextpipe index" in said, f"check() says {said!r}")
        expect("\n" not in said, f"check() says more than one line: {said!r}")
        return
    raise BrokenPromiseError("check() of a store with nothing indexed passed")


def _counts(subject: Subject, files: int, fragments: int) -> None:
    stats = subject.store.stats()
    expect(
        (stats.files, stats.fragments) == (files, fragments),
        f"stats() counts {stats.files} files and {stats.fragments} fragments;"
        f" expected {files} and {fragments}",
    )
    expect(stats.searchable <= stats.fragments, f"{stats.searchable} searchable fragments")


def _offers_nothing(subject: Subject) -> None:
    offered = subject.store.backends()
    expect(offered.available() == frozenset(), f"it offers {sorted(offered.available())}")


def nothing_before_the_first_index(subject: Subject) -> None:
    _offers_nothing(subject)
    _counts(subject, 0, 0)
    _check_says_what_to_run(subject)
    expect(subject.store.prefetch(1 << 40) == 0, "it reads bytes ahead of the first index")


def capabilities_keep_their_protocols(subject: Subject) -> None:
    subject.index()
    offered = subject.store.backends()
    available = offered.available()
    missing = sorted(set(REQUIRED) - available)
    expect(not missing, f"it offers no {', '.join(missing)} (required)")
    by_name = {
        "store": offered.fragments,
        "text": offered.text,
        "graph": offered.graph,
        "timeline": offered.timeline,
        "sessions": offered.sessions,
    }
    for name, protocol in {**REQUIRED, **OPTIONAL}.items():
        capability = by_name[name]
        expect(
            capability is None or isinstance(cast(object, capability), protocol),
            f"its {name} capability, a {type(capability).__name__}, is not a {protocol.__name__}",
        )
    expect(offered.vectors is None, "it offers vector search itself: that is the pipeline's")
    subject.store.check()


def index_is_counted_and_looked_up(subject: Subject) -> None:
    subject.index()
    written = sum(summary.fragments_written for summary in subject.summaries)
    _counts(subject, 3, written)
    lookup = subject.lookup()
    expect(lookup.count() == written, f"count() is {lookup.count()}, the index wrote {written}")
    full = subject.full_texts()
    expect(bool(full), "no node's variants hold a full text")
    for fragment in full:
        variants = lookup.variants(fragment.uko_uri)
        depths = [variant.detail_depth for variant in variants]
        expect(depths == sorted(set(depths), reverse=True), f"{fragment.uko_uri}: depths {depths}")
        expect(variants[0] == fragment, f"{fragment.uko_uri}: its first variant is not its text")
        for variant in variants:
            expect(
                variant.uko_uri == fragment.uko_uri,
                f"{fragment.uko_uri}: a variant of {variant.uko_uri}",
            )
            expect(
                "title" in variant.metadata and "language" in variant.metadata,
                f"{variant.id}: no title and language in its metadata ({sorted(variant.metadata)})",
            )
    held = subject.variants_held()
    expect(lookup.count() == held, f"count() is {lookup.count()}, its variants hold {held}")
    expect(not lookup.variants("uko://code/app/nowhere.py#ghost"), "an unknown node has variants")


def many_nodes_at_once(subject: Subject) -> None:
    subject.index()
    lookup = subject.lookup()
    uris = [fragment.uko_uri for fragment in subject.full_texts()]
    absent = "uko://doc/nowhere.md#nothing"
    found = lookup.variants_many([*reversed(uris), absent, uris[0]])
    expect(absent not in found, "a node the store lacks has variants")
    expect(sorted(found) == sorted(set(uris)), f"looked up {len(set(uris))}, got {len(found)}")
    for uri in uris:
        one = list(lookup.variants(uri))
        expect(list(found[uri]) == one, f"{uri}: other variants at once than alone")


def token_counts_are_the_tokenizers(subject: Subject) -> None:
    subject.index()
    tokenizer = get_tokenizer(TOKENIZER)
    lookup = subject.lookup()
    stored = [v for f in subject.full_texts() for v in lookup.variants(f.uko_uri)]
    counts = lookup.token_counts(stored, TOKENIZER)
    for fragment in stored:
        real = tokenizer.count(fragment.text)
        found = counts.get(fragment.content_hash)
        expect(found == real, f"{fragment.id}: {found} tokens, its text has {real}")
    other = "the store holds nothing like this"
    changed = stored[0].model_copy(update={"text": other, "content_hash": content_hash(other)})
    unknown = stored[0].model_copy(update={"id": "uko://doc/nowhere.md#nothing@9"})
    asked = lookup.token_counts([changed, unknown], TOKENIZER)
    expect(not asked, f"counts for texts it does not hold under those ids: {asked}")
    elsewhere = lookup.token_counts(stored, "cl100k_base")
    expect(not elsewhere, "counts by a tokenizer that counted none of its texts")


def _gives_back(subject: Subject, rows: Mapping[str, SkipReason | None]) -> None:
    stored = subject.stored_files()
    expect(sorted(stored) == sorted(rows), f"files() gives {sorted(stored)}")
    for path, skipped in rows.items():
        data = (subject.project / path).read_bytes()
        wanted = StoredFile(
            len(data),
            (subject.project / path).stat().st_mtime_ns,
            hashlib.sha256(data).hexdigest(),
            TOKENIZER,
            skipped,
        )
        expect(stored[path] == wanted, f"{path}: files() gives {stored[path]}, it stored {wanted}")


_AS_WRITTEN: dict[str, SkipReason | None] = {
    "app/main.py": None,
    "app/util.py": None,
    "docs/budget.md": None,
}


def files_come_back_as_stored(subject: Subject) -> None:
    target = subject.project / "assets/logo.bin"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    subject.index()
    _gives_back(subject, {**_AS_WRITTEN, "assets/logo.bin": SkipReason.BINARY})


def _holds_what_fresh_holds(subject: Subject, without: str | None = None) -> None:
    fresh = subject.fresh_contents(subject.project.with_name("fresh"), without)
    found = differences(subject.contents(), fresh)
    expect(not found, "unlike a fresh index: " + "; ".join(found))


def _counts_what_lookups_hold(subject: Subject, files: int) -> None:
    held = subject.variants_held()
    _counts(subject, files, held)
    count = subject.lookup().count()
    expect(count == held, f"count() says {count}, the variants of its nodes hold {held}")


def _node_gone(subject: Subject, uri: str, text: str) -> None:
    expect(not subject.lookup().variants(uri), f"{uri} still has variants")
    if subject.offers("graph"):
        graph = subject.graph()
        expect(graph.node(uri) is None, f"the graph still has the node {uri}")
        expect(not graph.neighbours(uri), f"the graph still has edges at {uri}")
    if subject.offers("timeline"):
        listed = [f.uko_uri for f in subject.timeline().recent(ALL, RequestFilters())]
        expect(uri not in listed, f"the timeline still lists {uri}")
    found = [f.uko_uri for f in subject.search(text)]
    expect(uri not in found, f"searching for its old text still finds {uri}")


def changed_file_replaced_whole(subject: Subject) -> None:
    subject.index()
    subject.change("app/util.py", _UTIL_SNAKE)
    subject.index()
    expect(not subject.search("kebab"), "searching for a word it lost still finds it")
    hits = subject.text().search("snake_case", ALL, RequestFilters())
    expect(bool(hits), "searching for a new word finds nothing")
    expect(
        hits[0].fragment.uko_uri == "uko://code/app/util.py#module"
        and hits[0].matched_terms == ("snake_case", "snake", "case"),
        f"searching 'snake_case' finds {hits[0].fragment.uko_uri} first, matching"
        f" {hits[0].matched_terms}",
    )
    old = "uko://code/app/util.py#slug"
    _node_gone(subject, old, subject.seen["app/util.py"][old])
    if subject.offers("graph"):
        graph = subject.graph()
        new = GraphEdge("uko://code/app/util.py#snake", "calls", "uko://code/app/util.py#title")
        expect(new in graph.neighbours(new.source), f"the graph lacks {new}")
        for stale in (
            GraphEdge("uko://code/app/main.py#run", "calls", old),
            GraphEdge("uko://code/app/util.py", "contains", old),
        ):
            expect(stale not in graph.neighbours(stale.source), f"the graph still has {stale}")
    _counts_what_lookups_hold(subject, 3)
    _holds_what_fresh_holds(subject)


def unchanged_index_writes_nothing(subject: Subject) -> None:
    subject.index()
    before = subject.store.backends().graph
    subject.changes = []
    subject.index()
    expect(not subject.changes, f"an index with nothing changed asked to {subject.changes}")
    after = subject.store.backends().graph
    expect(after is before, "an index that changed nothing made a new graph view")


def touched_file_only_touched(subject: Subject) -> None:
    subject.index()
    subject.touch("app/util.py")
    subject.changes = []
    subject.index()
    expect(subject.changes == ["touch app/util.py"], f"the index asked to {subject.changes}")
    _gives_back(subject, _AS_WRITTEN)


def _forgotten(subject: Subject, path: str) -> None:
    uris = subject.seen.get(path)
    expect(bool(uris), f"nothing was ever read from {path}")
    expect(path not in subject.stored_files(), f"the writer still lists {path}")
    for uri, text in sorted((uris or {}).items()):
        _node_gone(subject, uri, text)


def vanished_file_takes_all_along(subject: Subject) -> None:
    subject.index()
    (subject.project / "app/util.py").unlink()
    subject.index()
    _forgotten(subject, "app/util.py")
    _counts_what_lookups_hold(subject, 2)
    _holds_what_fresh_holds(subject)


def forgotten_folder_takes_all_along(subject: Subject) -> None:
    subject.index()
    subject.pipeline.forget(subject.project / "app")
    _forgotten(subject, "app/main.py")
    _forgotten(subject, "app/util.py")
    _counts_what_lookups_hold(subject, 1)
    _holds_what_fresh_holds(subject, "app")


class _SessionFailedError(Exception):
    """The failure a check's write session raises on purpose."""


@dataclass(frozen=True)
class _WrittenFile:
    """A small file as a check's write session writes it: a root node and one child node,
    each with its full text, the root containing the child, the child mentioning `run`.
    """

    path: str
    stored: StoredFile
    fragments: tuple[NewFragment, ...]
    nodes: tuple[NodeRecord, ...]
    edges: tuple[EdgeRecord, ...]

    @classmethod
    def of(cls, path: str, kind: str, name: str, text: str) -> _WrittenFile:
        document = path.endswith(".md")
        root = f"uko://{'doc' if document else 'code'}/{path}"
        child = f"{root}#{name.lower()}"
        data = text.encode()
        digest = hashlib.sha256(data).hexdigest()
        at = moment("2024-04-01T12:00:00+00:00")
        stored = StoredFile(len(data), int(at.timestamp()) * 1_000_000_000, digest, TOKENIZER)
        nodes = (
            NodeRecord(root, "document" if document else "module", path, path, 1, 1, None),
            NodeRecord(child, kind, name, path, 1, 1, root),
        )
        count = get_tokenizer(TOKENIZER).count
        fragments = tuple(
            NewFragment(
                ContextFragment(
                    id=fragment_id(node.uri, 9),
                    uko_uri=node.uri,
                    detail_depth=9,
                    text=text,
                    token_count=count(text),
                    source=SourceRef(
                        uri=node.uri,
                        path=path,
                        start_line=1,
                        end_line=1,
                        kind=node.kind,
                        modified_at=at,
                    ),
                    content_hash=content_hash(text),
                    metadata={"read_at": f"sha256:{digest}"},
                ),
                node.name,
                "markdown" if document else "python",
                text if node.parent is not None else None,
            )
            for node in nodes
        )
        edges = (
            EdgeRecord(root, "contains", EdgeTarget(TargetForm.NODE, (child,)), path),
            EdgeRecord(child, "mentions", EdgeTarget(TargetForm.SYMBOL, ("run",)), path),
        )
        return cls(path, stored, fragments, nodes, edges)


def _failing_session(subject: Subject, steps: list[Callable[[IndexWriter], None]]) -> None:
    """Run `steps` (each given the writer) in one write session that then fails; the
    failure must reach the caller.
    """
    try:
        with subject.store.writer() as writer:
            for step in steps:
                step(writer)
            raise _SessionFailedError
    except _SessionFailedError:
        return
    raise BrokenPromiseError("the write session swallowed the error it failed with")


def _holdings(subject: Subject, path: str) -> dict[str, object]:
    """Everything a store shows of one file through its protocols."""
    lookup = subject.lookup()
    full = subject.full_texts(RequestFilters(paths=(path,)))
    uris = sorted(fragment.uko_uri for fragment in full)
    shown: dict[str, object] = {
        "stored file": subject.stored_files().get(path),
        "full texts": full,
        "variants": {uri: list(lookup.variants(uri)) for uri in uris},
    }
    if subject.offers("graph"):
        graph = subject.graph()
        shown["graph edges"] = sorted({edge for uri in uris for edge in graph.neighbours(uri)})
    return shown


def _replace(written: _WrittenFile) -> Callable[[IndexWriter], None]:
    def step(writer: IndexWriter) -> None:
        writer.replace_file(
            written.path, written.stored, written.fragments, written.nodes, written.edges
        )

    return step


def _commit(writer: IndexWriter) -> None:
    writer.commit()


def _remove_budget(writer: IndexWriter) -> None:
    writer.remove_file("docs/budget.md")


def failed_session_keeps_what_it_committed(subject: Subject) -> None:
    subject.index()
    util_before = _holdings(subject, "app/util.py")
    ledger = _WrittenFile.of(
        "docs/budget.md", "section", "Ledger", "The zebra keeps the ledger of every run."
    )
    cobra = _WrittenFile.of(
        "app/util.py", "function", "snake", "The cobra hisses at the moon on every run."
    )
    _failing_session(
        subject,
        [_replace(ledger), _commit, _replace(cobra)],
    )
    # What it committed stays, whole.
    expect(
        subject.stored_files().get(ledger.path) == ledger.stored,
        f"files() gives {subject.stored_files().get(ledger.path)} for {ledger.path}, the"
        f" session committed {ledger.stored}",
    )
    full = {f.uko_uri: f.text for f in subject.full_texts(RequestFilters(paths=(ledger.path,)))}
    wanted = {item.fragment.uko_uri: item.fragment.text for item in ledger.fragments}
    expect(
        full == wanted, f"{ledger.path} holds {sorted(full)}, the session wrote {sorted(wanted)}"
    )
    replaced = sorted(set(subject.seen[ledger.path]) - set(wanted))
    left = [uri for uri in replaced if subject.lookup().variants(uri)]
    expect(not left, f"the nodes it replaced are still there: {left}")
    if subject.offers("graph"):
        graph = subject.graph()
        root, child = ledger.nodes
        node = graph.node(child.uri)
        expect(node is not None and node.kind == child.kind, f"the graph has {child.uri} as {node}")
        into = graph.neighbours(child.uri, direction="in")
        expect(GraphEdge(root.uri, "contains", child.uri) in into, f"edges in: {into}")
        out = graph.neighbours(child.uri, ["mentions"], "out")
        names = [getattr(graph.node(edge.target), "name", None) for edge in out]
        expect("run" in names, f"its mention of `run` resolves to {out}")
    # What it did not commit is gone.
    found = differences(_holdings(subject, "app/util.py"), util_before)
    expect(not found, "app/util.py is not as before the session: " + "; ".join(found))
    hits = [f.uko_uri for f in subject.search("zebra")]
    expect(hits[:1] == ["uko://doc/docs/budget.md#ledger"], f"searching 'zebra' finds {hits}")
    cobras = [f.uko_uri for f in subject.search("cobra")]
    expect(not cobras, f"searching for what was not committed finds {cobras}")


def failed_session_before_commit_changes_nothing(subject: Subject) -> None:
    subject.index()
    before = subject.contents()
    cobra = _WrittenFile.of("app/util.py", "function", "snake", "The cobra hisses at every run.")
    _failing_session(
        subject,
        [_remove_budget, _replace(cobra)],
    )
    found = differences(subject.contents(), before)
    expect(not found, "not as before the failed session: " + "; ".join(found))


def moved_aside_starts_empty(subject: Subject) -> None:
    subject.index()
    moved = subject.store.move_aside()
    expect(bool(moved), f"move_aside() returned {moved!r}")
    expect(moved != subject.store.location, f"it kept the index where it was: {moved}")
    _offers_nothing(subject)
    _counts(subject, 0, 0)
    _check_says_what_to_run(subject)
    again = subject.store.move_aside()
    expect(again is None, f"moving an empty store aside returned {again!r}")
    subject.index()
    _counts(subject, 3, sum(summary.fragments_written for summary in subject.summaries))


def reading_ahead_keeps_to_its_limit(subject: Subject) -> None:
    subject.index()
    before = subject.contents()
    limit = 4096
    allowed = subject.store.prefetch(limit)
    everything = [subject.store.prefetch(1 << 40) for _ in range(2)]
    expect(everything[0] == everything[1], f"it read {everything} bytes ahead")
    if subject.store.local_folders:  # an indexed store keeps something there
        expect(everything[0] > 0, "it read nothing ahead, though it keeps folders here")
    wanted = min(limit, everything[0])
    expect(allowed == wanted, f"allowed {limit} of {everything[0]}, it read {allowed}")
    found = differences(subject.contents(), before)
    expect(not found, "reading ahead changed: " + "; ".join(found))


CHECKS: list[tuple[str, Callable[[Subject], None]]] = [
    (
        "before the first index it offers nothing and says what to run",
        nothing_before_the_first_index,
    ),
    (
        "an indexed store offers store and text, each capability keeping its protocol",
        capabilities_keep_their_protocols,
    ),
    ("an index is counted, and looked up deepest first", index_is_counted_and_looked_up),
    ("many nodes at once are looked up as each alone", many_nodes_at_once),
    (
        "a stored text's token count is its tokenizer's, for that text alone",
        token_counts_are_the_tokenizers,
    ),
    ("the writer gives every file back as it was stored", files_come_back_as_stored),
    ("a changed file replaces its fragments, nodes and edges whole", changed_file_replaced_whole),
    ("indexing again with nothing changed writes nothing", unchanged_index_writes_nothing),
    ("a file touched without a change is only touched", touched_file_only_touched),
    ("a file that vanished takes everything read from it along", vanished_file_takes_all_along),
    ("forgetting a folder takes everything read from it along", forgotten_folder_takes_all_along),
    (
        "a failed write session keeps what it committed and nothing after",
        failed_session_keeps_what_it_committed,
    ),
    (
        "a write session that fails before its first commit changes nothing",
        failed_session_before_commit_changes_nothing,
    ),
    ("moving the index aside keeps it and starts the next index empty", moved_aside_starts_empty),
    ("reading ahead keeps to its limit and changes nothing", reading_ahead_keeps_to_its_limit),
]
