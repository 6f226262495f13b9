"""Optimising chunks a caller already retrieved: leave out what says nothing new, keep one
chunk per topic, balance relevance and diversity, and pack the rest into the budget. No
model is asked anything but the embedder, and the same request gives the same output.

A chunk's relevance is the caller's score when every chunk has one (divided by the best,
or scaled to [0, 1] when some are negative); else its vector's cosine with the query's;
else its place in the request. Chunks are
considered most relevant first (ties: in the request's order), and every rule below keeps
the earlier of two. Rules, in order:

1. Exact duplicates: chunks whose texts are equal once case and runs of whitespace are
   ignored, in the same namespace (a chunk's `metadata.namespace`, else the request's), are
   one chunk; the later ones are "exact duplicate of X".
2. Paraphrases: a chunk whose vector is within `semantic_dedup_threshold` (cosine) of an
   earlier chunk's, *and* whose words overlap it (`paraphrase_overlap` of the smaller set
   of content words is in the other, with the same numbers: `claim_overlap`), says the
   same thing: "paraphrase of X". Near vectors alone mean the same topic, which rule 3
   handles; shared words alone mean nothing; other numbers are another claim.
3. Topics: agglomerative clustering (scipy) on cosine distance with the request's linkage,
   cut where the similarity falls below `cluster_threshold`. A cluster's representative
   (the most relevant; or the one nearest its centroid, or the query; or the longest)
   stays; the others are "represented by X in cluster N". Clusters are numbered from 1,
   most relevant first.
4. Relevance and diversity: with `mmr` on, the representatives are taken by maximal
   marginal relevance, `lambda x relevance - (1 - lambda) x greatest cosine with a chunk
   taken`, until `target_k` are taken; the rest are left out for MMR. With it off, the
   most relevant `target_k` are taken.
5. Compression (`compress` on): runs of blanks and blank lines shrink to one, and a long
   structured text (table rows, records, key-value lines) keeps its first lines and a
   marker saying how many were cut. A text never comes out longer than it came in.
6. Packing: the taken chunks, in the order taken, go to the packer (`packing`), which
   counts every block exactly and never exceeds `token_budget`; a chunk that does not fit
   is "over budget", and a later, smaller one may still fit.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist, squareform

from ..core.chunks import (
    CHUNK_KIND,
    Chunk,
    KeptChunk,
    OptimizedContext,
    OptimizeRequest,
    OptimizeStats,
    Removal,
    RemovedChunk,
    Representative,
)
from ..core.models import ContextFragment, ContextRequest, SourceRef
from ..text.tokens import Tokenizer
from ..text.words import claim_overlap, content_words
from ._packing_cache import PackingCache
from .fusion import FusedItem
from .packing import Packer, PackingPolicy
from .rendering import renderer_for

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: The packer only packs: the order is already chosen, duplicates already gone.
_PACK_ONLY = PackingPolicy(mmr_lambda=1.0, duplicate_threshold=2.0, depth_values={9: 1.0})
#: Structured text longer than this many lines is cut to `_STRUCTURED_KEPT` (rule 5).
_STRUCTURED_LINES = 40
_STRUCTURED_KEPT = 20
_STRUCTURED_LINE = re.compile(r"^\s*(?:[|{}\[\]\"]|[\w.\[\]-]+\s*[:=]\s|\S+(?:\s*[,\t]\s*\S+){2,})")
_BLANKS = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n(?:\s*\n)+")


@dataclass(frozen=True)
class Embedded:
    """The request's vectors, each row L2-normalised: one per chunk, and the query's."""

    chunks: NDArray[np.float32]
    query: NDArray[np.float32] | None
    made: int  # how many were embedded here
    ms: float  # and the time that took


def optimize(
    request: OptimizeRequest,
    vectors: Embedded,
    tokenizer: Tokenizer,
    cache: PackingCache,
    started: float,
) -> OptimizedContext:
    """The module's rules, in order, over a request whose `problem()` is empty."""
    chunks = request.chunks
    relevance = _relevance(request, vectors)
    order = sorted(range(len(chunks)), key=lambda i: (-relevance[i], i))
    # Every pair's cosine, once, for rules 2 to 4: scipy's own loop, not a BLAS product,
    # whose threads spun 18 ms for 50 x 384 on a busy 2-core host (0.08 ms on one thread).
    cosines = 1.0 - squareform(pdist(vectors.chunks.astype(np.float64), "cosine"))
    removed: dict[int, RemovedChunk] = {}

    def remove(i: int, reason: Removal, by: int | None, cluster: int | None, detail: str) -> None:
        by_id = None if by is None else chunks[by].id
        removed[i] = RemovedChunk(
            id=chunks[i].id, reason=reason, by=by_id, cluster=cluster, detail=detail
        )

    # Rule 1: exact duplicates, per namespace.
    first: dict[tuple[str, str], int] = {}
    for i in order:
        earlier = first.setdefault(_exact_key(request, i), i)
        if earlier != i:
            detail = f"exact duplicate of {chunks[earlier].id}"
            remove(i, Removal.EXACT_DUPLICATE, earlier, None, detail)
    # Rule 2: paraphrases, near in vector and in words.
    kept: list[int] = []
    near = cosines >= request.semantic_dedup_threshold
    is_kept = np.zeros(len(chunks), dtype=bool)
    rank = {i: place for place, i in enumerate(order)}
    words: dict[int, frozenset[str]] = {}
    for i in (i for i in order if i not in removed):
        for j in sorted(np.flatnonzero(near[i] & is_kept).tolist(), key=rank.__getitem__):
            overlap = _overlap(words, chunks, i, j)
            if overlap >= request.paraphrase_overlap:
                detail = (
                    f"paraphrase of {chunks[j].id}"
                    f" (cosine {cosines[i, j]:.2f}, shared words {overlap:.2f})"
                )
                remove(i, Removal.PARAPHRASE, j, None, detail)
                break
        else:
            kept.append(i)
            is_kept[i] = True
    # Rule 3: one representative per topic cluster.
    clusters = _clusters(request, cosines, kept)
    tokens = {i: tokenizer.count(chunks[i].text) for i in range(len(chunks))}
    cluster_of: dict[int, int] = {}
    representatives: list[int] = []
    for number, members in enumerate(clusters, start=1):
        chosen = _representative(request, vectors, members, tokens)
        representatives.append(chosen)
        for i in members:
            cluster_of[i] = number
            if i != chosen:
                detail = (
                    f"represented by {chunks[chosen].id} in cluster {number}"
                    f" (cosine {cosines[i, chosen]:.2f})"
                )
                remove(i, Removal.CLUSTER, chosen, number, detail)
    # Rule 4: MMR (or relevance) under target_k.
    limit = request.target_k or len(representatives)
    if request.mmr:
        taken = _mmr(representatives, relevance, cosines, request.mmr_lambda, limit)
        detail = f"MMR: {limit} chunks more relevant or more diverse were taken (target_k)"
        reason = Removal.MMR
    else:
        taken = representatives[:limit]
        detail, reason = f"beyond the {limit} most relevant (target_k)", Removal.TARGET_K
    for i in set(representatives).difference(taken):
        remove(i, reason, None, cluster_of[i], detail)
    # Rule 5: compression.
    texts = {i: _compressed(chunks[i].text) if request.compress else chunks[i].text for i in taken}
    # Rule 6: the exact-token packer.
    packed = _pack(request, taken, texts, tokenizer, cache)
    for i in taken:
        if i not in packed:
            remove(i, Removal.BUDGET, None, cluster_of[i], f"over budget: {packed.reasons[i]}")
    kept_chunks = tuple(
        KeptChunk(
            id=chunks[i].id,
            text=texts[i],
            score=chunks[i].score,
            tokens=tokens[i] if texts[i] == chunks[i].text else tokenizer.count(texts[i]),
            cluster=cluster_of[i],
            compressed=texts[i] != chunks[i].text,
            metadata=chunks[i].metadata,
        )
        for i in packed.order
    )
    reasons = [r.reason for r in removed.values()]
    tokens_in = sum(tokens.values())
    stats = OptimizeStats(
        input_chunks=len(chunks),
        output_chunks=len(kept_chunks),
        exact_duplicates=reasons.count(Removal.EXACT_DUPLICATE),
        semantic_duplicates=reasons.count(Removal.PARAPHRASE),
        clusters=len(clusters),
        represented=reasons.count(Removal.CLUSTER),
        mmr_removed=reasons.count(Removal.MMR) + reasons.count(Removal.TARGET_K),
        budget_skipped=reasons.count(Removal.BUDGET),
        embedded=vectors.made,
        tokens_in=tokens_in,
        tokens_out=packed.tokens,
        reduction_pct=round(100 * (1 - packed.tokens / tokens_in), 2) if tokens_in else 0.0,
        embedding_ms=round(vectors.ms, 3),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
    )
    return OptimizedContext(
        text=packed.text,
        tokens_used=packed.tokens,
        budget=request.token_budget,
        tokenizer=tokenizer.name,
        output=request.output,
        chunks=kept_chunks,
        removed=tuple(removed[i] for i in sorted(removed)),
        stats=stats,
    )


def _relevance(request: OptimizeRequest, vectors: Embedded) -> list[float]:
    scores = [chunk.score for chunk in request.chunks]
    given = [score for score in scores if score is not None]
    if len(given) == len(scores):
        low, high = min(given), max(given)
        if low >= 0:
            return [score / high if high else 1.0 for score in given]
        return [(score - low) / (high - low) for score in given]
    if vectors.query is not None:
        return [float(value) for value in vectors.chunks @ vectors.query]
    count = len(scores)
    return [1.0 - i / count for i in range(count)]


def _exact_key(request: OptimizeRequest, index: int) -> tuple[str, str]:
    """A chunk's namespace and its text with case and runs of whitespace ignored."""
    chunk = request.chunks[index]
    namespace = str(chunk.metadata.get("namespace", request.namespace))
    return namespace, " ".join(chunk.text.casefold().split())


def _overlap(words: dict[int, frozenset[str]], chunks: Sequence[Chunk], i: int, j: int) -> float:
    """The two chunks' `claim_overlap` (`words` keeps each chunk's content words once read)."""
    for k in (i, j):
        if k not in words:
            words[k] = content_words(chunks[k].text)
    return claim_overlap(words[i], words[j])


def _clusters(
    request: OptimizeRequest, cosines: NDArray[np.float64], kept: Sequence[int]
) -> list[list[int]]:
    """The kept chunks' topic clusters, each most relevant first, in order of their first."""
    if len(kept) < 2:
        return [[i] for i in kept]
    distances = squareform(1.0 - cosines[np.ix_(kept, kept)], checks=False)
    tree = linkage(distances, method=request.cluster_linkage.value)
    labels = fcluster(tree, t=1.0 - request.cluster_threshold, criterion="distance")
    clusters: dict[int, list[int]] = {}
    for i, label in zip(kept, labels.tolist(), strict=True):
        clusters.setdefault(int(label), []).append(i)
    return list(clusters.values())


def _representative(
    request: OptimizeRequest, vectors: Embedded, members: list[int], tokens: dict[int, int]
) -> int:
    """The chunk that speaks for a cluster; ties go to the more relevant."""
    choice = request.representative
    if choice is Representative.LONGEST:
        return max(members, key=lambda i: (tokens[i], -members.index(i)))
    if choice is Representative.AUTO or len(members) == 1:
        return members[0]
    if choice is Representative.CENTROID:
        target = vectors.chunks[members].mean(axis=0)
    else:
        assert vectors.query is not None  # the request's problem() says so
        target = vectors.query
    closeness = vectors.chunks[members] @ target
    return members[int(np.argmax(closeness))]  # argmax takes the first of equals


def _mmr(
    candidates: list[int],
    relevance: list[float],
    cosines: NDArray[np.float64],
    lam: float,
    limit: int,
) -> list[int]:
    """Rule 4's greedy: the candidates taken, in the order taken."""
    among = np.asarray(candidates, dtype=np.intp)
    gain = lam * np.asarray(relevance, dtype=np.float64)[among]
    greatest = np.zeros(len(among))  # each candidate's greatest cosine with those taken
    taken: list[int] = []
    while len(taken) < min(limit, len(among)):
        values = gain - (1 - lam) * greatest
        best = int(np.argmax(values))  # the first of equals
        taken.append(int(among[best]))
        gain[best] = -np.inf  # taken: never again
        greatest = np.maximum(greatest, cosines[among, taken[-1]])
    return taken


def _compressed(text: str) -> str:
    """Rule 5; never longer than `text`."""
    shorter = _BLANK_LINES.sub(
        "\n\n", "\n".join(_BLANKS.sub(" ", line).rstrip() for line in text.split("\n"))
    )
    lines = shorter.split("\n")
    filled = [line for line in lines if line.strip()]
    structured = sum(1 for line in filled if _STRUCTURED_LINE.match(line))
    if len(lines) > _STRUCTURED_LINES and structured * 2 > len(filled):
        cut = len(lines) - _STRUCTURED_KEPT
        shorter = "\n".join([*lines[:_STRUCTURED_KEPT], f"[... {cut} more lines cut]"])
    return shorter if len(shorter) < len(text) else text


@dataclass(frozen=True)
class _Packed:
    order: tuple[int, ...]  # chunk positions, as packed
    reasons: dict[int, str]  # chunk position -> why it was left out
    text: str
    tokens: int

    def __contains__(self, index: object) -> bool:
        return index in self.order


def _pack(
    request: OptimizeRequest,
    taken: list[int],
    texts: dict[int, str],
    tokenizer: Tokenizer,
    cache: PackingCache,
) -> _Packed:
    """Rule 6: the taken chunks as fragments, scored by their place, through the packer."""
    items = [
        FusedItem(_fragment(request, i, texts[i], tokenizer), float(len(taken) - place), ())
        for place, i in enumerate(taken)
    ]
    context = ContextRequest(
        query=request.query or "optimise", budget=request.token_budget, output=request.output
    )
    packer = Packer(renderer_for(request.output), tokenizer, _PACK_ONLY, cache)
    packed = packer.pack(items, context, lambda uri: ())
    position = {request.chunks[i].id: i for i in taken}
    return _Packed(
        order=tuple(position[selected.fragment.id] for selected in packed.selected),
        reasons={position[fragment_id]: reason for fragment_id, _, reason in packed.dropped},
        text=packed.rendered.text,
        tokens=packed.tokens_used,
    )


def _fragment(
    request: OptimizeRequest, index: int, text: str, tokenizer: Tokenizer
) -> ContextFragment:
    """A chunk as the packer and renderers take fragments: its id as its path, its
    metadata's `title` (when a string) as its title.
    """
    chunk = request.chunks[index]
    uri = f"chunk://{request.namespace}/{chunk.id}"
    title = chunk.metadata.get("title")
    return ContextFragment(
        id=chunk.id,
        uko_uri=uri,
        detail_depth=9,
        text=text,
        token_count=0,  # the packer counts the rendered block itself
        source=SourceRef(
            uri=uri, path=chunk.id, start_line=1, end_line=text.count("\n") + 1, kind=CHUNK_KIND
        ),
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        metadata={"title": title} if isinstance(title, str) else {},
    )
