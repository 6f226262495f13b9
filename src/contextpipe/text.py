"""Text analysis shared by every store backend and strategy, so that all of them read a
query and a fragment the same way.

- A query's terms are its quoted phrases, then its words, lower-cased, without stopwords,
  deduplicated, in order of appearance, at most `MAX_QUERY_TERMS`.
- An identifier also counts as the words it is made of: `BudgetAllocator` and
  `budget_allocator` both say `budget allocator`, so a question in plain words finds code.
- Stemming is the text index's business (the embedded store's FTS5 uses Porter); terms here
  are whole words, so that every backend can stem them its own way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

#: The most terms a query is searched for; longer queries keep their first terms.
MAX_QUERY_TERMS = 32

# Words too common to say anything about relevance; they only slow OR queries down.
_STOPWORDS = frozenset(
    (
        "a an and are as at be but by do does for from has have how i if in into is it its of on"
        " or so than that the their then there these this to was we what when where which who why"
        " will with you your"
    ).split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]+)"')
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def identifier_words(text: str) -> str:
    """The words of every compound identifier in `text`, space-separated
    (`BudgetAllocator.allocate` -> `budget allocator`); plain words add nothing.
    """
    return " ".join(filter(None, map(_word_parts, _WORD.findall(text))))


@lru_cache(maxsize=200_000)
def _word_parts(word: str) -> str:
    """`BudgetAllocator` -> `budget allocator`; '' for a word that is not compound. Code
    repeats its identifiers endlessly, so this is cached per word.
    """
    pieces = _IDENTIFIER_PART.findall(word)
    if len(pieces) > 1 or "_" in word:
        return " ".join(piece.lower() for piece in pieces)
    return ""


def query_terms(query: str) -> list[str]:
    """The search terms of a user query (see the module docstring)."""
    terms: list[str] = []
    for phrase in _PHRASE.findall(query):
        words = [w.lower() for w in _WORD.findall(phrase)]
        if len(words) > 1:
            terms.append(" ".join(words))
    for word in _WORD.findall(_PHRASE.sub(" ", query)):
        # Split before lower-casing: `BudgetAllocator` also searches `budget` and `allocator`.
        terms.extend([word.lower(), *identifier_words(word).split()])
    informative = [t for t in terms if t not in _STOPWORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(informative or terms))[:MAX_QUERY_TERMS]


def matched_terms(terms: Sequence[str], text: str) -> tuple[str, ...]:
    """The terms that occur in `text` or in the words of its identifiers."""
    lowered = text.lower()
    # An identifier's words are pieces of it, so a term without a space is in them only if
    # it is in the text: only phrases need them (splitting a long text costs).
    words: list[str] = []

    def found(term: str) -> bool:
        if term in lowered:
            return True
        if " " not in term:
            return False
        if not words:
            words.append(identifier_words(text))
        return term in f"{lowered} {words[0]}"

    return tuple(term for term in terms if found(term))
