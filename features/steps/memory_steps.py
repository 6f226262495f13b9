"""Steps for memory items: remembering, importing conversations, scope, forgetting."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from behave import given, then, when
from behave.runner import Context
from testkit import assemble, pipeline, result

from contextpipe import (
    ContextpipeError,
    ContextRequest,
    RequestFilters,
    RequestScope,
    StrategySelection,
)


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _cell(row: object, key: str) -> str | None:
    value = row[key].strip() if key in row.headings else ""  # type: ignore[attr-defined]
    return value or None


def _keep_error(context: Context, call: Callable[[], object]) -> None:
    """Run `call`, keeping the `ContextpipeError` it raises (if any) for the Then steps."""
    context.error = None
    try:
        call()
    except ContextpipeError as exc:
        context.error = exc


@given("the memory items:")
def memory_items(context: Context) -> None:
    for row in context.table:
        pipeline(context).remember(
            row["text"],
            session=_cell(row, "session"),
            user=_cell(row, "user"),
            at=_moment(row["at"]),
            item_id=_cell(row, "id"),
            speaker=_cell(row, "speaker") or "",
        )


def _memory_texts(context: Context) -> list[str]:
    """The memory items in the last context, as remembered (without time and speaker)."""
    texts: list[str] = []
    for fragment in result(context).fragments:
        if fragment.source.kind == "memory":
            said = fragment.text.split("] ", 1)[1]
            texts.append(said.split(": ", 1)[1] if ": " in said else said)
    return texts


@then(
    'a request about "{query}" sees exactly this memory, with each strategy alone and with'
    " the default mix:"
)
def sees_exactly(context: Context, query: str) -> None:
    names = [None, *(registered.strategy.name for registered in pipeline(context).strategies)]
    for row in context.table:
        expected = sorted(text.strip() for text in row["memory"].split(",") if text.strip())
        for name in names:
            selection = None if name is None else {name: StrategySelection()}
            assemble(
                context,
                query,
                budget=2000,
                session=_cell(row, "session"),
                user=_cell(row, "user"),
                strategies=selection,
            )
            seen = sorted(_memory_texts(context))
            unexpected = set(seen) - set(expected)
            assert not unexpected, f"{name or 'mix'} {dict(row.items())}: leaked {unexpected}"
            if name in (None, "simple-keyword"):  # it finds every item the request may see
                assert seen == expected, f"{name or 'mix'} {dict(row.items())}: saw {seen}"


@when(
    'I ask for "{query}" within {budget:d} tokens as session "{session}" with filters of'
    ' session "{other}"'
)
def ask_conflicting(context: Context, query: str, budget: int, session: str, other: str) -> None:
    assemble(context, query, budget=budget, session=session, filters=RequestFilters(session=other))


@when('I ask for "{query}" within {budget:d} tokens as session "{session}"')
def ask_as_session(context: Context, query: str, budget: int, session: str) -> None:
    assemble(context, query, budget=budget, session=session)


@when('I ask as of "{moment}" for "{query}" within {budget:d} tokens as user "{user}"')
def ask_as_user_as_of(context: Context, moment: str, query: str, budget: int, user: str) -> None:
    assemble(context, query, budget=budget, user=user, as_of=datetime.fromisoformat(moment))


@when('I ask for "{query}" within {budget:d} tokens as user "{user}"')
def ask_as_user(context: Context, query: str, budget: int, user: str) -> None:
    assemble(context, query, budget=budget, user=user)


@when('the folder "{folder}" is forgotten')
def folder_forgotten(context: Context, folder: str) -> None:
    pipeline(context).forget(context.project / folder)


@then('a request about "{query}" as session "{session}" holds the memory "{text}"')
def holds_memory(context: Context, query: str, session: str, text: str) -> None:
    assemble(context, query, budget=1000, session=session)
    assert _memory_texts(context) == [text], _memory_texts(context)


@then('a request about "{query}" as session "{session}" holds no memory')
def holds_no_memory(context: Context, query: str, session: str) -> None:
    assemble(context, query, budget=1000, session=session)
    assert _memory_texts(context) == [], _memory_texts(context)


@then("the store counts {count:d} files")
def store_counts_files(context: Context, count: int) -> None:
    assert pipeline(context).stats().files == count, pipeline(context).stats()


@when('the memory of session "{session}" is forgotten')
def forget_session(context: Context, session: str) -> None:
    context.forgotten = pipeline(context).forget_memory(session=session)


@when("memory is forgotten without naming a session, a user or global memory")
def forget_nothing_named(context: Context) -> None:
    _keep_error(context, lambda: pipeline(context).forget_memory())


@when('a memory item is remembered for "{session}" at "{moment}"')
def remember_at(context: Context, session: str, moment: str) -> None:
    at = datetime.fromisoformat(moment)
    _keep_error(context, lambda: pipeline(context).remember("a note", session=session, at=at))


@when('a request of session "{session}" is made at "{moment}"')
def request_at(context: Context, session: str, moment: str) -> None:
    as_of = datetime.fromisoformat(moment)
    _keep_error(
        context, lambda: pipeline(context).request("a", budget=300, session=session, as_of=as_of)
    )


@then('it fails saying "{words}"')
def fails_saying(context: Context, words: str) -> None:
    assert context.error is not None, "it did not fail"
    assert words in str(context.error), str(context.error)


@then('the context holds a fragment of node "{uri}" reading "{text}", modified at "{moment}"')
def holds_node_reading(context: Context, uri: str, text: str, moment: str) -> None:
    found = [f for f in result(context).fragments if f.uko_uri == uri]
    assert found, [f.uko_uri for f in result(context).fragments]
    assert found[0].text == text, found[0].text
    assert found[0].source.modified_at == datetime.fromisoformat(moment), found[0].source


@then('the graph knows nothing of "{uri}": no node, no edge, no count')
def graph_knows_nothing(context: Context, uri: str) -> None:
    graph = pipeline(context).graph()
    assert graph.node(uri) is None, graph.node(uri)
    assert not graph.neighbours(uri), graph.neighbours(uri)
    assert "memory" not in graph.stats().nodes, graph.stats().nodes


@then("every memory item is stored under its node URI")
def stored_under_uris(context: Context) -> None:
    database = pipeline(context).store.database
    with closing(sqlite3.connect(database)) as connection:
        misplaced = connection.execute(
            "SELECT memory.path, fragments.uri FROM memory JOIN fragments"
            " ON fragments.path = memory.path WHERE memory.path != fragments.uri"
        ).fetchall()
        orphans = connection.execute(
            "SELECT path FROM files WHERE path LIKE 'memory:%'"
            " UNION SELECT path FROM fragments WHERE path LIKE 'memory:%'"
            " UNION SELECT path FROM nodes WHERE path LIKE 'memory:%'"
        ).fetchall()
    assert not misplaced and not orphans, (misplaced, orphans)


@then('the newest memory of session "{session}" reads "{text}"')
def newest_memory(context: Context, session: str, text: str) -> None:
    sessions = pipeline(context).store.backends(RequestScope(session=session)).sessions
    assert sessions is not None
    newest = sessions.recent_memory(1, RequestFilters(session=session))
    assert [f.text for f in newest] == [text], [f.text for f in newest]


@then('the context holds a memory text reading "{text}"')
def memory_text_reading(context: Context, text: str) -> None:
    texts = [f.text for f in result(context).fragments if f.source.kind == "memory"]
    assert text in texts, texts


@then("the context holds {count:d} memory fragment")
def memory_fragment_count(context: Context, count: int) -> None:
    assert len(_memory_texts(context)) == count, _memory_texts(context)


@given('a conversation file "{name}" with the turns:')
def conversation_turns(context: Context, name: str) -> None:
    turns = [{key: row[key] for key in row.headings} for row in context.table]
    (context.project / name).write_text(json.dumps(turns), encoding="utf-8")


@given('a conversation file "{name}" reading:')
def conversation_reading(context: Context, name: str) -> None:
    (context.project / name).write_text(context.text, encoding="utf-8")


@when('the conversation "{name}" is imported for the user "{user}"')
def import_conversation(context: Context, name: str, user: str) -> None:
    _keep_error(
        context, lambda: pipeline(context).import_conversation(context.project / name, user=user)
    )


@then('the memory in the context is from the nodes "{uris}" in some order')
def memory_nodes(context: Context, uris: str) -> None:
    found = sorted(f.uko_uri for f in result(context).fragments if f.source.kind == "memory")
    assert found == sorted(u.strip() for u in uris.split(",")), found


@when('session "{session}" asks the navigator alone for "{query}" focused on "{focus}"')
def navigator_focused_as(context: Context, session: str, query: str, focus: str) -> None:
    request = ContextRequest(
        query=query,
        budget=1000,
        session=session,
        focus=(focus,),
        strategies={"breadth-depth-navigator": StrategySelection()},
    )
    assemble(context, request)


@then("the context holds no memory")
def context_holds_no_memory(context: Context) -> None:
    assert _memory_texts(context) == [], _memory_texts(context)


@when("the project is rebuilt")
def project_rebuilt(context: Context) -> None:
    """As `contextpipe index --rebuild` does: move the store aside, carry its memory over,
    index anew.
    """
    rebuilding = pipeline(context)
    moved = rebuilding.move_store_aside()
    assert moved is not None, "there was no store to move aside"
    context.moved = Path(moved)
    context.rebuild_said = rebuilding.carry_memory(moved).summary(moved)
    context.summaries = rebuilding.index([context.project])


@then('the rebuild said "{words}"')
def rebuild_said(context: Context, words: str) -> None:
    said = context.rebuild_said
    assert said is not None and words in said, f"it said {said!r}"
    assert "\n" not in said, f"not one line: {said!r}"


@then('the new store pins "{path}" and remembers what session "{session}" was given')
def pins_and_log_kept(context: Context, path: str, session: str) -> None:
    sessions = pipeline(context).store.backends(RequestScope(session=session)).sessions
    assert sessions is not None
    pinned = {f.source.path for f in sessions.pinned(100, RequestFilters())}
    assert pinned == {path}, f"it pins {pinned}"
    used = sessions.recently_used(100, RequestFilters(session=session))
    assert used, f"it remembers nothing given to {session}"
