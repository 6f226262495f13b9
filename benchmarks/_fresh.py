"""Measurements that need a process of their own: peak memory that nothing before counted,
or the first searches of a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def in_fresh_process(module: str, function: str, *args: str | int) -> dict[str, Any]:
    """`module.function(*args)` (its result a JSON object) in a new interpreter, run from
    the repository root; integers are passed back as integers.
    """
    code = (
        f"import json, sys; from {module} import {function};"
        " args = [int(a) if a.lstrip('-').isdigit() else a for a in sys.argv[1:]];"
        f" print(json.dumps({function}(*args)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found
