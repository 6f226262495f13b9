"""Approximate search over the embedded store's vectors, once there are many of them
(speed machinery for `_vector_matrix`).

Rules:

1. It is an inverted file (faiss `IndexIVFFlat`, inner product): the vectors are split
   into about 4·√n lists around k-means centroids, and a query reads the 2·√lists lists
   whose centroids are nearest (72 of 1,265 at 100k vectors; a larger share of fewer
   lists). Similarities of what it finds are exact; only whether a vector is found is
   approximate (recall@20 against exact search is measured in `bench_vectors.py`).
   With `[store] vector_dtype = "float16"` the lists hold float16 codes of the vectors
   (`IndexIVFScalarQuantizer`, not by residual): half the size, and the similarities of
   the vectors rounded to float16, as exact search gives them (`_vector_rows` rule 2).
2. It is kept up to date when a vector writer finishes (`_vector_matrix` rule 4), never
   by a query: the vectors
   added since are added, the vectors gone are removed, and it is trained anew when it is
   missing, unreadable, of another space, when the number of vectors has doubled or
   halved since it was trained, when most of its ids are of removed vectors, or when it
   holds another dtype than the one configured. Training
   runs on one thread with faiss's fixed seed, so the same vectors give the same lists.
3. It is used only when it describes the vectors as they are (their generation) in the
   dtype configured: after an interrupted run, or a change of dtype, search is exact until
   a writer finishes again.
4. Saved beside the vectors: the index and the content hash of each id, in files named by
   the generation they describe, then `vectors.ivf.json` naming that generation and
   holding the two files' checksums (`_sealed`), replaced whole and last; so a reader
   finds the old index or the new one, never half of each, and never one written over.
   Readers map the index file rather than read it, with its lists used in place
   (`IO_FLAG_MMAP_IFC`): faiss's older mapping (`IO_FLAG_MMAP`) turns them into on-disk
   lists, which cost about 2 ms more a query at 100k vectors, with the same results.
5. A search runs on one thread (`_vector_faiss` rule 2).

faiss is imported only for a store that holds enough vectors.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.logs import logger
from . import _sealed, _vector_faiss
from ._vector_rows import FLOAT16, FLOAT32
from ._vectors import APPROXIMATE_NAME, stored_vectors

if TYPE_CHECKING:
    from ._vectors import Host

#: Vectors per list (rule 1): lists = LISTS_PER_ROOT · √n.
_LISTS_PER_ROOT = 4
#: Lists a query reads: PROBED_PER_ROOT · √lists (rule 1).
_PROBED_PER_ROOT = 2
#: Retrain when the vectors outgrow or shrink from the trained count by this factor.
_RETRAIN_FACTOR = 2
#: Training points per list that faiss keeps (its default, said out loud so it stays).
_POINTS_PER_LIST = 256


@dataclass
class ApproximateIndex:
    """An inverted file over the vectors of one space, and the content hash of each id."""

    space: str
    generation: int
    trained_count: int
    hashes: NDArray[np.bytes_]  # by faiss id; b"" for an id removed
    index: Any
    dtype: str

    @property
    def count(self) -> int:
        """How many vectors it holds."""
        return int(self.index.ntotal)

    def nearest(self, query: NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        """Up to `limit` (content hash, similarity) pairs, the most similar first."""
        if limit <= 0 or self.count == 0:
            return []
        with _vector_faiss.one_thread():
            scores, ids = self.index.search(query.reshape(1, -1), min(limit, self.count))
        return [
            (bytes(self.hashes[int(i)]).decode(), float(s))
            for s, i in zip(scores[0], ids[0], strict=True)
            if int(i) >= 0
        ]

    def save(self, folder: Path) -> None:
        """Rule 4."""
        faiss = _vector_faiss.faiss()
        stem = f"vectors.ivf.{self.generation}"
        temporary = folder / f".{stem}.{threading.get_ident()}.tmp"
        faiss.write_index(self.index, str(temporary))
        temporary.replace(folder / f"{stem}.faiss")
        with temporary.open("wb") as out:
            np.save(out, self.hashes, allow_pickle=False)
        temporary.replace(folder / f"{stem}.hashes.npy")
        state = {
            "space": self.space,
            "generation": self.generation,
            "trained": self.trained_count,
            "dtype": self.dtype,
            "seals": {
                path.name: _sealed.seal(path)
                for path in (folder / f"{stem}.faiss", folder / f"{stem}.hashes.npy")
            },
        }
        temporary.write_text(json.dumps(state))
        temporary.replace(folder / APPROXIMATE_NAME)
        for old in folder.glob("vectors.ivf.*.*"):
            if not old.name.startswith(f"{stem}."):
                old.unlink(missing_ok=True)


def saved_stamp(folder: Path) -> tuple[int, ...]:
    """Changes whenever another index is saved (or none is left): what a reader keys on."""
    try:
        found = (folder / APPROXIMATE_NAME).stat()
    except OSError:
        return ()
    return (found.st_ino, found.st_mtime_ns, found.st_size)


def load(folder: Path, space: str, writable: bool = False) -> ApproximateIndex | None:
    """The saved index of `space`, mapped (or read, to be changed); None when there is
    none or it cannot be read.
    """
    try:
        state = json.loads((folder / APPROXIMATE_NAME).read_text())
        if state["space"] != space:
            return None
        generation, trained = int(state["generation"]), int(state["trained"])
        dtype = str(state.get("dtype", FLOAT32))  # saved before there was a choice
        stem = folder / f"vectors.ivf.{generation}"
        seals = _sealed.seals_of(state)
        for suffix in (".faiss", ".hashes.npy"):
            saved = Path(f"{stem}{suffix}")
            if not _sealed.intact(saved, seals.get(saved.name)):
                return None
        hashes = np.load(f"{stem}.hashes.npy", allow_pickle=False)
        faiss = _vector_faiss.faiss()
        flags = 0 if writable else faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY
        index = faiss.read_index(f"{stem}.faiss", flags)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        if (folder / APPROXIMATE_NAME).exists():
            logger.warning("unreadable approximate vector index ignored", error=str(exc))
        return None
    if int(index.ntotal) != int(np.count_nonzero(hashes)):
        return None
    return ApproximateIndex(space, generation, trained, hashes, index, dtype)


def built(
    space: str,
    generation: int,
    hashes: Sequence[str],
    matrix: NDArray[np.float32],
    dtype: str,
) -> ApproximateIndex:
    """A new index trained on, and holding, every vector given (rules 1 and 2)."""
    faiss = _vector_faiss.faiss()
    count, dimension = matrix.shape
    lists = max(1, min(count // 39, round(_LISTS_PER_ROOT * math.sqrt(count))))
    quantizer = faiss.IndexFlatIP(dimension)
    if dtype == FLOAT16:
        index = faiss.IndexIVFScalarQuantizer(
            quantizer,
            dimension,
            lists,
            faiss.ScalarQuantizer.QT_fp16,
            faiss.METRIC_INNER_PRODUCT,
            False,  # by residual: the codes would be of differences, not of the vectors
        )
    else:
        index = faiss.IndexIVFFlat(quantizer, dimension, lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.max_points_per_centroid = _POINTS_PER_LIST
    index.nprobe = min(lists, math.ceil(_PROBED_PER_ROOT * math.sqrt(lists)))
    with _vector_faiss.one_thread():  # rule 2: the lists depend on the vectors alone
        index.train(matrix)
        index.add_with_ids(matrix, np.arange(count, dtype=np.int64))
    return ApproximateIndex(space, generation, count, np.asarray(hashes, dtype="S64"), index, dtype)


def needs_training(index: ApproximateIndex | None, space: str, count: int, dtype: str) -> bool:
    """Rule 2: train anew rather than add to these lists."""
    return (
        index is None
        or index.space != space
        or index.dtype != dtype
        or count > index.trained_count * _RETRAIN_FACTOR
        or count * _RETRAIN_FACTOR < index.trained_count
        or len(index.hashes) > count * _RETRAIN_FACTOR  # mostly ids of removed vectors
    )


def updated(
    index: ApproximateIndex,
    generation: int,
    gone: Sequence[str],
    added: Sequence[str],
    vectors: NDArray[np.float32],
) -> ApproximateIndex:
    """`index` less the vectors of `gone`, plus `added` with their `vectors` (rule 2)."""
    faiss = _vector_faiss.faiss()
    position = {bytes(digest).decode(): i for i, digest in enumerate(index.hashes) if digest}
    removed = np.asarray(sorted(position[digest] for digest in gone), dtype=np.int64)
    hashes = np.concatenate([index.hashes, np.asarray(added, dtype="S64")])
    hashes[removed] = b""
    with _vector_faiss.one_thread():
        if len(removed):
            index.index.remove_ids(faiss.IDSelectorBatch(removed))
        if added:
            start = len(index.hashes)
            index.index.add_with_ids(vectors, np.arange(start, start + len(added), dtype=np.int64))
    return ApproximateIndex(
        index.space, generation, index.trained_count, hashes, index.index, index.dtype
    )


def refresh(host: Host, space: str) -> None:
    """Bring the saved index up to date with the store's vectors of `space` (rule 2); with
    fewer vectors than `host.approximate_vectors_above`, there is none.
    """
    folder = host.directory
    # One statement, one snapshot: the generation and the hashes it describes.
    rows = host.rows(
        "SELECT (SELECT value FROM v.meta WHERE key = 'generation'), hash"
        " FROM v.vectors ORDER BY hash"
    )
    if len(rows) < host.approximate_vectors_above:
        for old in (folder / APPROXIMATE_NAME, *folder.glob("vectors.ivf.*.*")):
            old.unlink(missing_ok=True)
        return
    generation = int(rows[0][0])
    hashes = [str(row[1]) for row in rows]
    dtype = host.vector_dtype
    current = load(folder, space, writable=True)  # read, not trusted: a damaged one goes
    if current is not None and (current.generation, current.dtype) == (generation, dtype):
        return
    if current is None or needs_training(current, space, len(hashes), dtype):
        fresh = built(space, generation, hashes, _vectors_of(host, hashes), dtype)
    else:
        have = {bytes(digest).decode() for digest in current.hashes if digest}
        now = set(hashes)
        added = sorted(now - have)
        fresh = updated(current, generation, sorted(have - now), added, _vectors_of(host, added))
    fresh.save(folder)


def _vectors_of(host: Host, hashes: Sequence[str]) -> NDArray[np.float32]:
    """The stored vectors of `hashes`, in that order, as one matrix."""
    blobs = stored_vectors(host, hashes)
    if len(blobs) != len(hashes):
        raise RuntimeError("the vectors changed while the approximate index was brought up")
    return np.frombuffer(b"".join(blobs[digest] for digest in hashes), dtype=np.float32).reshape(
        len(hashes), -1
    )
