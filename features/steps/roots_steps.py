"""Steps for indexing several roots, forgetting one, indexing one file, and the folders an
index run does not walk. Files "outside the project" live in a sibling folder of the
project; in tables their stored names start with `<outside>/`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from behave import given, step, then, when
from behave.runner import Context
from testkit import index_project, index_summary, pipeline, write_files

from contextpipe import ContextpipeError, Pipeline
from contextpipe.stores.embedded._text_index import TextIndexWriter
from contextpipe.stores.embedded._text_layout import TEXT_TABLES, joined_identifiers


def _outside(context: Context) -> Path:
    return (context.tmp / "outside").resolve()


def _index_path(context: Context, path: Path) -> None:
    context.index_error = None
    try:
        (context.summary,) = pipeline(context).index([path])
    except ContextpipeError as exc:
        context.index_error = exc


@given('a file "{path}" outside the project containing:')
def file_outside(context: Context, path: str) -> None:
    write_files(_outside(context), {path: context.text + "\n"})


@step('"{folder}" outside the project is indexed')
@step('I index "{folder}" outside the project')
def index_outside(context: Context, folder: str) -> None:
    _index_path(context, _outside(context) / folder)


@step('I index the file "{path}"')
def index_file(context: Context, path: str) -> None:
    index_project(context, path)


@when('I delete "{path}" outside the project')
def delete_outside(context: Context, path: str) -> None:
    (_outside(context) / path).unlink()


@when('I delete the folder "{folder}"')
def delete_folder(context: Context, folder: str) -> None:
    shutil.rmtree(context.project / folder)


def _forget(context: Context, path: Path) -> None:
    context.forget_error = None
    try:
        context.forgotten = pipeline(context).forget(path)
    except ContextpipeError as exc:
        context.forget_error = exc


@when('I forget "{folder}" outside the project')
def forget_outside(context: Context, folder: str) -> None:
    _forget(context, _outside(context) / folder)


@when('I forget the folder "{folder}"')
def forget_folder(context: Context, folder: str) -> None:
    _forget(context, context.project / folder)


@then("it forgot {files:d} files and {fragments:d} fragments")
def forgot(context: Context, files: int, fragments: int) -> None:
    assert context.forget_error is None, f"forgetting failed: {context.forget_error}"
    found = (context.forgotten.files, context.forgotten.fragments)
    assert found == (files, fragments), context.forgotten


@then('forgetting fails with ContextpipeError saying "{message}"')
def forget_fails(context: Context, message: str) -> None:
    assert isinstance(context.forget_error, ContextpipeError), context.forget_error
    assert str(context.forget_error).endswith(message), str(context.forget_error)


@then("the store holds the files:")
def store_holds_files(context: Context) -> None:
    outside = _outside(context).as_posix()
    expected = sorted(row["path"].replace("<outside>", outside) for row in context.table)
    found = sorted({node.path for node in pipeline(context).store.nodes()})
    assert found == expected, f"the store holds {found}"


@given('"{folder}" is indexed into a store in the folder "{store}"')
def indexed_into_store(context: Context, folder: str, store: str) -> None:
    other = Pipeline.open(store=context.project / store, project_dir=context.project)
    try:
        other.index([context.project / folder])
    finally:
        other.close()


@then("the folders not walked are:")
def folders_not_walked(context: Context) -> None:
    found = [(item.path, item.reason) for item in index_summary(context).skipped_folders]
    moved = getattr(context, "moved", None)  # a store moved aside, named `<moved>`
    named = {"<moved>": moved.relative_to(context.project).as_posix()} if moved else {}
    expected = [(named.get(row["path"], row["path"]), row["reason"]) for row in context.table]
    assert found == expected, found


@then("no folder was left unwalked")
def no_folder_skipped(context: Context) -> None:
    assert not index_summary(context).skipped_folders, index_summary(context).skipped_folders


def _rewrite_store(context: Context, script: str) -> None:
    """Close the pipeline and run `script` on its store, as an older version would have
    written it.
    """
    database = pipeline(context).store.database
    context.pipeline.close()
    context.pipeline = None
    with closing(sqlite3.connect(database)) as connection:
        connection.executescript(script)


@given("the store is turned back into layout 12, as the previous version wrote it")
def layout_12(context: Context) -> None:
    """Layout 12 declared every name a definition uses as a bare symbol, whatever import
    or builtin reached it, and resolved it as one.
    """
    _rewrite_store(
        context,
        """
            UPDATE edges SET form = 'symbol', near = '' WHERE form IN ('local', 'member');
            UPDATE edges SET resolved = NULL;
            DELETE FROM meta WHERE key IN ('resolved_at', 'resolved_roots');
            DROP INDEX edges_by_name;
            CREATE INDEX edges_by_symbol ON edges(target) WHERE form = 'symbol';
            UPDATE meta SET value = '12' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 11, as the previous version wrote it")
def layout_11(context: Context) -> None:
    """Layout 11 kept memory under `memory:<scope>/<owner>/<id>`, nothing escaped."""
    layout_12(context)
    database = pipeline(context).store.database
    context.pipeline.close()
    context.pipeline = None
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("BEGIN")
        connection.execute("PRAGMA defer_foreign_keys = ON")
        items = connection.execute("SELECT path, scope, owner, id FROM memory").fetchall()
        moved = [
            (f"memory:{scope}/{'' if scope == 'global' else f'{owner}/'}{item_id}", path)
            for path, scope, owner, item_id in items
        ]
        for table in ("files", "fragments", "nodes", "memory"):
            connection.executemany(f"UPDATE {table} SET path = ? WHERE path = ?", moved)
        connection.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
        connection.commit()


@given("the store is turned back into layout 10, as the previous version wrote it")
def layout_10(context: Context) -> None:
    """Layout 10 held no joined snake_case identifiers in the title and words columns."""
    layout_11(context)
    database = pipeline(context).store.database
    context.pipeline.close()
    context.pipeline = None
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute("SELECT rowid, title, text, words FROM fts").fetchall()
        connection.executemany(
            "UPDATE fts SET title = ?, words = ? WHERE rowid = ?",
            [
                (_unjoined(title, title), _unjoined(words, text), rowid)
                for rowid, title, text, words in rows
            ],
        )
        # Its keyword index, too, as that version built it from these columns.
        for table in TEXT_TABLES:
            connection.execute(f"DELETE FROM {table}")
        TextIndexWriter(connection).index_existing()
        connection.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
        connection.commit()


def _unjoined(column: str, source: str) -> str:
    joined = joined_identifiers(source)
    assert column.endswith(f" {joined}"), (column, joined)
    return column.removesuffix(f" {joined}")


@given("the store is turned back into layout 9, as the previous version wrote it")
def layout_9(context: Context) -> None:
    """Layout 9 kept no resolved targets: every process resolved the graph itself."""
    layout_10(context)
    _rewrite_store(
        context,
        """
            DROP TABLE graph_changes;
            DROP INDEX nodes_by_definition;
            DROP INDEX file_nodes;
            DROP INDEX edges_by_symbol;
            DROP INDEX edges_unresolved;
            ALTER TABLE nodes DROP COLUMN defines;
            ALTER TABLE edges DROP COLUMN resolved;
            DELETE FROM meta WHERE key IN ('resolved_at', 'resolved_roots');
            UPDATE meta SET value = '9' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 8, as the previous version wrote it")
def layout_8(context: Context) -> None:
    """Layout 8 had no memory items, pins or access log."""
    layout_9(context)
    _rewrite_store(
        context,
        """
            DROP TABLE memory;
            DROP TABLE pins;
            DROP TABLE access_log;
            DROP INDEX fragments_by_time;
            UPDATE meta SET value = '8' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 7, as the previous version wrote it")
def layout_7(context: Context) -> None:
    """Layout 7 kept one row per declared edge, not one per file, type and target."""
    layout_8(context)
    _rewrite_store(
        context,
        """
            CREATE TABLE edges_7 (source TEXT NOT NULL, type TEXT NOT NULL, form TEXT NOT NULL,
                target TEXT NOT NULL, near TEXT NOT NULL,
                path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE);
            WITH RECURSIVE split(source, rest, type, form, target, near, path) AS (
                SELECT '', sources || char(31), type, form, target, near, path FROM edges
                UNION ALL
                SELECT substr(rest, 1, instr(rest, char(31)) - 1),
                    substr(rest, instr(rest, char(31)) + 1), type, form, target, near, path
                FROM split WHERE rest <> ''
            )
            INSERT INTO edges_7 SELECT source, type, form, target, near, path FROM split
                WHERE source <> '';
            DROP TABLE edges;
            ALTER TABLE edges_7 RENAME TO edges;
            CREATE INDEX edges_by_path ON edges(path);
            UPDATE meta SET value = '7' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 6, as the previous version wrote it")
def layout_6(context: Context) -> None:
    """Layout 6 had no index of full-text fragments by content hash."""
    layout_7(context)
    _rewrite_store(
        context,
        """
            DROP INDEX fragments_by_hash;
            UPDATE meta SET value = '6' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 5, as the previous version wrote it")
def layout_5(context: Context) -> None:
    """Layout 5 had no keyword index beside its FTS5 table."""
    layout_6(context)
    _rewrite_store(
        context,
        """
            DROP TABLE text_terms; DROP TABLE text_snapshot; DROP TABLE text_postings;
            DROP TABLE text_segments; DROP TABLE text_removed;
            DELETE FROM meta WHERE key IN ('text_floor', 'text_snapshot');
            UPDATE meta SET value = '5' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 4, as the previous version wrote it")
def layout_4(context: Context) -> None:
    """Layout 4 wrote skip reasons into `sha256` and edge targets as `form:name|name`."""
    layout_5(context)
    _rewrite_store(
        context,
        """
            UPDATE files SET sha256 = 'skipped:too-large' WHERE skipped = 'too-large';
            UPDATE files SET sha256 = 'skipped:binary:' || sha256 WHERE skipped = 'binary';
            ALTER TABLE files DROP COLUMN skipped;
            CREATE TABLE edges_4 (source TEXT NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL,
                path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE);
            INSERT INTO edges_4 SELECT source, type,
                CASE form WHEN 'node' THEN 'uri:' || target WHEN 'symbol' THEN 'sym:' || target
                    WHEN 'file' THEN 'path:' || replace(target, char(10), '|')
                    WHEN 'python' THEN 'py:' || replace(target, char(10), '|')
                    WHEN 'include' THEN 'include:' || near || '|' || target
                    ELSE form || ':' || target END,
                path FROM edges;
            DROP TABLE edges;
            ALTER TABLE edges_4 RENAME TO edges;
            CREATE INDEX edges_by_path ON edges(path);
            UPDATE meta SET value = '4' WHERE key = 'schema_version';
            """,
    )


@given("the store is turned back into layout 3, as the previous version wrote it")
def layout_3(context: Context) -> None:
    """Layout 3 had no per-file tokenizer: one `tokenizer` entry in meta held it."""
    layout_4(context)
    _rewrite_store(
        context,
        """
            ALTER TABLE files DROP COLUMN tokenizer;
            DELETE FROM meta WHERE key <> 'schema_version';
            UPDATE meta SET value = '3' WHERE key = 'schema_version';
            INSERT INTO meta(key, value) VALUES ('tokenizer', 'o200k_base');
            """,
    )


@given('a FIFO "{path}" that no process writes to')
def fifo(context: Context, path: str) -> None:
    target = context.project / path
    target.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(target)


@then("the project has no store")
def no_store(context: Context) -> None:
    assert not (context.project / ".contextpipe").exists(), "a store was made"
