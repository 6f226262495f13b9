"""`index`: walk a folder, chunk what changed, count tokens, write it in one transaction."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..models import ContextFragment, DetailDepth, SourceRef, content_hash, fragment_id
from ..store.embedded import EmbeddedStore, NewFragment, StoredFile, StoreWriter
from ..tokenizers import Tokenizer
from .chunking import Chunk, chunk_file, language_of
from .walk import SourceFile, walk_files

_BINARY_SNIFF_BYTES = 8192


@dataclass
class IndexSummary:
    """What one `index` run did."""

    root: str
    files_seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    fragments_written: int = 0
    skipped: Counter[str] = field(default_factory=Counter[str])
    seconds: float = 0.0


ProgressCallback = Callable[[str], None]


def index_folder(
    store: EmbeddedStore,
    root: Path,
    project_dir: Path,
    tokenizer: Tokenizer,
    max_file_bytes: int,
    max_chunk_lines: int,
    exclude: list[str],
    on_file: ProgressCallback | None = None,
) -> IndexSummary:
    """Bring the store up to date with the files under `root`.

    Unchanged files (same size and mtime, or same content) are not read again; files that
    disappeared are removed. Everything is written in one transaction.
    """
    started = time.perf_counter()
    summary = IndexSummary(root=str(root))
    prefix = _prefix(root, project_dir)
    with store.writer() as writer:
        # Token counts are stored per tokenizer: a new tokenizer means counting everything again.
        recount = writer.get_meta("tokenizer") not in (None, tokenizer.name)
        writer.set_meta("tokenizer", tokenizer.name)
        known = writer.files(prefix)
        seen: set[str] = set()
        for source in walk_files(root, project_dir, exclude, skip_dirs=[store.directory]):
            summary.files_seen += 1
            seen.add(source.relpath)
            if on_file is not None:
                on_file(source.relpath)
            _index_file(
                writer,
                source,
                known.get(source.relpath),
                recount,
                summary,
                tokenizer,
                max_file_bytes,
                max_chunk_lines,
            )
        for path in sorted(set(known) - seen):
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


def _index_file(
    writer: StoreWriter,
    source: SourceFile,
    stored: StoredFile | None,
    recount: bool,
    summary: IndexSummary,
    tokenizer: Tokenizer,
    max_file_bytes: int,
    max_chunk_lines: int,
) -> None:
    if not recount and stored and (stored.size, stored.mtime_ns) == (source.size, source.mtime_ns):
        summary.unchanged += 1
        return
    if source.size > max_file_bytes:
        summary.skipped[f"larger than {max_file_bytes} bytes"] += 1
        return
    data = source.path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    current = StoredFile(source.size, source.mtime_ns, digest)
    if not recount and stored and stored.sha256 == digest:
        writer.touch_file(source.relpath, current)
        summary.unchanged += 1
        return
    text = _decode(data)
    if text is None:
        summary.skipped["binary or not UTF-8"] += 1
        if stored:
            writer.remove_file(source.relpath)
        return
    modified = datetime.fromtimestamp(source.mtime_ns / 1e9, UTC)
    chunks = chunk_file(source.relpath, text, max_chunk_lines)
    fragments = list(_fragments(source.relpath, chunks, modified, tokenizer))
    writer.replace_file(source.relpath, current, fragments)
    summary.indexed += 1
    summary.fragments_written += len(fragments)


def _decode(data: bytes) -> str | None:
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _fragments(
    path: str, chunks: list[Chunk], modified: datetime, tokenizer: Tokenizer
) -> Iterator[NewFragment]:
    language = language_of(path)
    for chunk in chunks:
        source = SourceRef(
            uri=chunk.uri,
            path=path,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            kind=chunk.kind,
            modified_at=modified,
        )
        listing = f"{chunk.kind} {chunk.name} ({path}:{chunk.start_line}-{chunk.end_line})"
        depths: tuple[tuple[DetailDepth, str], ...] = ((9, chunk.text), (0, listing))
        for depth, text in depths:
            fragment = ContextFragment(
                id=fragment_id(chunk.uri, depth),
                uko_uri=chunk.uri,
                detail_depth=depth,
                text=text,
                token_count=tokenizer.count(text),
                source=source,
                content_hash=content_hash(text),
            )
            yield NewFragment(fragment, chunk.name, language)
