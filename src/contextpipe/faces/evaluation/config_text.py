"""Writing tuned settings into the user's `config.toml`, keeping everything else as it is.

tomli-w writes values, not comments, so the file's text is kept and only the tuned keys'
lines are written (by tomli-w). Rules:

1. A tuned key whose table (`[fusion]`, `[strategies.NAME]`, ...) has a line for it gets
   that line replaced; a table without one gets it as its first key; a missing table is
   added at the end of the file. Every other line stays as it was, comments included.
2. A note saying what was tuned, on what and the scores goes at the top of the file, each
   line starting with `NOTE_PREFIX`; the lines of an earlier note are removed first, so
   that tuning again leaves one note.
3. The result must read back as the user's settings with the tuned values set and nothing
   else changed; when the file's layout does not allow that (a tuned key set as a dotted
   key of another table, an inline table, ...), nothing is written: a `ContextpipeError`
   names the file and the values to set by hand.
4. Same text, values and note: the same bytes.
"""

from __future__ import annotations

import copy
import textwrap
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import tomli_w

from contextpipe import ContextpipeError

from .beir import BeirSet
from .tuning import Tuning

NOTE_PREFIX = "# [contextpipe tune] "
_WIDTH = 92


def tuned_config(path: Path, values: Mapping[str, float | int], note: str) -> str:
    """The text of config file `path` (empty when there is none) with `values` (dotted key
    -> value) set and `note` at the top (see the module rules).
    """
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        expected: dict[str, Any] = copy.deepcopy(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ContextpipeError(f"{path}: invalid TOML: {exc}") from None
    lines = [line for line in text.splitlines() if not line.startswith(NOTE_PREFIX)]
    for dotted, value in values.items():
        *table, key = dotted.split(".")
        _set(expected, [*table, key], value)
        lines = _placed(lines, tuple(table), key, value)
    wrapped = textwrap.wrap(
        note, _WIDTH - len(NOTE_PREFIX), break_long_words=False, break_on_hyphens=False
    )
    noted = [NOTE_PREFIX + line for line in wrapped]
    result = "\n".join([*noted, *lines]).rstrip("\n") + "\n"
    try:
        readable = tomllib.loads(result) == expected
    except tomllib.TOMLDecodeError:
        readable = False
    if not readable:
        wanted = ", ".join(f"{key} = {value}" for key, value in values.items())
        raise ContextpipeError(
            f"{path}: cannot write the tuned settings into this file's layout (a tuned key is "
            f"set as a dotted key or inline table elsewhere); set them yourself: {wanted}"
        )
    return result


def tuning_note(tuning: Tuning, data: BeirSet) -> str:
    """What was tuned, on what, and the scores before and after."""
    settings = ", ".join(f"{key}={value}" for key, value in tuning.best.values.items())
    return (
        f"Tuned for nDCG@10 of the assembled context on the BEIR folder "
        f"{data.folder.resolve()}, split {data.split} ({tuning.queries} judged queries): "
        f"{tuning.baseline.ndcg_10:.4f} with the settings before, {tuning.best.ndcg_10:.4f} "
        f"with {settings}. The other settings are as they were."
    )


def _set(data: dict[str, Any], path: Sequence[str], value: object) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {})
    data[path[-1]] = value


def _placed(lines: list[str], table: tuple[str, ...], key: str, value: object) -> list[str]:
    """`lines` with `key = value` in `table` (rule 1)."""
    headers = [(number, found) for number, line in enumerate(lines) if (found := _header(line))]
    start = next((number for number, found in headers if found == table), None)
    if start is None:
        nested: dict[str, Any] = {}
        _set(nested, [*table, key], value)
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        return [*lines, *([""] if lines else []), *tomli_w.dumps(nested).splitlines()]
    end = next((number for number, _ in headers if number > start), len(lines))
    assignment = tomli_w.dumps({key: value}).rstrip("\n")
    for number in range(start + 1, end):
        if _assigned_key(lines[number]) == key:
            return [*lines[:number], assignment, *lines[number + 1 :]]
    return [*lines[: start + 1], assignment, *lines[start + 1 :]]


def _header(line: str) -> tuple[str, ...] | None:
    """The table a `[table]` line opens (`("",)` for an array of tables), else None."""
    stripped = line.strip()
    if not stripped.startswith("["):
        return None
    if stripped.startswith("[["):
        return ("",)
    try:
        data = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while len(data) == 1:
        name, inner = next(iter(data.items()))
        path.append(name)
        if not isinstance(inner, dict):
            break
        data = cast(dict[str, Any], inner)
    return tuple(path)


def _assigned_key(line: str) -> str | None:
    """The bare key a `key = value` line sets (not a dotted key), else None."""
    try:
        data = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return None
    if len(data) != 1:
        return None
    key, value = next(iter(data.items()))
    return None if isinstance(value, dict) else key
