"""`index`: walk a root (a folder, or one file), parse what changed into nodes, fragments
and edges, count tokens, and write it file by file.

Each file is written whole in one transaction (its row, nodes, fragments, full-text rows
and edges), and the run commits at least every `commit_seconds`. So an interrupted run
leaves every file at its old or its new state, queries during a run see each file old or
new, and the next run redoes only what was not committed: a committed file has the size,
mtime and tokenizer the store remembers, which is what makes a file "unchanged".

A root owns the stored files at or under it (see `paths`): a run adds and updates those and
removes those that vanished from under it, and never touches another root's files.
`forget_root` removes a root's files on request.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from ..config import IngestSettings
from ..contract.records import EdgeRecord, NewFragment, NodeRecord, SkipReason, StoredFile
from ..contract.store import IndexWriter, Store
from ..core.errors import ContextpipeError
from ..core.logs import logger
from ..core.models import ContextFragment, DetailDepth, SourceRef, content_hash, fragment_id
from ..text.tokens import Tokenizer, get_tokenizer
from ._workers import run_in_workers
from .history import Revision, git_revisions
from .nodes import FileNodes, Node, file_nodes
from .paths import RootCover
from .walk import SkippedFolder, SourceFile, Unread, WalkRules, read_source, walk

_BINARY_SNIFF_BYTES = 8192
_BINARY_REASON = "binary or not UTF-8"


@dataclass(frozen=True)
class Skipped:
    """A file or folder left out of the index, and why."""

    path: str
    reason: str


@dataclass
class IndexSummary:
    """What one `index` run did. Every file seen is indexed, unchanged or skipped:
    `files_seen == indexed + unchanged + len(skipped_files)`. Files parsed with syntax
    errors are indexed (as text where parsing failed), and also counted in
    `with_syntax_errors`.
    """

    root: str
    files_seen: int = 0
    indexed: int = 0
    with_syntax_errors: int = 0
    unchanged: int = 0
    removed: int = 0
    fragments_written: int = 0
    nodes_written: int = 0
    edges_written: int = 0
    skipped_files: list[Skipped] = field(default_factory=list[Skipped])
    skipped_folders: list[Skipped] = field(default_factory=list[Skipped])
    seconds: float = 0.0

    @property
    def skipped(self) -> Counter[str]:
        """How many files were skipped, by reason."""
        return Counter(item.reason for item in self.skipped_files)

    @property
    def folders_skipped(self) -> Counter[str]:
        """How many folders were not walked, by reason."""
        return Counter(item.reason for item in self.skipped_folders)


@dataclass(frozen=True)
class ForgetSummary:
    """What `forget` removed."""

    root: str
    files: int
    fragments: int


class IndexProgress(Protocol):
    """Told how many files a run will look at, then of each file as it gets to it."""

    def started(self, root: str, total: int, /) -> None: ...

    def file(self, path: str, /) -> None: ...


@dataclass(frozen=True)
class IngestLimits:
    """What `index` reads, how it cuts it and how often it commits (from `[ingest]`)."""

    max_file_bytes: int
    max_chunk_lines: int
    rules: WalkRules = field(default_factory=WalkRules)
    commit_seconds: float = 2.0

    @classmethod
    def from_settings(cls, settings: IngestSettings) -> IngestLimits:
        """The limits `[ingest]` sets."""
        return cls(
            settings.max_file_bytes,
            settings.max_chunk_lines,
            WalkRules(tuple(settings.exclude), settings.skip_virtualenvs, settings.skip_vcs),
            settings.commit_seconds,
        )


class _Batches:
    """Commits the open transaction once it has been open `seconds`; called between files
    only, so that a file is never split between two transactions.
    """

    def __init__(self, writer: IndexWriter, seconds: float) -> None:
        self._writer = writer
        self._seconds = seconds
        self._since = time.monotonic()

    def file_done(self) -> None:
        now = time.monotonic()
        if now - self._since >= self._seconds:
            self._writer.commit()
            self._since = now


def index_folder(
    store: Store,
    root: Path,
    project_dir: Path,
    tokenizer: Tokenizer,
    limits: IngestLimits,
    progress: IndexProgress | None = None,
) -> IndexSummary:
    """Bring the store up to date with the files at or under `root` (a folder or a file).

    Unchanged files (same size, mtime and tokenizer, or same content) are not read again;
    files that disappeared from under `root` are removed with their nodes, fragments and
    edges. Files are committed in batches (see the module docstring).
    """
    started = time.perf_counter()
    summary = IndexSummary(root=str(root))
    sources: list[SourceFile] = []
    marker = store.folder_marker
    rules = replace(limits.rules, store_markers=(marker,) if marker else ())
    for found in walk(root, project_dir, rules, skip_dirs=store.local_folders):
        if isinstance(found, SkippedFolder):
            summary.skipped_folders.append(Skipped(found.relpath, found.reason))
            logger.info("folder not walked", path=found.relpath, reason=found.reason)
        else:
            sources.append(found)
    if progress is not None:
        progress.started(str(root), len(sources))
    with store.writer() as writer:
        batches = _Batches(writer, limits.commit_seconds)
        cover = RootCover(root, project_dir)
        known = {path: stored for path, stored in writer.files().items() if path in cover}
        seen = {source.relpath for source in sources}
        for path in sorted(set(known) - seen):
            writer.remove_file(path)
            summary.removed += 1
            batches.file_done()
        ingest = _FileIngest(writer, limits, summary, root, project_dir, tokenizer.name)
        jobs: list[_Job] = []
        for source in sources:
            summary.files_seen += 1
            job = ingest.prepare(source, known.get(source.relpath))
            if job is not None:
                jobs.append(job)
                continue
            batches.file_done()
            if progress is not None:
                progress.file(source.relpath)
        for job, analysed in zip(jobs, _analyse_all(jobs, limits, tokenizer), strict=True):
            if progress is not None:
                progress.file(job.source.relpath)
            ingest.write(job, analysed)
            batches.file_done()
    summary.seconds = time.perf_counter() - started
    return summary


def forget_root(store: Store, root: Path, project_dir: Path) -> ForgetSummary:
    """Remove every stored file at or under `root` (which need not exist any more), with
    everything read from it.
    """
    store.check()
    with store.writer() as writer:
        cover = RootCover(root, project_dir)
        paths = sorted(path for path in writer.files() if path in cover)
        if not paths:
            raise ContextpipeError(f"{root}: nothing indexed at or under this path")
        fragments = sum(writer.remove_file(path) for path in paths)
    return ForgetSummary(str(root), len(paths), fragments)


class _FileIngest:
    """Indexes one file at a time into an open write session."""

    def __init__(
        self,
        writer: IndexWriter,
        limits: IngestLimits,
        summary: IndexSummary,
        root: Path,
        project_dir: Path,
        tokenizer: str,
    ) -> None:
        self._writer = writer
        self._limits = limits
        self._summary = summary
        self._root = root
        self._project_dir = project_dir
        self._tokenizer = tokenizer
        self._revisions: dict[str, Revision] | None = None

    def _revision(self, relpath: str) -> Revision | None:
        # git is asked only once something changed: a no-change run never starts it.
        if self._revisions is None:
            self._revisions = git_revisions(self._root, self._project_dir)
        return self._revisions.get(relpath)

    def _skip(self, source: SourceFile, reason: str, remember: StoredFile | None = None) -> None:
        """Count and log a skipped file; `remember` it, so that the next run need not read
        it again.
        """
        self._summary.skipped_files.append(Skipped(source.relpath, reason))
        logger.info("skipped", path=source.relpath, reason=reason)
        if remember is not None:
            self._writer.replace_file(source.relpath, remember, [], [], [])

    def prepare(self, source: SourceFile, stored: StoredFile | None) -> _Job | None:
        """Settle a file that needs no parsing (unchanged, skipped); else the job to parse.
        Token counts are per tokenizer: a file counted with another one is parsed again.
        """
        summary = self._summary
        too_large = f"larger than {self._limits.max_file_bytes} bytes"
        if stored and (stored.size, stored.mtime_ns) == (source.size, source.mtime_ns):
            if stored.skipped is SkipReason.BINARY:
                self._skip(source, _BINARY_REASON)
                return None
            too_large_still = source.size > self._limits.max_file_bytes
            if stored.skipped is SkipReason.TOO_LARGE and too_large_still:
                self._skip(source, too_large)
                return None
            if stored.skipped is None and stored.tokenizer == self._tokenizer:
                summary.unchanged += 1
                return None
        if source.size > self._limits.max_file_bytes:
            logger.warning("skipped", path=source.relpath, reason=too_large, bytes=source.size)
            remember = StoredFile(
                source.size, source.mtime_ns, "", self._tokenizer, SkipReason.TOO_LARGE
            )
            self._skip(source, too_large, remember)
            return None
        data = read_source(source)
        if isinstance(data, Unread):
            self._skip(source, data.reason)  # what the store holds of it stays as it was
            return None
        digest = hashlib.sha256(data).hexdigest()
        current = StoredFile(source.size, source.mtime_ns, digest, self._tokenizer)
        if stored and (stored.sha256, stored.tokenizer) == (digest, self._tokenizer):
            if stored.skipped is SkipReason.BINARY:  # touched, still the same bytes
                self._skip(source, _BINARY_REASON, replace(current, skipped=SkipReason.BINARY))
                return None
            self._writer.touch_file(source.relpath, current)
            summary.unchanged += 1
            return None
        text = _decode(data)
        if text is None:
            self._skip(source, _BINARY_REASON, replace(current, skipped=SkipReason.BINARY))
            return None
        return _Job(source, current, text)

    def write(self, job: _Job, analysed: _Analysed) -> None:
        """Store a parsed file's nodes, edges and fragments."""
        summary, source, digest = self._summary, job.source, job.stored.sha256
        parsed = analysed.parsed
        if parsed.has_errors:
            summary.with_syntax_errors += 1
            logger.info("syntax errors", path=source.relpath)
        revision = self._revision(source.relpath)
        if revision is not None:
            modified, read_at = revision.committed_at, f"commit:{revision.commit}"
        else:
            modified = datetime.fromtimestamp(source.mtime_ns / 1e9, UTC)
            read_at = f"sha256:{digest}"
        fragments = list(self._fragments(source.relpath, analysed, modified, read_at))
        nodes = [
            NodeRecord(n.uri, n.kind, n.name, source.relpath, n.start_line, n.end_line, n.parent)
            for n in parsed.nodes
        ]
        # A definition that calls a name twice declares that edge once.
        edges = list(
            dict.fromkeys(EdgeRecord(s, kind, t, source.relpath) for s, kind, t in parsed.edges)
        )
        self._writer.replace_file(source.relpath, job.stored, fragments, nodes, edges)
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
    logger.info("parsing in worker processes", workers=workers, files=len(jobs))
    yield from run_in_workers(_analyse, arguments, workers, batch=8)


def _decode(data: bytes) -> str | None:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
