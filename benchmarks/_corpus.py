"""A deterministic synthetic corpus for the benchmarks, and the indexed stores built from it.

Sizes are counted in **full-text fragments**: one chunk of a file (a markdown heading
section or a top-level Python definition) is stored as one depth-9 row (full text, the
only rows in the FTS index) plus one depth-0 row (a one-line listing). "100k fragments"
therefore means 100,000 depth-9 chunks, i.e. 200,000 rows in the store. Files hold
`CHUNKS_PER_FILE` chunks each, 70 % markdown and 30 % Python.

Text is drawn from a fixed vocabulary with a seeded generator and Zipf-like word
frequencies, so that the fixed queries below hit common, middling and rare words the way
real queries do, and every run indexes byte-identical files.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from contextpipe import Pipeline

SEED = 20241122
CHUNKS_PER_FILE = 10
FILES_PER_DIR = 100
BUDGET = 4000

#: Set by the nox `bench` session (CI), which runs each benchmark once to show it works:
#: the benchmarks then spend less time on repetitions and skip the 100k store, whose
#: building and reading took several minutes of CI's 45.
QUICK = os.environ.get("CONTEXTPIPE_BENCH_QUICK", "") not in ("", "0")
#: The corpus sizes built, and the largest, which the targets (at 100k) are measured on.
SIZES = (1_000, 10_000) if QUICK else (1_000, 10_000, 100_000)
LARGEST = SIZES[-1]
#: The sizes latency is measured at: 1k stores answer in too little time to tell apart.
LATENCY_SIZES = tuple(size for size in SIZES if size >= 10_000)

# Ordered from most to least frequent: the position of a word is its Zipf rank.
VOCABULARY = tuple(
    dict.fromkeys(
        """
    data value request token budget context result file function model query index error
    cache user config test string list time node store text strategy fragment plugin server
    client response update default check source path line number read write build event
    type handler score rank batch stream buffer queue thread process task worker job
    schedule retry timeout deadline limit size count length offset window block chunk page
    table column row record field schema key map set graph edge vertex tree parent child
    split merge join filter sort search match pattern regex parse format render output
    input message prompt answer document section heading paragraph summary outline listing
    allocator executor fusion packing renderer tokenizer encoder decoder embedding vector
    similarity distance cosine jaccard overlap duplicate diversity relevance weight quality
    confidence floor cap share pool leftover reserve provenance citation reason report
    status log trace metric counter gauge histogram latency throughput percentile sample
    connection session transaction commit rollback lock mutex semaphore channel socket
    protocol header payload frame packet route endpoint service gateway proxy balancer
    cluster shard replica leader follower election consensus quorum snapshot journal
    compaction migration version release deploy rollout canary feature flag toggle option
    argument parameter variable constant module package library dependency import export
    interface protocol adapter bridge facade factory builder visitor observer iterator
    generator coroutine future promise callback hook signal slot trigger listener dispatcher
    parser lexer grammar syntax semantic compiler interpreter bytecode register stack heap
    memory allocation garbage collector reference pointer address alignment padding
    encryption signature certificate credential permission role policy audit quota tenant
    account billing invoice payment customer order product catalog inventory warehouse
    shipment delivery address region zone datacenter network bandwidth packet firewall
    image video audio codec bitrate resolution pixel color palette gradient shader texture
    mesh polygon vertex camera light shadow reflection animation timeline keyframe sprite
    sensor device firmware driver kernel interrupt scheduler priority affinity core socket
    benchmark profile regression baseline variance median outlier warmup iteration round
    notebook experiment dataset label annotation training validation epoch gradient loss
    optimizer learning momentum dropout attention transformer layer neuron activation
    invalidation eviction expiry staleness freshness consistency durability availability
    partition tolerance backpressure throttling debounce jitter backoff circuit breaker
    idempotent retryable transient permanent fatal recoverable graceful degraded healthy
    """.split()
    )
)

_STOPWORDS = "the a of to and in is for on with by from as that this it be are can when".split()

#: A few fixed queries of different shapes: a question, keywords, an identifier, a phrase.
QUERIES = (
    "how is the token budget split between strategies?",
    "retry backoff jitter circuit breaker",
    "BudgetAllocator floor tokens",
    '"cache invalidation" eviction policy',
)


def _weights(count: int) -> list[float]:
    return [1.0 / (rank + 8) for rank in range(count)]


class _Writer:
    """Seeded text in the corpus's style."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._cumulative = list(_cumulative(_weights(len(VOCABULARY))))

    def words(self, count: int) -> list[str]:
        return self.rng.choices(VOCABULARY, cum_weights=self._cumulative, k=count)

    def sentence(self) -> str:
        rng = self.rng
        words = self.words(rng.randint(6, 14))
        for _ in range(rng.randint(1, 3)):
            words.insert(rng.randrange(len(words)), rng.choice(_STOPWORDS))
        return " ".join(words).capitalize() + "."

    def identifier(self, parts: int) -> str:
        return "_".join(self.words(parts))

    def camel(self, parts: int) -> str:
        return "".join(word.capitalize() for word in self.words(parts))

    def markdown_section(self, level: int) -> str:
        rng = self.rng
        title = " ".join(self.words(rng.randint(2, 5))).capitalize()
        paragraphs = [
            " ".join(self.sentence() for _ in range(rng.randint(2, 5)))
            for _ in range(rng.randint(1, 3))
        ]
        if rng.random() < 0.3:
            paragraphs.append("\n".join(f"- {self.sentence()}" for _ in range(rng.randint(2, 4))))
        return "#" * level + f" {title}\n\n" + "\n\n".join(paragraphs) + "\n"

    def python_definition(self) -> str:
        rng = self.rng
        if rng.random() < 0.25:
            name = self.camel(rng.randint(2, 3))
            method = self.identifier(2)
            arg = self.words(1)[0] + "_arg"
            return (
                f"class {name}:\n"
                f'    """{self.sentence()}"""\n\n'
                f"    def {method}(self, {arg}):\n"
                f'        """{self.sentence()}"""\n'
                f"        self.{self.identifier(2)} = {arg}\n"
                f"        return self.{self.identifier(2)}({arg})\n"
            )
        name = self.identifier(rng.randint(2, 3))
        first, second = self.words(1)[0] + "_in", self.words(1)[0] + "_out"
        local = self.identifier(2)
        return (
            f"def {name}({first}, {second}=None):\n"
            f'    """{self.sentence()} {self.sentence()}"""\n'
            f"    {local} = {self.identifier(2)}({first}, {rng.randint(1, 999)})\n"
            f"    if {local} > {second}:\n"
            f"        return {self.camel(2)}({local}).{self.identifier(2)}()\n"
            f"    return {second}\n"
        )


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def write_corpus(folder: Path, fragments: int, seed: int = SEED) -> int:
    """Write files holding exactly `fragments` chunks under `folder`; return the file count."""
    writer = _Writer(seed)
    files = 0
    remaining = fragments
    while remaining > 0:
        chunks = min(CHUNKS_PER_FILE, remaining)
        directory = folder / f"part{files // FILES_PER_DIR:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        # Python definitions separated by two blank lines, no module-level code: one chunk
        # each. Markdown starts with a heading: no preamble, one chunk per heading.
        if writer.rng.random() < 0.3:
            body = "\n\n".join(writer.python_definition() for _ in range(chunks))
            name = f"mod{files:06d}.py"
        else:
            body = "\n".join(
                writer.markdown_section(1 if i == 0 else writer.rng.choice((2, 2, 3)))
                for i in range(chunks)
            )
            name = f"doc{files:06d}.md"
        (directory / name).write_text(body, encoding="utf-8")
        files += 1
        remaining -= chunks
    return files


def latency_queries(count: int, seed: int = SEED + 1) -> list[str]:
    """`count` deterministic queries: the fixed ones, then generated questions and keywords
    mixing frequent and rare vocabulary words.
    """
    rng = random.Random(seed)
    queries = list(QUERIES)
    while len(queries) < count:
        words = [rng.choice(VOCABULARY[: 60 + 40 * rng.randint(0, 10)]) for _ in range(4)]
        if rng.random() < 0.5:
            queries.append(f"how does the {words[0]} {words[1]} handle {words[2]} {words[3]}?")
        else:
            queries.append(" ".join(words[: rng.randint(2, 4)]))
    return queries[:count]


def build_store(root: Path, fragments: int) -> dict[str, float]:
    """Generate a corpus of `fragments` chunks under `root/corpus` and index it into
    `root/.contextpipe`; return the timings and counts.
    """
    started = time.perf_counter()
    files = write_corpus(root / "corpus", fragments)
    generated = time.perf_counter() - started
    pipeline = Pipeline.open(project_dir=root)
    try:
        started = time.perf_counter()
        (summary,) = pipeline.index([root / "corpus"])
        indexed = time.perf_counter() - started
        rows = pipeline.stats().fragments
        searchable = pipeline.stats().searchable
    finally:
        pipeline.close()
    # Each generated chunk is one searchable node; module-level code adds a few more.
    if searchable < fragments:
        raise RuntimeError(f"expected {fragments} searchable fragments, got {searchable}")
    return {
        "files": files,
        "rows": rows,
        "searchable": searchable,
        "fragments_written": summary.fragments_written,
        "generate_s": round(generated, 2),
        "index_s": round(indexed, 2),
    }


def build_corpora() -> dict[int, str]:
    """asv `setup_cache`: one indexed project per size. Under asv the working directory is
    the run's cache folder (a fresh temporary folder asv deletes after the run), so the
    corpora go there; called from anywhere else they go to a new temporary folder, never
    into the repository.
    """
    cwd = Path.cwd().resolve()
    inside_temp = cwd.is_relative_to(Path(tempfile.gettempdir()).resolve())
    base = Path(tempfile.mkdtemp(prefix="contextpipe-bench-", dir=cwd if inside_temp else None))
    (base / "measurements").mkdir()
    projects: dict[int, str] = {}
    for size in SIZES:
        root = base / f"n{size}"
        stats = build_store(root, size)
        (base / "measurements" / f"index-{size}.json").write_text(json.dumps(stats))
        projects[size] = str(root)
    return projects


# Generating and indexing all three sizes takes about 65 s on an idle 2-core machine (the
# 100k store alone about 50 s: 12 s to write the files, 38 s to index them), and up to
# twice that on a busy one.
build_corpora.timeout = 1200  # type: ignore[attr-defined]


def memoized(
    projects: dict[int, str], name: str, compute: Callable[[], dict[str, float]]
) -> dict[str, float]:
    """`compute()`, once per asv run: the result is kept as JSON next to the corpora (in
    asv's setup_cache folder), so that the several `track_*` of one measurement (p50 and
    p95, or the stages of one assembly) report the same samples instead of each process
    measuring again. `build_corpora` records its index builds there too.
    """
    path = Path(next(iter(projects.values()))).parent / "measurements" / f"{name}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    result = compute()
    path.write_text(json.dumps(result), encoding="utf-8")
    return result


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    """p50, p95 and max of latency samples in milliseconds (inclusive method)."""
    cuts = statistics.quantiles(samples_ms, n=100, method="inclusive")
    return {
        "n": len(samples_ms),
        "p50": round(cuts[49], 2),
        "p95": round(cuts[94], 2),
        "max": round(max(samples_ms), 2),
    }
