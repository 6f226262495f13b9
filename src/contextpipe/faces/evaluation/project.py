"""The temporary project an evaluation indexes a BEIR corpus into, and opens pipelines on.

Rules: the corpus is written as files (`beir.write_corpus`) under `corpus/` of a new
temporary folder and indexed with `Pipeline.index` into a store of its own in that folder,
its vectors computed with `Pipeline.embed` as `contextpipe index` computes them (unless
`[embedding] enabled` is false; a model that is not installed is an error saying what to
run), under the user's settings (their config file and `CONTEXTPIPE_*` variables) with the store
path replaced, so that the user's own store is never touched. A document that indexing
skips is an error naming it. Every pipeline opened on the project (`open`, with more
settings as overrides) reads that one index; the folder goes when the block ends.
"""

from __future__ import annotations

import tempfile
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from contextpipe import (
    ContextpipeError,
    EmbedProgress,
    IndexProgress,
    Pipeline,
    RetrievalMemo,
)

from .beir import BeirSet, write_corpus


@dataclass(frozen=True)
class Project:
    """An indexed corpus: the folder, the user's config file, file name -> document id."""

    root: Path
    config: Path | None
    documents: Mapping[str, str]

    def open(
        self, overrides: Mapping[str, Any] | None = None, memo: RetrievalMemo | None = None
    ) -> Pipeline:
        """A pipeline on the project's store, with the user's settings and `overrides`
        (and strategies' answers kept in `memo`, see `Pipeline.open`).
        """
        return Pipeline.open(
            store=self.root / ".contextpipe",
            config=self.config,
            project_dir=self.root,
            overrides=overrides,
            memo=memo,
        )

    def document(self, path: str) -> str | None:
        """The document a fragment's source path came from."""
        return self.documents.get(Path(path).name)


class IndexingProgress(IndexProgress, EmbedProgress, Protocol):
    """Told of the files indexed, then of the texts embedded."""


@contextmanager
def indexed_project(
    data: BeirSet, config: Path | None, progress: IndexingProgress | None = None
) -> Generator[Project]:
    """`data`'s corpus written out and indexed in a temporary folder (see the module rules)."""
    with tempfile.TemporaryDirectory(prefix="contextpipe-eval-") as folder:
        root = Path(folder)
        project = Project(root, config, write_corpus(data, root / "corpus"))
        pipeline = project.open()
        try:
            summaries = pipeline.index([root / "corpus"], progress)
            if pipeline.settings.embedding.enabled:
                pipeline.embed(progress)
        finally:
            pipeline.close()
        indexed = sum(summary.indexed for summary in summaries)
        if indexed != len(project.documents):
            skipped = [item for summary in summaries for item in summary.skipped_files]
            why = f" (the first skipped: {skipped[0].path}: {skipped[0].reason})" if skipped else ""
            raise ContextpipeError(
                f"{data.corpus}: only {indexed} of {len(project.documents)} documents were "
                f"indexed{why}; check ingest settings such as ingest.exclude"
            )
        yield project
