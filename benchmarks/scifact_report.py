"""SciFact (BEIR, train split): `contextpipe eval beir` on the shared evaluation data.

Run from the repository root, in the environment contextpipe is installed in:

    python -m benchmarks.scifact_report                        # data from CONTEXTPIPE_EVAL_DATA
    python -m benchmarks.scifact_report --data ../shared/data --format json
    python -m benchmarks.scifact_report --limit 100            # the first 100 queries only

This script only finds the data: `--data`, else `$CONTEXTPIPE_EVAL_DATA`, else
`../shared/data` next to the repository, each either the folder holding `scifact/` or
`scifact/` itself. It then runs `contextpipe eval beir FOLDER --split train` with its other
arguments (`--limit N`, `--format json`, ...); the method and the figures are that
command's (docs/evaluation.md). The data is read where it lies, never copied. The settings
measured are the defaults (whatever config.toml lies in the working directory), or those of
`--config FILE`.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import contextpipe
from contextpipe.faces.cli import cli

_REPOSITORY = Path(__file__).resolve().parent.parent


def data_folder(given: Path | None) -> Path:
    """The SciFact folder: `given`, `$CONTEXTPIPE_EVAL_DATA` or `../shared/data`, each either
    the folder holding `scifact/` or `scifact/` itself.
    """
    environ = os.environ.get("CONTEXTPIPE_EVAL_DATA")
    base = given or (Path(environ) if environ else _REPOSITORY.parent / "shared" / "data")
    for folder in (base, base / "scifact"):
        if (folder / "corpus.jsonl").is_file():
            return folder
    raise SystemExit(f"scifact_report: no corpus.jsonl in {base} or {base / 'scifact'}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--config", type=Path, default=None, help="settings (else the defaults)")
    args, rest = parser.parse_known_args(argv)
    folder = data_folder(args.data).resolve()
    config = ["--config", str(args.config.resolve())] if args.config else []
    print(
        f"contextpipe {contextpipe.__version__}, Python {platform.python_version()}; "
        f"SciFact train from {folder}; settings: {args.config or 'the defaults'}",
        file=sys.stderr,
    )
    # An empty working directory: no ./config.toml is read unless --config names one.
    with tempfile.TemporaryDirectory(prefix="contextpipe-scifact-") as empty:
        os.chdir(empty)
        arguments = [*config, "eval", "beir", str(folder), "--split", "train", *rest]
        cli.main(arguments, prog_name="contextpipe")


if __name__ == "__main__":
    main()
