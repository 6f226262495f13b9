"""Robot keywords that start the real `contextpipe serve` and call it over HTTP (httpx), as a
client in another process would.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from concurrent.futures import Future
from typing import Any

import httpx

#: Starting (imports, the pipeline opened) and warming up take seconds on a busy machine;
#: a minute is ten times that.
PATIENCE_S = 60.0


class Service:
    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lines: list[str] = []
        self._url = ""
        self._pending: dict[str, Future[httpx.Response]] = {}

    def start_the_service(self, project: str, *args: str, **env: str) -> str:
        """`contextpipe serve --port 0 ARGS` in `project`, with `env:NAME=value` added to
        its environment; its URL once it listens.
        """
        environment = {**os.environ, **{name.removeprefix("env:"): v for name, v in env.items()}}
        self._lines = []
        self._process = subprocess.Popen(
            ["contextpipe", "serve", "--port", "0", *args],
            cwd=project,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        announced: Future[str] = Future()
        threading.Thread(target=self._read, args=(announced,), daemon=True).start()
        try:
            self._url = announced.result(timeout=PATIENCE_S)
        except Exception:
            self._process.kill()
            raise AssertionError(f"the service did not start: {self.service_output()}") from None
        return self._url

    def _read(self, announced: Future[str]) -> None:
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            self._lines.append(line.rstrip("\n"))
            found = re.search(r"serving on (http://\S+)", line)
            if found and not announced.done():
                announced.set_result(found.group(1))
        if not announced.done():
            announced.set_exception(RuntimeError("the service exited"))

    def service_url(self) -> str:
        return self._url

    def service_output(self) -> str:
        """What the service wrote to stderr so far."""
        return "\n".join(self._lines)

    def wait_until_ready(self) -> None:
        """Poll `/readyz` until it answers 200."""
        end = time.monotonic() + PATIENCE_S
        while time.monotonic() < end:
            if httpx.get(f"{self._url}/readyz").status_code == 200:
                return
            time.sleep(0.1)
        raise AssertionError("the service never became ready")

    def call_the_service(
        self, method: str, path: str, body: Any = None, token: str = ""
    ) -> httpx.Response:
        """One request; `body` (a dict, a list or a JSON string) is sent as JSON, `token` as
        the bearer token.
        """
        return self._send(method, path, body, token)

    def _send(self, method: str, path: str, body: Any, token: str = "") -> httpx.Response:
        content = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
        headers = {"content-type": "application/json"} if content is not None else {}
        if token:
            headers["authorization"] = f"Bearer {token}"
        return httpx.request(
            method, f"{self._url}{path}", content=content, headers=headers, timeout=PATIENCE_S
        )

    def send_in_the_background(self, name: str, method: str, path: str, body: Any = None) -> None:
        """Start a request on a thread; `Answer To` waits for its response."""
        future: Future[httpx.Response] = Future()

        def run() -> None:
            try:
                future.set_result(self._send(method, path, body))
            except Exception as exc:
                future.set_exception(exc)

        threading.Thread(target=run, daemon=True).start()
        self._pending[name] = future

    def answer_to(self, name: str) -> httpx.Response:
        return self._pending.pop(name).result(timeout=PATIENCE_S)

    def stop_the_service(self) -> int:
        """SIGTERM, then its exit status once it ended."""
        assert self._process is not None
        self._process.send_signal(signal.SIGTERM)
        try:
            return self._process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            raise AssertionError("the service did not stop on SIGTERM") from None

    # -- the Python client ----------------------------------------------------------------

    def a_client(self, token: str = "") -> Any:
        """`contextpipe.Client` of the running service (with `token`, if given)."""
        import contextpipe

        return contextpipe.Client(self._url, token=token or None)

    def assemble_in_process(self, project: str, query: str, budget: int) -> Any:
        """`Pipeline.assemble` of the project's store, in this process."""
        import contextpipe

        pipeline = contextpipe.Pipeline.open(project_dir=project)
        try:
            return pipeline.assemble(query, budget=int(budget))
        finally:
            pipeline.close()
