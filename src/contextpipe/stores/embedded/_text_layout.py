"""What the embedded store's schema and its keyword index (`_text_index`) share: the
tokenizer of the text index, what a searchable fragment's columns hold, the keyword
index's tables, and how user text is quoted for FTS5. Kept apart so that opening a store
does not import numpy, which only a search or a write needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...text.words import identifier_words

#: The text index's tokenizer; the FTS5 table and the keyword index's stemming use it.
TOKENIZE = "porter unicode61 remove_diacritics 2"

# A word with an underscore in it; `_joined` keeps those of two parts or more.
_UNDERSCORED = re.compile(r"\b\w*_\w*")


def _joined(word: str) -> str:
    """A snake_case identifier with its parts joined (`table_data` -> `tabledata`), or ''."""
    parts = [part for part in word.split("_") if part]
    return "".join(parts) if len(parts) > 1 else ""


def joined_identifiers(text: str) -> str:
    """Every snake_case identifier of `text`, its parts joined, space-separated."""
    if "_" not in text:  # most prose: a third of the time of the search below
        return ""
    return " ".join(filter(None, map(_joined, _UNDERSCORED.findall(text))))


def search_columns(title: str, text: str) -> tuple[str, str, str]:
    """The FTS5 columns of a searchable fragment: its title, its text, and the words of its
    text's identifiers. The title and the words also hold each compound identifier's words
    (`BudgetAllocator`, `budget_allocator`: `budget allocator`) and each snake_case one
    joined (`budget_allocator`: `budgetallocator`, the one token FTS5 makes of
    `BudgetAllocator`), so that a query's snake_case identifier is one rare token
    (`query_token`), found in either spelling, instead of a phrase of common words, which
    FTS5 takes 10-40 ms to find and score at 100k fragments.
    """
    return (
        with_joined(f"{title} {identifier_words(title)}", title),
        text,
        with_joined(identifier_words(text), text),
    )


def with_joined(column: str, source: str) -> str:
    """A column followed by the joined snake_case identifiers of `source`; a column of
    layout 10 (without them) becomes the column of today's (`source`: its title, or the
    fragment's text for the identifier words).
    """
    return f"{column} {joined_identifiers(source)}"


def query_token(term: str) -> str:
    """A query term as the columns hold it: a snake_case identifier joined, others as they are."""
    if "_" in term and " " not in term and (joined := _joined(term)):
        return joined
    return term


#: The keyword index's tables (see `_text_index` for what each holds).
TEXT_SCHEMA = """
CREATE TABLE IF NOT EXISTS text_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS text_snapshot (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS text_postings (
    id INTEGER PRIMARY KEY, docs BLOB NOT NULL, counts BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS text_segments (
    id INTEGER PRIMARY KEY, documents INTEGER NOT NULL, rowids BLOB NOT NULL,
    lengths BLOB NOT NULL, docs BLOB NOT NULL, terms BLOB NOT NULL, counts BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS text_removed (rowid INTEGER PRIMARY KEY);
"""

TEXT_TABLES = ("text_terms", "text_snapshot", "text_postings", "text_segments", "text_removed")

#: Meta rows of the keyword index: the highest rowid it has held, and a number that grows
#: with every new snapshot (a reader's cached view is of one snapshot).
TEXT_META = (
    "INSERT INTO meta(key, value) VALUES ('text_floor', '0')",
    "INSERT INTO meta(key, value) VALUES ('text_snapshot', '0')",
)


def fts_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the terms, each one quoted so that no user text is
    ever read as FTS syntax (operators, column filters, `*`, parentheses).
    """
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
