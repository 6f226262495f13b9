"""Steps that damage the store's database the ways disks and people do, and check what
every reader and the indexer say about it.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

from behave import given, step, then, when
from behave.runner import Context
from testkit import pipeline, run_contextpipe

from contextpipe import Pipeline, StoreError


def _reopen(context: Context) -> None:
    """Forget the scenario's pipeline, as a new command would start afresh."""
    if context.pipeline is not None:
        context.pipeline.close()
        context.pipeline = None


def _cut(context: Context, size: Callable[[int], int]) -> None:
    database = pipeline(context).store.database
    _reopen(context)
    os.truncate(database, size(database.stat().st_size))


def _sql(context: Context, statement: str) -> None:
    database = pipeline(context).store.database
    _reopen(context)
    with closing(sqlite3.connect(database)) as connection:
        connection.execute(statement)
        connection.commit()


_DAMAGE: dict[str, Callable[[Context], None]] = {
    "cut to its first page": lambda context: _cut(context, lambda _: 4096),
    "cut in half": lambda context: _cut(context, lambda size: size // 2),
    "missing its fragments table": lambda context: _sql(context, "DROP TABLE fragments"),
    "missing its search index": lambda context: _sql(context, "DROP TABLE fts"),
    "missing its keyword index": lambda context: _sql(context, "DROP TABLE text_postings"),
    "missing its generation": lambda context: _sql(
        context, "DELETE FROM meta WHERE key = 'generation'"
    ),
    "left with a keyword index entry cut short": lambda context: _sql(
        context, "UPDATE text_segments SET terms = substr(terms, 1, 3)"
    ),
}


@when("the store's database is left as an interrupted first index leaves it")
def interrupted_first_index(context: Context) -> None:
    """The schema's transaction never committed: an empty database in WAL mode."""
    store = pipeline(context).store
    _reopen(context)
    for path in store.directory.iterdir():
        path.unlink()
    with closing(sqlite3.connect(store.database)) as connection:
        connection.execute("PRAGMA journal_mode = WAL")


@step("the store's database is {damage}")
def damage_store(context: Context, damage: str) -> None:
    store = pipeline(context).store
    if damage == "overwritten with garbage":
        _reopen(context)
        store.database.write_bytes(bytes(range(256)) * 64)
    else:
        _DAMAGE[damage](context)
    context.damaged_bytes = store.database.read_bytes()


def _fails(action: Callable[[], Any], words: str) -> None:
    try:
        action()
    except StoreError as exc:
        message = str(exc)
        assert words in message, f"the message is {message!r}"
        assert "\n" not in message, f"not one line: {message!r}"
        return
    raise AssertionError("it did not fail")


@then('the assembly error says "{words}"')
def assembly_error_says(context: Context, words: str) -> None:
    assert words in str(context.error), str(context.error)


@then('loading the graph fails with StoreError saying "{words}"')
def graph_fails(context: Context, words: str) -> None:
    _fails(lambda: pipeline(context).graph().networkx, words)


@then('counting the graph fails with StoreError saying "{words}"')
def stats_fail(context: Context, words: str) -> None:
    _fails(lambda: pipeline(context).graph().stats(), words)


@then('warming the pipeline up fails with StoreError saying "{words}"')
def warm_up_fails(context: Context, words: str) -> None:
    _fails(lambda: pipeline(context).warm_up(), words)


@then('indexing the project fails with StoreError saying "{words}"')
def index_fails(context: Context, words: str) -> None:
    _fails(lambda: pipeline(context).index([context.project]), words)


@when("the store is moved aside")
def move_aside(context: Context) -> None:
    moved = pipeline(context).move_store_aside()
    context.moved = None if moved is None else Path(moved)


@then('it was moved to a sibling folder named like "{example}"')
def moved_to(context: Context, example: str) -> None:
    moved = context.moved
    store = pipeline(context).store.directory
    pattern = re.sub(r"\d", r"\\d", re.escape(example))
    assert moved.parent == store.parent and re.fullmatch(pattern, moved.name), moved
    assert not store.exists(), f"{store} is still there"


@then("the moved folder holds the damaged database, byte for byte")
def moved_intact(context: Context) -> None:
    moved = context.moved / pipeline(context).store.database.name
    assert moved.read_bytes() == context.damaged_bytes


@given('the pipeline has asked for "{query}" from {threads:d} threads at once')
def asked_from_threads(context: Context, query: str, threads: int) -> None:
    running = pipeline(context)
    with ThreadPoolExecutor(threads) as pool:  # each thread opens its own connection
        for context_text in pool.map(
            lambda _: running.assemble(query, budget=400).text, range(threads)
        ):
            assert context_text, "an empty context"


@when("another process reads the store and exits")
def another_process_reads(context: Context) -> None:
    database = pipeline(context).store.database
    reader = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
        " c.execute('SELECT count(*) FROM fragments').fetchall(); c.close()"
    )
    subprocess.run([sys.executable, "-c", reader, str(database)], check=True, timeout=60)


@then("the store's write-ahead log is still there")
def log_still_there(context: Context) -> None:
    database = pipeline(context).store.database
    log = database.with_name(database.name + "-wal")
    assert log.exists(), f"{log} was deleted while this process still uses it"


@then("a memory item the pipeline remembers now is in its next context")
def remembers_after(context: Context) -> None:
    running = pipeline(context)
    running.remember("The lighthouse keeper logs the storm at dawn.")
    found = running.assemble("lighthouse keeper storm", budget=400)
    assert "The lighthouse keeper logs the storm at dawn." in found.text, (
        f"not in the context: {found.text!r}"
    )


@when("another pipeline moves the store aside and indexes the project anew")
def another_pipeline_rebuilds(context: Context) -> None:
    other = Pipeline.open(
        project_dir=context.project,
        overrides=dict(context.overrides),
        environ=dict(context.environ),
    )
    try:
        assert other.move_store_aside() is not None, "there was no store to move aside"
        other.index([context.project])
    finally:
        other.close()


# -- damage inside pages ---------------------------------------------------------------------

_PAGE_SIZE = 4096

_WORDS = (
    "ledger invoice parcel harbour lantern meadow copper quarry saddle thimble orchard"
    " beacon cinder falcon glacier hammock juniper kettle marble nectar oyster pebble"
    " quiver ribbon saffron tundra umber velvet walnut yonder zephyr anchor bramble"
).split()


@given("a project of {count:d} generated modules is indexed")
def generated_project(context: Context, count: int) -> None:
    """Without vectors (see the next step)."""
    _reopen(context)  # the project's config is read when the pipeline opens
    (context.project / "config.toml").write_text("[embedding]\nenabled = false\n")
    generated_modules(context, count)


@given("a project of {count:d} generated modules is indexed and embedded with wordllama")
def generated_project_embedded(context: Context, count: int) -> None:
    _reopen(context)
    (context.project / "config.toml").write_text('[embedding]\nmodel = "wordllama"\n')
    generated_modules(context, count)
    pipeline(context).embed()


def generated_modules(context: Context, count: int) -> None:
    """Modules of functions that call each other, with docstrings of words drawn from a
    seeded generator: enough rows for every table to span many pages; indexed.
    """
    rng = random.Random(count)
    for module in range(count):
        lines = [f'"""Module {module}: {" ".join(rng.choices(_WORDS, k=40))}."""', ""]
        for function in range(12):
            callee = f"f{module}_{(function + 1) % 12}"
            lines += [
                f"def f{module}_{function}(value):",
                f'    """{" ".join(rng.choices(_WORDS, k=60))}."""',
                f"    return {callee}(value) if value else {rng.randint(0, 999)}",
                "",
            ]
        path = context.project / "src" / f"module_{module}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
    pipeline(context).index([context.project])


def _inner_pages(database: Path, name: str) -> list[int]:
    """The pages of table or index `name` that no cheap check reads: not its root, nor
    its first or last leaf (in b-tree order), but its other leaves and overflow pages.
    """
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute(
            "SELECT pageno, pagetype, path FROM dbstat WHERE name = ? ORDER BY path", (name,)
        ).fetchall()
    leaves = [page for page, kind, _ in rows if kind == "leaf"]
    inner = [
        page
        for page, kind, path in rows
        if path != "/" and kind in ("leaf", "overflow") and page not in (leaves[0], leaves[-1])
    ]
    assert inner, f"{name} has no page inside it: {rows}"
    return inner


@when("a page inside {name} of the {database} database is overwritten (seed {seed:d})")
def overwrite_page(context: Context, name: str, database: str, seed: int) -> None:
    """Random bytes over one page of `name` (a table or an index) that the cheap checks do
    not read, chosen with `seed`, as a disk that writes a sector wrongly leaves it.
    """
    store = pipeline(context).store
    path = store.directory / f"{database}.sqlite3"
    _reopen(context)
    rng = random.Random(seed)
    page = rng.choice(_inner_pages(path, name))
    with path.open("r+b") as file:
        file.seek((page - 1) * _PAGE_SIZE)
        context.overwritten = (path, page, file.read(_PAGE_SIZE))
        file.seek((page - 1) * _PAGE_SIZE)
        file.write(rng.randbytes(_PAGE_SIZE))
    context.damaged_bytes = store.database.read_bytes()


@when('the bytes of the stored texts holding "{word}" are replaced with bytes that are not UTF-8')
def texts_not_utf8(context: Context, word: str) -> None:
    """A page overwritten inside text cells, its structure whole: the bytes SQLite reads
    back are no text Python can decode.
    """
    path = pipeline(context).store.database
    _reopen(context)
    with closing(sqlite3.connect(path)) as connection:
        changed = connection.execute(
            "UPDATE fragments SET text = CAST(X'6c6564ff676572' AS TEXT) WHERE instr(text, ?)",
            (word,),
        ).rowcount
        connection.commit()
    assert changed, f"no stored text holds {word!r}"


@when("the overwritten page is written back as it was")
def page_written_back(context: Context) -> None:
    path, page, original = context.overwritten
    _reopen(context)
    with path.open("r+b") as file:
        file.seek((page - 1) * _PAGE_SIZE)
        file.write(original)


@when("the bytes of one stored vector are replaced with random ones (seed {seed:d})")
def vector_bytes_replaced(context: Context, seed: int) -> None:
    """Random bytes over one vector, the database's pages left whole: damage SQLite cannot
    see, as a disk that flips bits inside a record leaves it.
    """
    path = pipeline(context).store.directory / "vectors.sqlite3"
    _reopen(context)
    rng = random.Random(seed)
    with closing(sqlite3.connect(path)) as connection:
        hashes = [row[0] for row in connection.execute("SELECT hash FROM vectors ORDER BY hash")]
        digest = rng.choice(hashes)
        (size,) = connection.execute(
            "SELECT length(vector) FROM vectors WHERE hash = ?", (digest,)
        ).fetchone()
        connection.execute(
            "UPDATE vectors SET vector = ? WHERE hash = ?", (rng.randbytes(size), digest)
        )
        connection.commit()


@then('checking the whole store fails with StoreError saying "{words}"')
def full_check_fails(context: Context, words: str) -> None:
    _fails(lambda: pipeline(context).verify_store(), words)


@then('the assembly of "{query}" fails with StoreError saying "{words}"')
def assembly_fails(context: Context, query: str, words: str) -> None:
    _fails(lambda: pipeline(context).assemble(query, budget=300), words)


@then('checking the whole store says "{words}"')
def full_check_says(context: Context, words: str) -> None:
    said = pipeline(context).verify_store()
    assert words in said and "\n" not in said, said


@then('every command fails in one line saying "{words}"')
def every_command_fails(context: Context, words: str) -> None:
    """The real `contextpipe` commands a user runs next, each in a process of its own."""
    _reopen(context)
    for args in (
        ["graph", "stats"],
        ["query", "ledger invoice harbour", "--budget", "300"],
        ["index", "src"],
        ["remember", "a note", "--session", "s1"],
    ):
        done = run_contextpipe(context, args)
        said = done.stderr.strip()
        assert done.returncode == 1, f"{args} exited {done.returncode}: {done.stdout}{said}"
        assert words in said and "\n" not in said, f"{args} said: {said}"
