"""What every evaluation shares: the objects of a JSON-lines file, each mistake one line
naming the file and line; and why a strategy has no figures.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import cast

from contextpipe import ContextpipeError


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    """(line number, object) of each non-blank line of a JSON-lines file."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                parsed: object = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ContextpipeError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(parsed, dict):
                raise ContextpipeError(f"{path}:{number}: not a JSON object")
            yield number, cast(dict[str, object], parsed)


def why_not(name: str, reports: Iterable[Mapping[str, tuple[str, str]]]) -> str:
    """The first reason strategy `name` gave for not running, as `status: reason`, from
    each request's reports (strategy name -> status and reason).
    """
    for report in reports:
        if name in report:
            status, reason = report[name]
            return f"{status}: {reason}"
    return "no report"
