"""Steps for indexing a folder into the embedded store and searching it."""

from __future__ import annotations

import os
import signal as signals
import subprocess
import sys
from unittest import mock

from behave import given, step, then, when
from behave.runner import Context
from testkit import assemble, index_project, index_summary, pipeline, report, result, write_files

from contextpipe import ContextpipeError, ContextRequest, RequestFilters, Skipped, get_tokenizer
from contextpipe.stores.embedded import backend as embedded


@given('a binary file "{path}"')
def binary_file(context: Context, path: str) -> None:
    target = context.project / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR budget zebras \x00\xff")


@given('the folder "{folder}" is indexed')
def folder_indexed(context: Context, folder: str) -> None:
    index_project(context, folder)


@when('I index the folder "{folder}"')
def index_folder(context: Context, folder: str) -> None:
    index_project(context, folder)


@when('I change "{path}" to:')
def change_file(context: Context, path: str) -> None:
    target = context.project / path
    before = target.stat()
    target.write_text(context.text + "\n", encoding="utf-8")
    # Make the change visible even on file systems with coarse timestamps.
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


@when('I delete "{path}"')
def delete_file(context: Context, path: str) -> None:
    (context.project / path).unlink()


@step('a file "{path}" is added')
def file_added(context: Context, path: str) -> None:
    write_files(context.project, {path: "# Last\n\nThe last file of the folder.\n"})


@when('indexing "{folder}" is interrupted by an error when it reaches "{path}"')
def interrupted_index(context: Context, folder: str, path: str) -> None:
    class Interrupting:
        def started(self, root: str, total: int) -> None:
            pass

        def file(self, relpath: str) -> None:
            if relpath == path:
                raise RuntimeError(f"interrupted at {relpath}")

    context.index_error = None
    try:
        pipeline(context).index([context.project / folder], Interrupting())
    except RuntimeError as exc:
        context.index_error = exc


@when('indexing "{folder}" fails while writing the full-text entries of "{path}"')
def failing_index(context: Context, folder: str, path: str) -> None:
    real = embedded.search_columns

    def failing(title: str, text: str) -> tuple[str, str, str]:
        # Called for a file's full-text rows after its row, nodes and edges were written;
        # the title names the file's path.
        if path in title:
            raise OSError(f"disk full while writing {path}")
        return real(title, text)

    context.index_error = None
    try:
        with mock.patch.object(embedded, "search_columns", failing):
            pipeline(context).index([context.project / folder])
    except OSError as exc:
        context.index_error = exc


@then("every stored fragment's token count is its {name} count")
def token_counts_are(context: Context, name: str) -> None:
    count = get_tokenizer(name).count
    store = pipeline(context).store
    wrong = [
        fragment.id
        for node in store.nodes()
        for fragment in store.variants(node.uri)
        if fragment.token_count != count(fragment.text)
    ]
    assert not wrong, f"{len(wrong)} fragments counted otherwise, e.g. {wrong[:3]}"


@then('the index run failed with "{message}"')
def index_failed(context: Context, message: str) -> None:
    assert context.index_error is not None, "the index run did not fail"
    assert str(context.index_error) == message, str(context.index_error)


@then('the index run saw {seen:d} files, indexed {indexed:d} and skipped {skipped:d} as "{reason}"')
def index_summary_seen(
    context: Context, seen: int, indexed: int, skipped: int, reason: str
) -> None:
    summary = index_summary(context)
    assert (summary.files_seen, summary.indexed) == (seen, indexed), summary
    assert dict(summary.skipped) == {reason: skipped}, summary


@then(
    "the index run indexed {indexed:d} files, found {unchanged:d} unchanged and removed {removed:d}"
)
def index_summary_changes(context: Context, indexed: int, unchanged: int, removed: int) -> None:
    summary = index_summary(context)
    assert (summary.indexed, summary.unchanged, summary.removed) == (
        indexed,
        unchanged,
        removed,
    ), summary


@then("the store holds these nodes:")
def store_nodes(context: Context) -> None:
    context.nodes = []
    for row in context.table:
        variants = pipeline(context).store.variants(row["uri"])
        assert variants, f"the store has no fragment for {row['uri']}"
        full = variants[0]
        source = full.source
        lines = f"{source.start_line}-{source.end_line}"
        assert (full.detail_depth, source.kind, lines) == (9, row["kind"], row["lines"]), (
            f"{row['uri']}: depth {full.detail_depth}, kind {source.kind}, lines {lines}"
        )
        context.nodes.append(full)


@then('the full text of "{uri}" is lines {start:d}-{end:d} of "{path}"')
def full_text_is_lines(context: Context, uri: str, start: int, end: int, path: str) -> None:
    lines = (context.project / path).read_text(encoding="utf-8").splitlines()
    full = pipeline(context).store.variants(uri)[0]
    assert full.text == "\n".join(lines[start - 1 : end]), full.text
    assert full.source.path == path, full.source


@then('each node also has a one-line listing, like "{example}"')
def listings(context: Context, example: str) -> None:
    texts: list[str] = []
    for full in context.nodes:
        variants = pipeline(context).store.variants(full.uko_uri)
        listing = [v for v in variants if v.detail_depth == 0]
        assert len(listing) == 1, f"{full.uko_uri} has depths {[v.detail_depth for v in variants]}"
        source = full.source
        location = f"({source.path}:{source.start_line}-{source.end_line})"
        assert "\n" not in listing[0].text and listing[0].text.endswith(location), listing[0].text
        texts.append(listing[0].text)
    assert example in texts, texts


@then('nothing from "{first}", "{second}" or "{third}" is in the store')
def nothing_from(context: Context, first: str, second: str, third: str) -> None:
    for path in (first, second, third):
        _no_fragment_of(context, path)


def _no_fragment_of(context: Context, path: str) -> None:
    hits = pipeline(context).store.search(
        "budget zebras ignored draft secret png paragraph", 50, RequestFilters(paths=(path,))
    )
    assert not hits, f"the store has fragments of {path}: {[h.fragment.uko_uri for h in hits]}"


@then('the store has no fragment of "{path}"')
def no_fragment_of(context: Context, path: str) -> None:
    _no_fragment_of(context, path)
    for node in ("paragraph-1", "paragraph-2"):
        assert not pipeline(context).store.variants(f"uko://doc/{path}#{node}")


@then('searching for "{words}" finds "{uri}"')
def search_finds(context: Context, words: str, uri: str) -> None:
    hits = pipeline(context).store.search(words, 10, RequestFilters())
    found = [hit.fragment.uko_uri for hit in hits]
    assert uri in found, f"searching for {words!r} finds {found}"


@then('searching for "{words}" finds nothing')
def search_finds_nothing(context: Context, words: str) -> None:
    hits = pipeline(context).store.search(words, 10, RequestFilters())
    assert not hits, f"searching for {words!r} finds {[h.fragment.uko_uri for h in hits]}"


@step("the store holds {count:d} fragments")
def store_count(context: Context, count: int) -> None:
    assert pipeline(context).store.count() == count, pipeline(context).store.count()


@then('the first fragment is "{uri}" with lines {start:d}-{end:d}')
def first_fragment(context: Context, uri: str, start: int, end: int) -> None:
    fragments = result(context).fragments
    assert fragments, "the context is empty"
    first = fragments[0]
    found = (first.uko_uri, first.source.start_line, first.source.end_line)
    assert found == (uri, start, end), f"the first fragment is {found}"


@then('the report of "{name}" is not an error')
def report_not_error(context: Context, name: str) -> None:
    strategy_report = report(context, name)
    assert strategy_report.status in ("ok", "skipped"), strategy_report


@given('a file "{path}" of {size:d} bytes')
def file_of_size(context: Context, path: str, size: int) -> None:
    write_files(context.project, {path: ("budget " * size)[:size]})


@given('a file "{path}" encoded in latin-1')
def latin1_file(context: Context, path: str) -> None:
    target = context.project / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes("Déjà vu: the budget, naïvely split.\n".encode("latin-1"))


@then('the index run saw {seen:d} files and skipped them as "{first_reason}" and "{second_reason}"')
def skipped_both(context: Context, seen: int, first_reason: str, second_reason: str) -> None:
    summary = index_summary(context)
    assert (summary.files_seen, summary.indexed) == (seen, 0), summary
    assert dict(summary.skipped) == {first_reason: 1, second_reason: 1}, summary


@when('I touch "{path}"')
def touch(context: Context, path: str) -> None:
    target = context.project / path
    before = target.stat()
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


@when('"{path}" becomes binary')
def becomes_binary(context: Context, path: str) -> None:
    target = context.project / path
    before = target.stat()
    target.write_bytes(b"\x00\x01\x02 zebras \x00")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))


@then('indexing fails with ContextpipeError saying "{message}"')
def indexing_fails(context: Context, message: str) -> None:
    assert isinstance(context.index_error, ContextpipeError), context.index_error
    assert message in str(context.index_error), str(context.index_error)
    assert "\n" not in str(context.index_error)


@when('I ask for "{query}" within {budget:d} tokens, only from paths "{paths}" and kinds "{kinds}"')
def ask_filtered(context: Context, query: str, budget: int, paths: str, kinds: str) -> None:
    filters = RequestFilters(paths=(paths,), kinds=(kinds,))
    assemble(context, ContextRequest(query=query, budget=budget, filters=filters))


@then('every fragment in the context comes from "{path}" and is a {kind}')
def all_from(context: Context, path: str, kind: str) -> None:
    found = {(f.source.path, f.source.kind) for f in result(context).fragments}
    assert found <= {(path, kind)}, found


@when('"{folder}" is indexed while "{path}" {change} between the walk and its reading')
def index_while_changing(context: Context, folder: str, path: str, change: str) -> None:
    """The change happens when the run is told how many files the walk found: after the
    walk, before any file is read (deterministic, where a real edit would race the run).
    """
    target = context.project / path

    def act() -> None:
        before = target.stat()
        if change == "vanishes":
            target.unlink()
        elif change == "changes":
            target.write_text("The first paragraph now mentions okapis.\n", encoding="utf-8")
            os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 2_000_000_000))
        else:
            assert change == "becomes a folder", change
            target.unlink()
            target.mkdir()

    class ChangingAfterTheWalk:
        def started(self, root: str, total: int) -> None:
            act()

        def file(self, relpath: str) -> None:
            pass

    context.index_error = None
    try:
        (context.summary,) = pipeline(context).index(
            [context.project / folder], ChangingAfterTheWalk()
        )
    except ContextpipeError as exc:
        context.index_error = exc


@then('the index run skipped "{path}" as "{reason}" and indexed {indexed:d} files')
def skipped_as(context: Context, path: str, reason: str, indexed: int) -> None:
    summary = index_summary(context)
    assert Skipped(path, reason) in summary.skipped_files, summary.skipped_files
    assert summary.indexed == indexed, summary


_SCRIPT = """\
import os
from pathlib import Path

with Path("runs.log").open("a") as runs:
    runs.write(f"{{os.getpid()}}\\n")

from contextpipe import Pipeline, configure_logging


def index():
    configure_logging("info")
    (summary,) = Pipeline.open().index(["{folder}"])
    print(f"indexed {{summary.indexed}}")


{call}
"""


@given('a folder "{folder}" of {count:d} markdown files, {megabytes:f} MB in all: {why}')
def big_folder(context: Context, folder: str, count: int, megabytes: float, why: str) -> None:
    words = "budget token strategy packer allocator fusion zebra giraffe".split()
    size = int(megabytes * 1_000_000) // count
    for number in range(count):
        line = " ".join(words[(number + i) % len(words)] for i in range(12)) + "\n"
        body = f"# Part {number}\n\n" + line * (size // len(line))
        write_files(context.project, {f"{folder}/part-{number:02d}.md": body})


@given('a script "{name}" that notes each run of its module code, then indexes "{folder}", {guard}')
def indexing_script(context: Context, name: str, folder: str, guard: str) -> None:
    guarded = guard.startswith("under")
    call = 'if __name__ == "__main__":\n    index()' if guarded else "index()"
    (context.project / name).write_text(_SCRIPT.format(folder=folder, call=call))
    context.script = name


_KILLING_SCRIPT = """\
import os
import signal

from contextpipe import Pipeline


class EndWhenWriting:
    def started(self, root, total):
        pass

    def file(self, path):
        os.kill(os.getpid(), signal.{signal})


if __name__ == "__main__":
    Pipeline.open().index(["{folder}"], EndWhenWriting())
"""


@given(
    'a script "{name}" that indexes "{folder}" and sends itself {signal} when it writes the'
    " first parsed file"
)
def killing_script(context: Context, name: str, folder: str, signal: str) -> None:
    # Every file of a first index is parsed, so the progress hears of the first one when
    # the indexer writes what a worker parsed: while the workers run.
    (context.project / name).write_text(_KILLING_SCRIPT.format(folder=folder, signal=signal))
    context.script = name


@when("I run the script")
def run_script(context: Context) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    context.done = subprocess.run(
        [sys.executable, context.script],
        cwd=context.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@then("it succeeded, its module code ran once, and worker processes parsed the files")
def script_ran_once(context: Context) -> None:
    done = context.done
    runs = (context.project / "runs.log").read_text().split()
    assert len(runs) == 1, f"its module code ran {len(runs)} times; stderr: {done.stderr[-2000:]}"
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "parsing in worker processes" in done.stderr, done.stderr[-2000:]


@then('the store holds the {count:d} files of "{folder}"')
def store_holds_count(context: Context, count: int, folder: str) -> None:
    assert f"indexed {count}" in context.done.stdout, context.done.stdout
    stored = {node.path for node in pipeline(context).store.nodes()}
    assert len({path for path in stored if path.startswith(f"{folder}/")}) == count, stored


@then("it was ended by {signal}, and once every process it started had ended, its stderr was empty")
def ended_quietly(context: Context, signal: str) -> None:
    # `subprocess.run` returns once every process holding the script's stderr has ended.
    done = context.done
    assert done.returncode == -signals.Signals[signal], f"exit {done.returncode}: {done.stderr}"
    assert done.stderr == "", done.stderr
