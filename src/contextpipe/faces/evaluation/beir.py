"""Reading a BEIR folder, and writing its corpus as the files contextpipe indexes.

A BEIR folder holds `corpus.jsonl` (one object a line: `_id`, `text`, optional `title`),
`queries.jsonl` (`_id`, `text`) and `qrels/<split>.tsv` (`query-id`, `corpus-id`, `score`,
tab-separated; a first line whose score is not an integer is the header).

Rules:

1. The judged queries are those with at least one qrels row of score > 0, in the order they
   first appear in the qrels file; the others are not asked. Their relevant documents are
   those rows, with the score as gain.
2. Every mistake is a `ContextpipeError` of one line naming the file (and line, and key):
   a missing file, a line that is not a JSON object, a missing or non-string `_id` /
   `text`, a qrels row that is not three columns with an integer score, a judged query
   that `queries.jsonl` does not hold, or no judged query at all.
3. Each document becomes the markdown file `<_id>.md` (the id percent-quoted, so that any
   id is one file name): its title (else its id) as a level-1 heading, a blank line, its
   text. A document's id is read back from the name of the file a fragment came from.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from contextpipe import ContextpipeError

from ._common import json_objects

#: Query id -> {document id -> gain}.
Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class BeirSet:
    """The judged queries of one split of a BEIR folder (see the module rules)."""

    folder: Path
    split: str
    queries: Mapping[str, str]  # judged query id -> its text, in qrels order
    qrels: Qrels

    @property
    def corpus(self) -> Path:
        """The documents, read when they are written out (`write_corpus`)."""
        return self.folder / "corpus.jsonl"

    def first(self, count: int) -> BeirSet:
        """The same set with only its first `count` judged queries."""
        kept = dict(list(self.queries.items())[:count])
        return BeirSet(self.folder, self.split, kept, {q: self.qrels[q] for q in kept})


def read_beir(folder: Path, split: str) -> BeirSet:
    """The judged queries of `folder`'s `split` (see the module rules)."""
    for path in (folder / "corpus.jsonl", folder / "queries.jsonl", _qrels_path(folder, split)):
        if not path.is_file():
            raise ContextpipeError(
                f"{path}: no such file (a BEIR folder holds corpus.jsonl, queries.jsonl "
                "and qrels/<split>.tsv)"
            )
    qrels = _read_qrels(_qrels_path(folder, split))
    texts = {record_id: text for record_id, text, _ in _records(folder / "queries.jsonl")}
    queries: dict[str, str] = {}
    for query_id in qrels:
        if query_id not in texts:
            raise ContextpipeError(
                f"{_qrels_path(folder, split)}: query {query_id!r} is not in "
                f"{folder / 'queries.jsonl'}"
            )
        queries[query_id] = texts[query_id]
    return BeirSet(folder, split, queries, qrels)


def write_corpus(data: BeirSet, target: Path) -> dict[str, str]:
    """Each document as `target/<quoted id>.md`; returns file name -> document id."""
    target.mkdir(parents=True, exist_ok=True)
    names: dict[str, str] = {}
    for document_id, text, title in _records(data.corpus):
        name = f"{_file_stem(document_id)}.md"
        if name in names:
            raise ContextpipeError(f"{data.corpus}: document id {document_id!r} appears twice")
        heading = title.strip() or document_id
        body = f"# {heading}\n\n{text.strip()}\n"
        (target / name).write_text(body, encoding="utf-8")
        names[name] = document_id
    return names


def _qrels_path(folder: Path, split: str) -> Path:
    return folder / "qrels" / f"{split}.tsv"


def _file_stem(document_id: str) -> str:
    """The id as one file name: percent-quoted, and never hidden (a leading dot quoted)."""
    stem = quote(document_id, safe="")
    return "%2E" + stem[1:] if stem.startswith(".") else stem


def _records(path: Path) -> Iterator[tuple[str, str, str]]:
    """(`_id`, `text`, `title`) of each object of a JSON-lines file."""
    for number, record in json_objects(path):
        fields: list[str] = []
        for key in ("_id", "text", "title"):
            value = record.get(key, "" if key == "title" else None)
            if not isinstance(value, str):
                raise ContextpipeError(f'{path}:{number}: "{key}" must be a string')
            fields.append(value)
        yield fields[0], fields[1], fields[2]


def _read_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as rows:
        for number, row in enumerate(csv.reader(rows, delimiter="\t"), start=1):
            if not row or (number == 1 and not _is_integer(row[-1])):
                continue  # blank lines, and the header
            if len(row) != 3 or not _is_integer(row[2]):
                raise ContextpipeError(
                    f"{path}:{number}: expected query-id, corpus-id and an integer score, "
                    "tab-separated"
                )
            query_id, document_id, score = row[0].strip(), row[1].strip(), int(row[2])
            if score > 0:
                qrels.setdefault(query_id, {})[document_id] = score
    if not qrels:
        raise ContextpipeError(f"{path}: no query has a relevant document (score > 0)")
    return qrels


def _is_integer(text: str) -> bool:
    return text.strip().removeprefix("-").isdigit()
