"""What the embedded store's schema and its keyword index (`_text_index`) share: the
tokenizer of the text index, the keyword index's tables, and how user text is quoted for
FTS5. Kept apart so that opening a store does not import numpy, which only a search or a
write needs.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The text index's tokenizer; the FTS5 table and the keyword index's stemming use it.
TOKENIZE = "porter unicode61 remove_diacritics 2"

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
