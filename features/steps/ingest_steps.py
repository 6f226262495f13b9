"""Steps for incremental indexing, the index summary, and where fragments came from (git
commits or file contents).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

from behave import given, step, then, when
from behave.runner import Context
from testkit import git, index_project, index_summary, pipeline, set_mtime, toml_value, write_files

from contextpipe import ContextFragment, RequestFilters
from contextpipe.ingest import indexer
from contextpipe.ingest.indexer import IndexSummary
from contextpipe.ingest.walk import SourceFile

#: Summary counts as a user names them.
_COUNTS: dict[str, Callable[[IndexSummary], int]] = {
    "files seen": lambda s: s.files_seen,
    "files indexed": lambda s: s.indexed,
    "files with syntax errors": lambda s: s.with_syntax_errors,
    "files unchanged": lambda s: s.unchanged,
    "files skipped": lambda s: len(s.skipped_files),
    "files removed": lambda s: s.removed,
    "nodes written": lambda s: s.nodes_written,
    "edges written": lambda s: s.edges_written,
    "fragments written": lambda s: s.fragments_written,
}


def _fragments_of(context: Context, path: str) -> list[ContextFragment]:
    store = pipeline(context).store
    fragments = [
        fragment
        for node in store.nodes()
        if node.path == path
        for fragment in store.variants(node.uri)
    ]
    assert fragments, f"the store has no fragment of {path}"
    return fragments


# -- indexing ----------------------------------------------------------------------------------


@when("I index the project")
def index_the_project(context: Context) -> None:
    index_project(context)


@contextmanager
def _watching(context: Context) -> Iterator[None]:
    """Record which project files are opened and whether git is asked, while indexing."""
    opened: list[Path] = []
    asked: list[tuple[Any, ...]] = []
    real_open, real_read, real_revisions = Path.open, indexer.read_source, indexer.git_revisions

    def watched_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(self))
        return real_open(self, *args, **kwargs)

    def watched_read(source: SourceFile) -> Any:
        opened.append(source.path)
        return real_read(source)

    def watched_revisions(*args: Any) -> Any:
        asked.append(args)
        return real_revisions(*args)

    with (
        mock.patch.object(Path, "open", watched_open),
        mock.patch.object(indexer, "read_source", watched_read),
        mock.patch.object(indexer, "git_revisions", watched_revisions),
    ):
        yield
    project = context.project.resolve()
    store = pipeline(context).store.directory.resolve()
    context.files_read = sorted(
        path.resolve().relative_to(project).as_posix()
        for path in opened
        if path.resolve().is_relative_to(project)
        and not path.resolve().is_relative_to(store)
        and path.name != ".gitignore"
    )
    context.git_asked = len(asked)


@when('the pipeline is reopened with the setting "{key}" at {value}')
def reopen_with(context: Context, key: str, value: str) -> None:
    if context.pipeline is not None:
        context.pipeline.close()
        context.pipeline = None
    context.overrides[key] = toml_value(value)


@when("I index the project again, watching what it reads")
def index_watching(context: Context) -> None:
    with _watching(context):
        index_project(context)


@then("it read no file and did not ask git")
def read_nothing(context: Context) -> None:
    assert context.files_read == [], context.files_read
    assert context.git_asked == 0, f"git was asked {context.git_asked} times"


@then("it asked git once")
def asked_git_once(context: Context) -> None:
    assert context.git_asked == 1, f"git was asked {context.git_asked} times"


@then('it read only "{path}"')
def read_only(context: Context, path: str) -> None:
    assert context.files_read == [path], context.files_read


@then("it read only these files:")
def read_only_these(context: Context) -> None:
    assert context.files_read == sorted(row["path"] for row in context.table), context.files_read


@when('I add a file "{path}" containing:')
def add_file(context: Context, path: str) -> None:
    write_files(context.project, {path: context.text + "\n"})


@then('nothing of "{path}" is left: no node, fragment, declared edge or search entry')
def nothing_left(context: Context, path: str) -> None:
    store = pipeline(context).store
    assert not [n.uri for n in store.nodes() if n.path == path], "nodes are left"
    assert not [e for e in store.edges() if e.path == path], "declared edges are left"
    hits = store.search(path.rsplit("/", 1)[-1], 50, RequestFilters(paths=(path,)))
    assert not hits, f"search finds {[h.fragment.uko_uri for h in hits]}"
    with closing(sqlite3.connect(store.database)) as connection:
        counts = [
            connection.execute(query, (path,)).fetchone()[0]
            for query in (
                "SELECT count(*) FROM fragments WHERE path = ?",
                "SELECT count(*) FROM files WHERE path = ?",
            )
        ]
        orphans = connection.execute(
            "SELECT count(*) FROM fts WHERE rowid NOT IN (SELECT rowid FROM fragments)"
        ).fetchone()[0]
    assert counts == [0, 0], f"fragments and files rows left: {counts}"
    assert orphans == 0, f"{orphans} full-text entries belong to no fragment"


@then('the full-text index finds "{word}" nowhere')
def fts_finds_nowhere(context: Context, word: str) -> None:
    store = pipeline(context).store
    with closing(sqlite3.connect(store.database)) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{word}"',)
        ).fetchone()
    assert count == 0, f"{count} full-text entries hold {word!r}"


# -- the summary -------------------------------------------------------------------------------


@then("the index summary counts:")
def summary_counts(context: Context) -> None:
    summary = index_summary(context)
    found = {row["what"]: _COUNTS[row["what"]](summary) for row in context.table}
    expected = {row["what"]: int(row["count"]) for row in context.table}
    assert found == expected, summary


@then("the index summary skipped:")
def summary_skipped(context: Context) -> None:
    summary = index_summary(context)
    expected = {row["reason"]: int(row["files"]) for row in context.table}
    assert dict(summary.skipped) == expected, summary


@then("the index summary skipped nothing")
def summary_skipped_nothing(context: Context) -> None:
    summary = index_summary(context)
    assert not summary.skipped, summary


@then("the index summary's nodes, edges and fragments are what the store holds")
def summary_matches_store(context: Context) -> None:
    summary = index_summary(context)
    store = pipeline(context).store
    found = (summary.nodes_written, summary.edges_written, summary.fragments_written)
    edges = sum(len(declared.sources) for declared in store.edges())
    held = (len(store.nodes()), edges, store.count())
    assert found == held, f"summary {found}, store {held}"


# -- time and provenance -----------------------------------------------------------------------


def _when(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None, f"{text}: give a time zone"
    return moment


@given("the project is a git repository")
def git_repository(context: Context) -> None:
    git(context.project, "init", "--quiet")
    context.commits = {}


@step('everything is committed on "{moment}"')
def commit_everything(context: Context, moment: str) -> None:
    git(context.project, "add", "--all")
    git(context.project, "commit", "--quiet", "-m", f"Changes of {moment}", when=_when(moment))
    context.commits[moment] = git(context.project, "rev-parse", "HEAD")


@given('a file last modified on "{moment}", "{path}", containing:')
def file_modified_on(context: Context, path: str, moment: str) -> None:
    write_files(context.project, {path: context.text + "\n"})
    set_mtime(context.project / path, _when(moment))


@step('"{path}" is changed on "{moment}" to:')
def change_on(context: Context, path: str, moment: str) -> None:
    write_files(context.project, {path: context.text + "\n"})
    set_mtime(context.project / path, _when(moment))


@then('every fragment of "{path}" says it was modified on "{moment}" by that commit')
def read_at_commit(context: Context, path: str, moment: str) -> None:
    commit = context.commits[moment]
    assert len(commit) == 40, commit
    for fragment in _fragments_of(context, path):
        found = (fragment.source.modified_at, fragment.metadata.get("read_at"))
        assert found == (_when(moment), f"commit:{commit}"), f"{fragment.id}: {found}"


@then(
    'every fragment of "{path}" says it was modified on "{moment}" and read with the sha256 '
    "of its content"
)
def read_at_content(context: Context, path: str, moment: str) -> None:
    digest = hashlib.sha256((context.project / path).read_bytes()).hexdigest()
    for fragment in _fragments_of(context, path):
        found = (fragment.source.modified_at, fragment.metadata.get("read_at"))
        assert found == (_when(moment), f"sha256:{digest}"), f"{fragment.id}: {found}"


@given("the project folder is not in a git repository")
def not_in_git(context: Context) -> None:
    for folder in (context.project, *context.project.parents):
        assert not (folder / ".git").exists(), f"{folder} is a git repository"
    assert "GIT_DIR" not in os.environ
