"""Projects made of real code copied from installed packages, and questions about them.

- **vendored**: the same packages three times (`vendor_a/`, `vendor_b/`, `vendor_c/`), as a
  repository that vendors its dependencies; every hit has two byte-identical twins.
- **requests-rich**: requests and rich side by side (issue 7, point 11).
- **stdlib**: the interpreter's standard library, indexed in place as `bench_index` does
  (about 100k searchable fragments of real code: classes whose methods overlap them).

The copies come from the running interpreter's site-packages, so the figures depend on the
installed versions; the build record lists them.
"""

from __future__ import annotations

import time
from pathlib import Path

from ._stores import Stats, copy_packages, index_project
from .bench_index import EXCLUDE, stdlib_path

VENDORED_PACKAGES = ("requests", "rich", "click", "pydantic", "urllib3")
VENDOR_COPIES = ("vendor_a", "vendor_b", "vendor_c")

#: Natural questions a developer asks about the vendored packages.
VENDORED_QUESTIONS = (
    # requests
    "where are HTTP redirects handled",
    "how are cookies stored and sent with a request",
    "how is basic authentication added to a request",
    "how does a session reuse connections",
    "how are request timeouts configured",
    "how is the response body decoded to text",
    "how are proxies chosen from environment variables",
    # urllib3
    "how does the connection pool limit connections per host",
    "how are failed requests retried with backoff",
    "how is the TLS certificate verified",
    "how are chunked responses read",
    "how are multipart form fields encoded",
    # rich
    "how is a progress bar rendered",
    "how are tables drawn with borders",
    "how is console markup parsed into styles",
    "how does syntax highlighting pick a lexer",
    "how is text wrapped to the terminal width",
    "how are tracebacks pretty printed",
    "how does the live display refresh the screen",
    "how is the terminal color system detected",
    # click
    "how are command line options parsed",
    "how are subcommands grouped",
    "how is the user prompted for input",
    "how do environment variables provide option defaults",
    "how is help text formatted",
    "how are file arguments opened lazily",
    # pydantic
    "how are model fields validated",
    "how is a model serialized to JSON",
    "how are validation errors reported",
    "how is model configuration set",
    "how does the field validator decorator work",
    "how are generic models parametrized",
)

#: Natural questions about the standard library.
STDLIB_QUESTIONS = (
    "where are HTTP redirects handled",
    "how does json encode floats",
    "how is a subprocess started and its output read",
    "how are log records formatted",
    "how does the thread pool executor shut down",
    "how are command line arguments parsed",
    "how is a zip file read",
    "how does the event loop schedule callbacks",
    "how are email headers parsed",
    "how are temporary files created and deleted",
    "how are dates parsed from strings",
    "how does pickle serialize objects",
    "how is a URL split into its parts",
    "how are unit tests discovered",
    "how does the csv reader handle quoting",
    "how is a TLS socket wrapped",
    "how are regular expressions compiled",
    "how does the dataclass decorator generate methods",
    "how are configuration files parsed",
    "how are files copied with their metadata",
)

REQUESTS_RICH_PACKAGES = ("requests", "rich")
#: The query of issue 7, point 11, and its budget.
REDIRECT_QUERY = "where are HTTP redirects handled"
REDIRECT_BUDGET = 8000


def build_vendored(root: Path) -> Stats:
    """Copy `VENDORED_PACKAGES` into each of `VENDOR_COPIES` under `root` and index them."""
    started = time.perf_counter()
    versions = {}
    for copy in VENDOR_COPIES:
        versions = copy_packages(root / copy, VENDORED_PACKAGES)
    copied = time.perf_counter() - started
    stats = index_project(root, [root / copy for copy in VENDOR_COPIES])
    return {"packages": versions, "copies": len(VENDOR_COPIES), "copy_s": round(copied, 2), **stats}


def build_requests_rich(root: Path) -> Stats:
    """Copy requests and rich to `root/requests` and `root/rich` and index both."""
    started = time.perf_counter()
    versions = copy_packages(root, REQUESTS_RICH_PACKAGES)
    copied = time.perf_counter() - started
    stats = index_project(root, [root / name for name in REQUESTS_RICH_PACKAGES])
    return {"packages": versions, "copy_s": round(copied, 2), **stats}


def build_stdlib(root: Path) -> Stats:
    """Index the standard library in place into `root/.contextpipe` (without installed
    packages).
    """
    return index_project(root, [stdlib_path()], {"ingest.exclude": EXCLUDE})
