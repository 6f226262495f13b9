"""behave hooks: every scenario gets its own temporary project folder, cleaned up after it."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from behave.model import Scenario
from behave.runner import Context
from hypothesis.configuration import set_hypothesis_home_dir

from contextpipe.core.logs import configure_logging


def before_all(context: Context) -> None:
    context.session_tmp = Path(tempfile.mkdtemp(prefix="contextpipe-behave-"))
    # Hypothesis keeps caches in a folder; keep it out of the repository.
    set_hypothesis_home_dir(context.session_tmp / "hypothesis")
    # The tokenizer cache too (it would go to ~/.cache/contextpipe), for this process and
    # every contextpipe command it starts.
    os.environ["XDG_CACHE_HOME"] = str(context.session_tmp / "cache")
    # Where scenarios install throwaway plugins (`testkit.install_distribution`), on
    # sys.path for the whole run: a sys.path that changes while plugins import on threads
    # lets coverage's tracer take a module being imported out of sys.modules (coveragepy
    # issue 2247: "import failed: KeyError: 'cp_second_wakes_module'" once in CI).
    context.site = context.session_tmp / "site-packages"
    context.site.mkdir()
    sys.path.insert(0, str(context.site))
    importlib.invalidate_caches()
    configure_logging("warning")


def after_all(context: Context) -> None:
    sys.path.remove(str(context.site))
    set_hypothesis_home_dir(None)
    shutil.rmtree(context.session_tmp, ignore_errors=True)


def before_scenario(context: Context, scenario: Scenario) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="contextpipe-scenario-"))
    # Cleanups run last-registered first: the folder goes after everything that used it.
    context.add_cleanup(shutil.rmtree, tmp, ignore_errors=True)
    context.tmp = tmp
    context.project = tmp / "project"
    context.project.mkdir()
    context.environ = {}
    context.overrides = {}
    context.pipeline = None
    context.fragments = {}
    context.strategies = {}
    context.result = None
    context.error = None
