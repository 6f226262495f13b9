"""`index`: walk a folder, parse what changed into nodes, fragments and edges, count
tokens, and write it all in one transaction.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from ..logs import logger
from ..models import ContextFragment, DetailDepth, SourceRef, content_hash, fragment_id
from ..store.embedded import (
    EmbeddedStore,
    NewFragment,
    StoredEdge,
    StoredFile,
    StoredNode,
    StoreWriter,
)
from ..tokenizers import Tokenizer, get_tokenizer
from .history import Revision, git_revisions
from .nodes import FileNodes, Node, file_nodes
from .walk import SourceFile, walk_files

_BINARY_SNIFF_BYTES = 8192
# What the files table holds instead of a content hash for files it skipped.
_TOO_LARGE = "skipped:too-large"
_BINARY = "skipped:binary:"
_BINARY_REASON = "binary or not UTF-8"


@dataclass
class IndexSummary:
    """What one `index` run did."""

    root: str
    files_seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    fragments_written: int = 0
    nodes_written: int = 0
    edges_written: int = 0
    skipped: Counter[str] = field(default_factory=Counter[str])
    seconds: float = 0.0


class IndexProgress(Protocol):
    """Told how many files a run will look at, then of each file as it gets to it."""

    def started(self, root: str, total: int) -> None: ...

    def file(self, path: str) -> None: ...


@dataclass(frozen=True)
class IngestLimits:
    """What `index` reads and how it cuts it (from `[ingest]`)."""

    max_file_bytes: int
    max_chunk_lines: int
    exclude: tuple[str, ...] = ()


def index_folder(
    store: EmbeddedStore,
    root: Path,
    project_dir: Path,
    tokenizer: Tokenizer,
    limits: IngestLimits,
    progress: IndexProgress | None = None,
) -> IndexSummary:
    """Bring the store up to date with the files under `root`.

    Unchanged files (same size and mtime, or same content) are not read again; files that
    disappeared are removed with their nodes, fragments and edges. Everything is written
    in one transaction, so an interrupted run leaves the previous index as it was.
    """
    started = time.perf_counter()
    summary = IndexSummary(root=str(root))
    prefix = _prefix(root, project_dir)
    sources = list(walk_files(root, project_dir, limits.exclude, skip_dirs=[store.directory]))
    if progress is not None:
        progress.started(str(root), len(sources))
    with store.writer() as writer:
        # Token counts are stored per tokenizer: a new tokenizer means counting everything again.
        recount = writer.get_meta("tokenizer") not in (None, tokenizer.name)
        writer.set_meta("tokenizer", tokenizer.name)
        ingest = _FileIngest(writer, limits, summary, root, project_dir)
        known = writer.files(prefix)
        jobs: list[_Job] = []
        for source in sources:
            summary.files_seen += 1
            job = ingest.prepare(
                source,
                None if recount else known.get(source.relpath),
                indexed_before=source.relpath in known,
            )
            if job is not None:
                jobs.append(job)
            elif progress is not None:
                progress.file(source.relpath)
        for job, analysed in zip(jobs, _analyse_all(jobs, limits, tokenizer), strict=True):
            if progress is not None:
                progress.file(job.source.relpath)
            ingest.write(job, analysed)
        for path in sorted(set(known) - {source.relpath for source in sources}):
            writer.remove_file(path)
            summary.removed += 1
    summary.seconds = time.perf_counter() - started
    return summary


def _prefix(root: Path, project_dir: Path) -> str:
    root, project_dir = root.resolve(), project_dir.resolve()
    if root == project_dir:
        return ""
    if root.is_relative_to(project_dir):
        return root.relative_to(project_dir).as_posix() + "/"
    return root.as_posix() + "/"


class _FileIngest:
    """Indexes one file at a time into an open transaction."""

    def __init__(
        self,
        writer: StoreWriter,
        limits: IngestLimits,
        summary: IndexSummary,
        root: Path,
        project_dir: Path,
    ) -> None:
        self._writer = writer
        self._limits = limits
        self._summary = summary
        self._root = root
        self._project_dir = project_dir
        self._revisions: dict[str, Revision] | None = None

    def _revision(self, relpath: str) -> Revision | None:
        # git is asked only once something changed: a no-change run never starts it.
        if self._revisions is None:
            self._revisions = git_revisions(self._root, self._project_dir)
        return self._revisions.get(relpath)

    def prepare(
        self, source: SourceFile, stored: StoredFile | None, indexed_before: bool
    ) -> _Job | None:
        """Settle a file that needs no parsing (unchanged, skipped); else the job to parse."""
        summary = self._summary
        too_large = f"larger than {self._limits.max_file_bytes} bytes"
        if stored and (stored.size, stored.mtime_ns) == (source.size, source.mtime_ns):
            # Skipped files are remembered, so that the next run need not read them again.
            if stored.sha256.startswith(_BINARY):
                summary.skipped[_BINARY_REASON] += 1
                return None
            if stored.sha256 != _TOO_LARGE:
                summary.unchanged += 1
                return None
            if source.size > self._limits.max_file_bytes:
                summary.skipped[too_large] += 1
                return None
            stored = None  # the size limit was raised: index it now
        if source.size > self._limits.max_file_bytes:
            summary.skipped[too_large] += 1
            logger.warning("skipped", path=source.relpath, reason=too_large, bytes=source.size)
            marker = StoredFile(source.size, source.mtime_ns, _TOO_LARGE)
            self._writer.replace_file(
                source.relpath, marker, [], [], [], indexed_before=indexed_before
            )
            return None
        data = source.path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        current = StoredFile(source.size, source.mtime_ns, digest)
        if stored and stored.sha256 == digest:
            self._writer.touch_file(source.relpath, current)
            summary.unchanged += 1
            return None
        text = _decode(data)
        if text is None:
            summary.skipped[_BINARY_REASON] += 1
            marker = StoredFile(source.size, source.mtime_ns, f"{_BINARY}{digest}")
            self._writer.replace_file(
                source.relpath, marker, [], [], [], indexed_before=indexed_before
            )
            return None
        return _Job(source, current, text, indexed_before)

    def write(self, job: _Job, analysed: _Analysed) -> None:
        """Store a parsed file's nodes, edges and fragments."""
        summary, source, digest = self._summary, job.source, job.stored.sha256
        parsed = analysed.parsed
        if parsed.has_errors:
            summary.skipped["parsed with syntax errors (indexed anyway)"] += 1
        revision = self._revision(source.relpath)
        if revision is not None:
            modified, read_at = revision.committed_at, f"commit:{revision.commit}"
        else:
            modified = datetime.fromtimestamp(source.mtime_ns / 1e9, UTC)
            read_at = f"sha256:{digest}"
        fragments = list(self._fragments(source.relpath, analysed, modified, read_at))
        nodes = [
            StoredNode(n.uri, n.kind, n.name, source.relpath, n.start_line, n.end_line, n.parent)
            for n in parsed.nodes
        ]
        edges = [StoredEdge(s, kind, target, source.relpath) for s, kind, target in parsed.edges]
        self._writer.replace_file(
            source.relpath, job.stored, fragments, nodes, edges, indexed_before=job.indexed_before
        )
        summary.indexed += 1
        summary.fragments_written += len(fragments)
        summary.nodes_written += len(nodes)
        summary.edges_written += len(edges)

    def _fragments(
        self, path: str, analysed: _Analysed, modified: datetime, read_at: str
    ) -> Iterator[NewFragment]:
        parsed = analysed.parsed
        for node, counts in zip(parsed.nodes, analysed.token_counts, strict=True):
            source = SourceRef(
                uri=node.uri,
                path=path,
                start_line=node.start_line,
                end_line=node.end_line,
                kind=node.kind,
                modified_at=modified,
            )
            for (depth, text), tokens in zip(_by_depth(node), counts, strict=True):
                detail: DetailDepth = 9 if depth == 9 else 4 if depth == 4 else 0
                fragment = ContextFragment.model_construct(  # every field is built here
                    id=fragment_id(node.uri, detail),
                    uko_uri=node.uri,
                    detail_depth=detail,
                    text=text,
                    token_count=tokens,
                    source=source,
                    content_hash=content_hash(text),
                    metadata={"read_at": read_at},
                )
                yield NewFragment(
                    fragment,
                    node.name,
                    parsed.language,
                    node.search_text if detail == 9 else None,
                )


@dataclass(frozen=True)
class _Job:
    """A file to parse: what was read of it."""

    source: SourceFile
    stored: StoredFile
    text: str
    indexed_before: bool


@dataclass(frozen=True)
class _Analysed:
    """A parsed file and the token count of each node's text at each depth."""

    parsed: FileNodes
    token_counts: list[list[int]]


def _by_depth(node: Node) -> list[tuple[int, str]]:
    return sorted(node.texts.items(), reverse=True)


def _analyse(relpath: str, text: str, max_lines: int, tokenizer_name: str) -> _Analysed:
    """Parse and count one file: pure, so it can run in a worker process."""
    parsed = file_nodes(relpath, text, max_lines)
    count = get_tokenizer(tokenizer_name).count
    return _Analysed(parsed, [[count(t) for _, t in _by_depth(node)] for node in parsed.nodes])


# Below this much text a pool costs more to start than it saves.
_POOL_MIN_BYTES = 4_000_000


def _analyse_all(
    jobs: list[_Job], limits: IngestLimits, tokenizer: Tokenizer
) -> Iterator[_Analysed]:
    """Parse and count every job, in order: in worker processes when there is a lot of it
    and more than one core (parsing and BPE counting are CPU-bound; the writer stays here).
    """
    arguments = [
        (job.source.relpath, job.text, limits.max_chunk_lines, tokenizer.name) for job in jobs
    ]
    workers = min(os.cpu_count() or 1, 4)
    if workers < 2 or sum(len(job.text) for job in jobs) < _POOL_MIN_BYTES:
        yield from (_analyse(*argument) for argument in arguments)
        return
    # forkserver: workers start clean, whatever threads (progress bars) this process runs.
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(_analyse, *zip(*arguments, strict=True), chunksize=8)


def _decode(data: bytes) -> str | None:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
