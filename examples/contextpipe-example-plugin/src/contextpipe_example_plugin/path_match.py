"""`path-match`: fragments from files whose path names a word of the query.

"how does the allocator split the budget?" finds text in `src/budget/allocator.py` even
when BM25 ranks other files higher: a file's name is often the best summary of its content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from contextpipe import Backends, Candidate, ContextRequest, RequestFilters, TextHit
from pydantic import BaseModel, ConfigDict, Field

NAME = "path-match"

_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    "and are does for from has have how into not the their then there this was what when"
    " where which who why will with you your".split()
)


class PathMatchOptions(BaseModel):
    """`[strategies.path-match.options]` in config.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_results: int = Field(default=20, ge=1, le=1000, description="Hits fetched per word.")
    max_words: int = Field(default=8, ge=1, le=32, description="Query words tried at most.")
    min_word_length: int = Field(default=3, ge=1, le=20, description="Shorter words are ignored.")


class PathMatchStrategy:
    """Proposes fragments of files whose path contains a word of the query."""

    name = NAME
    quality = 0.4
    required_backends = frozenset({"text"})

    def __init__(self, options: PathMatchOptions | None = None) -> None:
        # Public and a pydantic model: `contextpipe config init` writes its fields, defaults
        # and descriptions into config.toml.
        self.options = options or PathMatchOptions()

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        # Cheap: no search here. Without words to look for in paths there is nothing to do.
        return 0.5 if self.words(request.query) else 0.0

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> list[Candidate]:
        if backends.text is None:
            return []
        words = self.words(request.query)
        hits: dict[str, TextHit] = {}
        for word in words:
            # The text backend filters by path glob; the request's own kinds still apply.
            filters = RequestFilters(paths=(_path_glob(word),), kinds=request.filters.kinds)
            for hit in backends.text.search(request.query, self.options.max_results, filters):
                if _allowed(hit.fragment.source.path, request.filters.paths):
                    hits.setdefault(hit.fragment.id, hit)
        ranked = sorted(
            ((_path_words(hit, words), hit) for hit in hits.values()),
            key=lambda pair: (-_score(*pair), pair[1].fragment.source.path, pair[1].fragment.id),
        )
        candidates: list[Candidate] = []
        spent = 0
        for named, hit in ranked:
            fragment = hit.fragment
            if spent + fragment.token_count > budget:  # never propose more than the budget
                continue
            spent += fragment.token_count
            candidates.append(
                Candidate(
                    fragment=fragment,
                    score=_score(named, hit),
                    reason=f"path {fragment.source.path} names {', '.join(named)}",
                )
            )
        return candidates

    def explain(self) -> str:
        return (
            "Proposes fragments from files whose path contains a word of the query (case "
            "insensitive), ranked by how many query words the path names, then by BM25. "
            "Options: max_results (20), max_words (8), min_word_length (3)."
        )

    def words(self, query: str) -> list[str]:
        """The query's words worth looking for in paths, lower-cased, in order, unique."""
        found = (word.lower() for word in _WORD.findall(query))
        keep = (
            word
            for word in found
            if len(word) >= self.options.min_word_length and word not in _STOPWORDS
        )
        return list(dict.fromkeys(keep))[: self.options.max_words]


def _path_glob(word: str) -> str:
    """A case-insensitive glob for paths containing `word` (`*[bB][uU][dD]*`)."""
    letters = (f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)
    return f"*{''.join(letters)}*"


def _allowed(path: str, globs: Iterable[str]) -> bool:
    globs = tuple(globs)
    return not globs or any(fnmatchcase(path, glob) for glob in globs)


def _path_words(hit: TextHit, words: Sequence[str]) -> tuple[str, ...]:
    path = hit.fragment.source.path.lower()
    return tuple(word for word in words if word in path)


def _score(named: Sequence[str], hit: TextHit) -> float:
    """Path words count most; BM25 (squashed into [0, 1)) breaks ties."""
    lexical = max(hit.score, 0.0)
    return round(len(named) + lexical / (1.0 + lexical), 6)
