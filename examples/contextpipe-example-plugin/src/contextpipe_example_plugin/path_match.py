"""`path-match`: fragments from files whose path names a word of the query.

"how does the allocator split the budget?" finds text in `src/budget/allocator.py` even
when BM25 ranks other files higher: a file's name is often the best summary of its content.
It asks the store's timeline for the fragments of files whose path matches a glob, so it
finds them whether or not their text repeats the query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from contextpipe import (
    Backends,
    Candidate,
    ContextFragment,
    ContextRequest,
    RequestFilters,
    matched_terms,
    query_terms,
)
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

    max_results: int = Field(
        default=20, ge=1, le=1000, description="Fragments fetched per word, newest first."
    )
    max_words: int = Field(default=8, ge=1, le=32, description="Query words tried at most.")
    min_word_length: int = Field(default=3, ge=1, le=20, description="Shorter words are ignored.")


class PathMatchStrategy:
    """Proposes fragments of files whose path contains a word of the query."""

    name = NAME
    quality = 0.4
    required_backends = frozenset({"timeline"})

    def __init__(self, options: PathMatchOptions | None = None) -> None:
        # Public and a pydantic model: `contextpipe config init` writes its fields, defaults
        # and descriptions into config.toml.
        self.options = options or PathMatchOptions()

    def can_handle(self, request: ContextRequest, backends: Backends) -> float:
        # Cheap: no search here. Without words to look for in paths there is nothing to do.
        return 0.5 if self.words(request.query) else 0.0

    def retrieve(self, request: ContextRequest, backends: Backends, budget: int) -> list[Candidate]:
        if backends.timeline is None:
            return []
        words = self.words(request.query)
        terms = query_terms(request.query)
        found: dict[str, ContextFragment] = {}
        for word in words:
            # The timeline filters by path glob; the request's own kinds still apply.
            filters = RequestFilters(paths=(_path_glob(word),), kinds=request.filters.kinds)
            for fragment in backends.timeline.recent(self.options.max_results, filters):
                if _allowed(fragment.source.path, request.filters.paths):
                    found.setdefault(fragment.id, fragment)
        scored = [
            (_score(named, matched_terms(terms, fragment.text), terms), named, fragment)
            for fragment in found.values()
            if (named := _path_words(fragment, words))
        ]
        scored.sort(key=lambda item: (-item[0], item[2].source.path, item[2].id))
        candidates: list[Candidate] = []
        spent = 0
        for score, named, fragment in scored:
            if spent + fragment.token_count > budget:  # never propose more than the budget
                continue
            spent += fragment.token_count
            candidates.append(
                Candidate(
                    fragment=fragment,
                    score=score,
                    reason=f"path {fragment.source.path} names {', '.join(named)}",
                )
            )
        return candidates

    def explain(self) -> str:
        return (
            "Proposes fragments from files whose path contains a word of the query (case "
            "insensitive), found through the store's timeline, ranked by how many query words "
            "the path names, then by the share of query terms the text holds. "
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


def _path_words(fragment: ContextFragment, words: Sequence[str]) -> tuple[str, ...]:
    path = fragment.source.path.lower()
    return tuple(word for word in words if word in path)


def _score(named: Sequence[str], matched: Sequence[str], terms: Sequence[str]) -> float:
    """Path words count most; the share of query terms in the text (below 1) breaks ties."""
    return round(len(named) + len(matched) / (len(terms) + 1), 6)
