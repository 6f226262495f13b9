"""The service face: one warm `Pipeline` behind HTTP, for callers in other processes.

`app` builds the HTTP API (FastAPI) over a pipeline; `admission` bounds how many requests
run and wait at once; `running` serves it with uvicorn until SIGTERM. Like the command
line, it imports only the package root: an endpoint is a few lines over `Pipeline`.
"""

from __future__ import annotations

from .app import create_app
from .running import LOOPBACK, serve

__all__ = ["LOOPBACK", "create_app", "serve"]
