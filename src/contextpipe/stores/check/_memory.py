"""Checks of vectors, memory and its scope, pins and each session's log."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextpipe import ContextFragment, MemoryItem, RequestFilters, RequestScope

from ._kit import (
    ALL,
    EPOCH,
    SPACE,
    TOKENIZER,
    Subject,
    expect,
    memory_ids,
    memory_items,
    vector,
)

# -- vectors -------------------------------------------------------------------------------


def _distinct_texts(subject: Subject) -> dict[str, str]:
    """Every full text once, by content hash."""
    return {fragment.content_hash: fragment.text for fragment in subject.full_texts()}


def _vectors_held(subject: Subject, space: str, held: int | None = None) -> None:
    """The store has vectors of `space` for `held` of its full texts (None: all), and
    lists the others as lacking one.
    """
    texts = _distinct_texts(subject)
    held = len(texts) if held is None else held
    coverage = subject.vectors(space=space).coverage()
    expect(
        (coverage.embedded, coverage.total) == (held, len(texts)),
        f"coverage is {coverage.embedded} of {coverage.total}; it was given {held} of"
        f" {len(texts)} texts",
    )
    lacking = subject.lacking(space)
    expect(len(lacking) == len(texts) - held, f"{len(lacking)} listed as lacking a vector")
    expect(all(texts.get(digest) == text for digest, text in lacking), "a wrong text listed")
    expect(len({digest for digest, _ in lacking}) == len(lacking), "a text listed twice")


def vectors_added_a_batch_at_a_time(subject: Subject) -> None:
    subject.index()
    subject.add_vectors(limit=2)
    _vectors_held(subject, SPACE, 2)
    subject.add_vectors()
    _vectors_held(subject, SPACE)


def nearest_within_filters_and_limit(subject: Subject) -> None:
    subject.index()
    subject.add_vectors()
    index = subject.vectors()
    full = subject.full_texts()
    slug = "uko://code/app/util.py#slug"
    (text,) = {f.text for f in full if f.uko_uri == slug}
    hits = index.nearest(vector(text), 1, RequestFilters())
    expect([h.fragment.uko_uri for h in hits] == [slug], f"nearest to {slug}'s own vector: {hits}")
    expect(abs(hits[0].similarity - 1) < 1e-5, f"similarity to itself is {hits[0].similarity}")
    docs = RequestFilters(paths=("docs/*",))
    found = {h.fragment.id for h in index.nearest(vector("budget"), ALL, docs)}
    wanted = {f.id for f in full if f.source.path == "docs/budget.md"}
    expect(found == wanted, f"in docs/* it finds {len(found)} of the {len(wanted)} texts there")
    query = vector("slug")
    whole = list(index.nearest(query, ALL, RequestFilters()))
    expect(len(whole) == len(full), f"it lists {len(whole)} of {len(full)} full texts")
    order = [(-h.similarity, h.fragment.id) for h in whole]
    expect(order == sorted(order), "not most similar first, ties by id")
    for limit in range(9):
        ids = [h.fragment.id for h in index.nearest(query, limit, RequestFilters())]
        expect(ids == [h.fragment.id for h in whole[:limit]], f"limit {limit}: {ids}")
    stranger = full[0].model_copy(update={"content_hash": "0" * 64})
    similar = index.similarities(query, [*full, stranger])
    expect(similar[-1] is None, f"a text it has no vector of has similarity {similar[-1]}")
    for fragment, got in zip(full, similar[:-1], strict=True):
        want = float(vector(fragment.text) @ query)
        expect(got is not None and abs(got - want) < 1e-5, f"{fragment.id}: {got}, not {want}")
    held = index.vectors([*full, stranger])
    expect(held[-1] is None, "a text it has no vector of has a vector")
    for fragment, kept in zip(full, held[:-1], strict=True):
        alike = None if kept is None else float(kept @ vector(fragment.text))
        expect(alike is not None and abs(alike - 1) < 1e-5, f"{fragment.id}'s vector: {alike}")


def one_space_at_a_time(subject: Subject) -> None:
    subject.index()
    subject.add_vectors()
    subject.add_vectors("other-8", 1)
    expect(subject.store.vector_index(SPACE) is None, f"vectors of {SPACE!r} are still kept")
    _vectors_held(subject, "other-8", 1)


def changed_texts_need_vectors(subject: Subject) -> None:
    subject.index()
    subject.add_vectors()
    subject.write(
        "app/util.py", 'def slug(text: str) -> str:\n    return text.lower().replace(" ", "_")\n'
    )
    subject.index()
    subject.vectors()  # the vectors are still there to search
    full = subject.full_texts()
    changed = {f.content_hash for f in full if f.source.path == "app/util.py"}
    others = {f.content_hash for f in full if f.source.path != "app/util.py"}
    lacking = {digest for digest, _ in subject.lacking()}
    expect(lacking == changed - others, f"{len(lacking)} lacking, {len(changed)} changed")


# -- memory and its scope ------------------------------------------------------------------

_SEEN_BY: list[tuple[str | None, str | None, list[str]]] = [
    ("s-a", None, ["a1", "g1"]),
    ("s-b", None, ["b1", "g1"]),
    ("s-b", "u-1", ["b1", "g1", "u1"]),
    (None, None, ["g1"]),
]


def _keep(subject: Subject, items: Sequence[MemoryItem]) -> list[ContextFragment]:
    """Keep the items; their fragments, as each item's own scope sees them."""
    subject.pipeline.remember_all(items)
    found: dict[str, ContextFragment] = {}
    for item in items:
        owner = {"session": "session", "user": "user"}.get(item.scope.value)
        filters = RequestFilters(
            session=item.owner if owner == "session" else None,
            user=item.owner if owner == "user" else None,
        )
        found.update(
            (f.uko_uri, f) for f in subject.full_texts(filters) if f.source.kind == "memory"
        )
    return [found[uri] for uri in sorted(found)]


def _memory_seen(
    subject: Subject,
    query: str,
    kept: Sequence[ContextFragment],
    rows: Sequence[tuple[str | None, str | None, list[str]]],
) -> None:
    """Every read of a request of each row's session and user sees only the row's memory."""
    uris = [f.uko_uri for f in kept]
    for session, user, wanted in rows:
        scope = RequestScope(session=session, user=user)
        filters = RequestFilters(session=session, user=user)
        text = subject.text(scope)
        seen = {"search": memory_ids(h.fragment for h in text.search(query, ALL, filters))}
        offered = subject.store.backends(scope)
        if offered.timeline is not None:
            seen["timeline"] = memory_ids(offered.timeline.recent(ALL, filters))
            seen["timeline after"] = memory_ids(offered.timeline.after(EPOCH, ALL, filters))
        if offered.sessions is not None:
            seen["recent memory"] = memory_ids(offered.sessions.recent_memory(ALL, filters))
            seen["named"] = memory_ids(offered.sessions.named(uris, ALL, filters))
        index = subject.store.vector_index(SPACE, scope)
        if index is not None:
            found: set[str] = set()
            for fragment in kept:
                hits = index.nearest(vector(fragment.text), ALL, filters)
                found.update(memory_ids(h.fragment for h in hits))
            seen["vector search"] = sorted(found)
            held = index.vectors(kept)
            seen["vectors"] = memory_ids(
                f for f, v in zip(kept, held, strict=True) if v is not None
            )
            scored = index.similarities(vector("zebra"), kept)
            seen["similarities"] = memory_ids(
                f for f, score in zip(kept, scored, strict=True) if score is not None
            )
        for read_by, ids in seen.items():
            expect(
                ids == sorted(wanted), f"{read_by} for session {session!r}, user {user!r} saw {ids}"
            )


def _one_result_in_scope(subject: Subject, kept: Sequence[ContextFragment]) -> None:
    """A search within 1 result as session s-b finds b1 or g1, never hidden memory."""
    filters, scope = RequestFilters(session="s-b"), RequestScope(session="s-b")
    hits = subject.text(scope).search("zebra", 1, filters)
    found = memory_ids(h.fragment for h in hits)
    expect(found in (["b1"], ["g1"]), f"the one hit of session s-b is {found}")
    index = subject.store.vector_index(SPACE, scope)
    if index is not None:
        for fragment in kept:
            (hit,) = index.nearest(vector(fragment.text), 1, filters)
            found = memory_ids([hit.fragment])
            expect(found in (["b1"], ["g1"], []), f"the nearest of session s-b is {found}")


def memory_reaches_only_its_scope(subject: Subject) -> None:
    subject.index()
    kept = _keep(
        subject,
        memory_items(
            [
                ("a1", "The zebra keeps the ledger", "session", "s-a", "2024-03-04T12:00:00+00:00"),
                ("b1", "The zebra hides the ledger", "session", "s-b", "2024-03-05T12:00:00+00:00"),
                ("u1", "The zebra audits the ledger", "user", "u-1", "2024-03-06T12:00:00+00:00"),
                ("g1", "The zebra owns the ledger", "global", "", "2024-03-07T12:00:00+00:00"),
            ]
        ),
    )
    subject.add_vectors()
    _memory_seen(subject, "zebra ledger", kept, _SEEN_BY)
    _one_result_in_scope(subject, kept)
    # More of another session's items, each outranking both, kept after those searches: a
    # store that remembers what is hidden must not remember it from the former state.
    more = _keep(
        subject,
        memory_items(
            (
                f"a{n}",
                f"Zebra, zebra: the zebra zebra {n}",
                "session",
                "s-a",
                f"2024-03-{6 + n:02}T12:00:00+00:00",
            )
            for n in range(2, 11)
        ),
    )
    kept = sorted({f.uko_uri: f for f in [*kept, *more]}.values(), key=lambda f: f.uko_uri)
    _one_result_in_scope(subject, kept)
    uris = [f.uko_uri for f in kept]
    for session, user, wanted in (
        ("s-a", None, ["a1", "a10", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "g1"]),
        ("s-b", "u-1", ["b1", "g1", "u1"]),
        (None, None, ["g1"]),
    ):
        lookup = subject.lookup(RequestScope(session=session, user=user))
        filters = RequestFilters(session=session, user=user)
        counted = lookup.token_counts(kept, TOKENIZER, filters)
        seen = {
            "variants": memory_ids(f for uri in uris for f in lookup.variants(uri, filters)),
            "variants_many": memory_ids(
                f for found in lookup.variants_many(uris, filters).values() for f in found
            ),
            "token_counts": memory_ids(f for f in kept if f.content_hash in counted),
            "variants in the view's scope": memory_ids(
                f for uri in uris for f in lookup.variants(uri)
            ),
            # A strategy that asks for another session's memory is not given it.
            "variants asked for session s-a": memory_ids(
                f for uri in uris for f in lookup.variants(uri, RequestFilters(session="s-a"))
            ),
        }
        # Asked by a view of another scope, filters naming s-a narrow to global memory.
        wanted_asked = wanted if session == "s-a" else ["g1"]
        for read_by, ids in seen.items():
            expected = wanted_asked if read_by == "variants asked for session s-a" else wanted
            expect(
                ids == sorted(expected),
                f"{read_by} for session {session!r}, user {user!r} saw {ids}",
            )


def _keyword_scores(subject: Subject, session: str, query: str) -> dict[str, float]:
    """The scores a request of `session` is given for `query`, by its search and `scores`."""
    text = subject.text(RequestScope(session=session))
    hits = text.search(query, ALL, RequestFilters(session=session))
    found = {hit.fragment.id: hit.score for hit in hits}
    scored = text.scores(query, [hit.fragment for hit in hits])
    found.update((f"scores:{h.fragment.id}", s) for h, s in zip(hits, scored, strict=True))
    return found


def other_memory_changes_no_score(subject: Subject) -> None:
    subject.index()
    _keep(
        subject,
        memory_items(
            [
                (
                    "b1",
                    "The token budget of the ledger",
                    "session",
                    "s-b",
                    "2024-03-04T12:00:00+00:00",
                )
            ]
        ),
    )
    queries = ("token budget ledger", 'budget "the token budget"')
    noted = [_keyword_scores(subject, "s-b", query) for query in queries]
    expect(all(noted), "a query of session s-b finds nothing to score")
    _keep(
        subject,
        memory_items(
            [
                (
                    "a1",
                    "The ledger budget: token budget, token budget",
                    "session",
                    "s-a",
                    "2024-03-05T12:00:00+00:00",
                ),
                (
                    "a2",
                    "Budget the ledger tokens, the token budget again",
                    "session",
                    "s-a",
                    "2024-03-06T12:00:00+00:00",
                ),
                ("u1", "My ledger of the token budget", "user", "u-1", "2024-03-07T12:00:00+00:00"),
            ]
        ),
    )
    now = [_keyword_scores(subject, "s-b", query) for query in queries]
    expect(now == noted, "another scope's memory changed the keyword scores session s-b is given")


def _coverage_of(subject: Subject, session: str) -> tuple[int, int]:
    found = subject.vectors(RequestScope(session=session)).coverage()
    return found.embedded, found.total


def other_memory_changes_no_vector_count(subject: Subject) -> None:
    subject.index()
    _keep(
        subject,
        memory_items(
            [("b1", "The zebra hides the ledger", "session", "s-b", "2024-03-04T12:00:00+00:00")]
        ),
    )
    subject.add_vectors()
    noted = _coverage_of(subject, "s-b")
    # Another scope's notes, one of them b1's very text: without vectors, then with.
    _keep(
        subject,
        memory_items(
            [
                ("a1", "The zebra keeps the ledger", "session", "s-a", "2024-03-05T12:00:00+00:00"),
                ("a2", "The zebra hides the ledger", "session", "s-a", "2024-03-04T12:00:00+00:00"),
                ("u1", "The zebra audits the ledger", "user", "u-1", "2024-03-07T12:00:00+00:00"),
            ]
        ),
    )
    for step in ("kept without vectors", "given vectors"):
        now = _coverage_of(subject, "s-b")
        expect(
            now == noted,
            f"another scope's memory, {step}, changed what session s-b is told of vectors:"
            f" {now[0]} of {now[1]} texts, not {noted[0]} of {noted[1]}",
        )
        subject.add_vectors()
    # Session s-a sees its two texts and not b1, though a2 has b1's text.
    theirs = _coverage_of(subject, "s-a")
    expect(theirs == (noted[0] + 1, noted[1] + 1), f"session s-a is told {theirs}")


def memory_is_not_a_file(subject: Subject) -> None:
    subject.index()
    kept = _keep(
        subject,
        memory_items(
            [("a1", "The zebra keeps the ledger", "session", "s-a", "2024-03-04T12:00:00+00:00")]
        ),
    )
    subject.index()
    subject.pipeline.forget(subject.project / "app")
    stored = sorted(subject.stored_files())
    expect(stored == ["docs/budget.md"], f"files() gives {stored}")
    _memory_seen(subject, "zebra ledger", kept, [("s-a", None, ["a1"])])
    subject.pipeline.forget_memory(session="s-a")
    _memory_seen(subject, "zebra ledger", kept, [("s-a", None, [])])
    held = subject.variants_held()
    stats = subject.store.stats()
    expect(
        (stats.files, stats.fragments, subject.lookup().count()) == (1, held, held),
        f"stats() counts {stats.files} files and {stats.fragments} fragments; expected 1 file"
        f" and the {held} its lookups hold",
    )


# -- pins and sessions ---------------------------------------------------------------------


def _pinned(subject: Subject, wanted: list[str], kinds: tuple[str, ...] = ()) -> None:
    found = [f.uko_uri for f in subject.sessions().pinned(ALL, RequestFilters(kinds=kinds))]
    expect(
        found == wanted, f"the pinned items{' of kinds ' + str(kinds) if kinds else ''} are {found}"
    )


def _pin(subject: Subject, *targets: str) -> None:
    with subject.store.writer() as writer:
        for target in targets:
            writer.pin(target)


def pinned_items_in_path_order(subject: Subject) -> None:
    subject.index()
    subject.sessions()  # an optional capability: the check needs it
    leftovers = "uko://doc/docs/budget.md#leftovers"
    main, util = "uko://code/app/main.py", "uko://code/app/util.py"
    util_nodes = [f"{util}#module", util, f"{util}#slug", f"{util}#title"]
    _pin(subject, "app/*.py", leftovers)
    _pinned(subject, [f"{main}#module", main, f"{main}#run", *util_nodes, leftovers])
    _pinned(subject, [f"{main}#run", f"{util}#slug", f"{util}#title"], ("function",))
    with subject.store.writer() as writer:
        expect(writer.unpin("app/*.py"), "unpin() says a pinned target was not pinned")
    _pinned(subject, [leftovers])
    _pin(subject, "app/util.py", leftovers)
    _pinned(subject, [*util_nodes, leftovers])
    (subject.project / "app/util.py").unlink()
    subject.index()
    _pinned(subject, [leftovers])


def session_log_keeps_latest_first(subject: Subject) -> None:
    subject.index()
    run, slug = "uko://code/app/main.py#run", "uko://code/app/util.py#slug"
    title, leftovers = "uko://code/app/util.py#title", "uko://doc/docs/budget.md#leftovers"
    for session, assemblies in (
        ("s-1", [[run], [slug, title], [leftovers], [run]]),
        ("s-2", [[leftovers]]),
    ):
        sessions = subject.sessions(RequestScope(session=session))
        for uris in assemblies:
            sessions.record_use(uris)
    for session, limit, wanted in (
        ("s-1", ALL, [run, leftovers, slug, title]),
        ("s-1", 3, [run, leftovers, slug]),
        ("s-2", ALL, [leftovers]),
        (None, ALL, []),
    ):
        sessions = subject.sessions(RequestScope(session=session))
        found = [f.uko_uri for f in sessions.recently_used(limit, RequestFilters())]
        expect(found == wanted, f"the {limit} most recently used of {session!r} are {found}")


CHECKS: list[tuple[str, Callable[[Subject], None]]] = [
    (
        "vectors are added a batch at a time for every full text that lacks one",
        vectors_added_a_batch_at_a_time,
    ),
    (
        "the nearest texts come most similar first, within the filters and the limit, and"
        " each text's vector is the one it was given",
        nearest_within_filters_and_limit,
    ),
    ("a writer for another space drops the old vectors", one_space_at_a_time),
    ("a changed file needs vectors for its changed texts only", changed_texts_need_vectors),
    (
        "memory reaches only the requests its scope allows, whatever is asked",
        memory_reaches_only_its_scope,
    ),
    (
        "another scope's memory changes no keyword score a request is given",
        other_memory_changes_no_score,
    ),
    (
        "another scope's memory changes no count of the texts with vectors a request is told",
        other_memory_changes_no_vector_count,
    ),
    (
        "memory is not a file: files and counts leave it out, and indexing again keeps it",
        memory_is_not_a_file,
    ),
    (
        "pinned and named items are full texts in path order, within the filters",
        pinned_items_in_path_order,
    ),
    (
        "the session log keeps each session's latest assemblies, latest first",
        session_log_keeps_latest_first,
    ),
]
