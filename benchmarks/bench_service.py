"""The service under load (issue 32): `contextpipe serve` started for real on a benchmark
store, called over loopback HTTP by concurrent clients, against an in-process `assemble`
of the same requests measured in the same run.

- latency percentiles (p50/p95/p99, client-side, ms) at 1, 8 and 32 concurrent clients,
  and the errors among them (any answer but 200);
- the service's own overhead: its p50 at one client less the in-process p50 (target
  2 ms), and the part of it the assembly itself loses inside the service (the
  `elapsed_ms` its answers report, less the same in process);
- RSS of the service after a warm-up and after each of two rounds of `RSS_REQUESTS` more
  (target: flat; the first round may fill bounded caches, the second must not grow);
- the chat endpoint at a 48 ms deadline with two misbehaving strategies installed (one
  raises, one hangs: `robot/fixtures/plugins/misbehaving_plugin.py`): p50/p99 against the
  deadline (target p99 <= deadline + 5 ms on an idle machine), and the fallbacks.

The load is loopback only and stops by itself. Each client is a thread with its own
connection (httpx); the clients share the machine with the service, so on 2 cores 32
clients measure queueing as much as serving.

    python -m benchmarks.bench_service PROJECT              # a store built by latency_report
    python -m benchmarks.bench_service PROJECT --rss-requests 10000 --requests 200

asv (`ServiceLoad`) runs the latency part on the 10k corpus (1k quick).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

import contextpipe

from ._corpus import BUDGET, QUICK, build_corpora, latency_queries, memoized

CLIENTS = (1, 8, 32)
#: Requests each client sends per level (a level's percentiles are over clients x this).
REQUESTS = 20 if QUICK else 100
RSS_REQUESTS = 10_000
#: Turns of in-process, then service, p50 the overhead is the median difference of.
OVERHEAD_ROUNDS = 3 if QUICK else 5
DEADLINE_MS = 48
_PLUGIN = Path(__file__).resolve().parents[1] / "robot" / "fixtures" / "plugins"
_PATIENCE_S = 120.0
#: The command of the interpreter running this (asv runs the installed package).
_COMMAND = str(Path(sys.executable).with_name("contextpipe"))


@contextmanager
def running_service(project: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """`contextpipe serve --port 0` in `project`, ready; its URL and process id."""
    process = subprocess.Popen(
        [_COMMAND, "serve", "--port", "0"],
        cwd=project,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        url = ""
        for line in process.stderr:
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        if not url:
            raise RuntimeError("the service did not start")
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
        give_up = time.monotonic() + _PATIENCE_S
        while httpx.get(f"{url}/readyz").status_code != 200:
            if time.monotonic() > give_up:
                raise RuntimeError("the service did not get ready")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=_PATIENCE_S)


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    at = lambda share: ordered[min(len(ordered) - 1, int(share * len(ordered)))]  # noqa: E731
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(at(0.95), 2),
        "p99": round(at(0.99), 2),
    }


def load(
    url: str, path: str, bodies: Sequence[dict[str, Any]], clients: int, reported: bool = False
) -> dict[str, Any]:
    """`clients` threads, each sending every body once, in its own order; latencies (ms).
    With `reported`, also the p50 of the `elapsed_ms` the answers report (the assembly's
    own time inside the service; parsing them costs the client CPU, hence off by default).
    """
    latencies: list[float] = []
    inside: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def client(offset: int) -> None:
        with httpx.Client(base_url=url, timeout=_PATIENCE_S) as http:
            for index in range(len(bodies)):
                body = bodies[(index + offset) % len(bodies)]
                started = time.perf_counter()
                answer = http.post(path, json=body)
                took = (time.perf_counter() - started) * 1000
                ok = reported and answer.status_code == 200  # parsed outside the lock
                elapsed: float | None = answer.json()["elapsed_ms"] if ok else None
                with lock:
                    latencies.append(took)
                    statuses[answer.status_code] += 1
                    if elapsed is not None:
                        inside.append(elapsed)

    threads = [threading.Thread(target=client, args=(n * 7,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    errors = sum(count for status, count in statuses.items() if status != 200)
    counts = {"clients": clients, "requests": len(latencies), "errors": errors}
    if inside:
        counts["reported_p50"] = round(statistics.median(inside), 2)
    return counts | _percentiles(latencies)


@contextmanager
def in_process(project: str) -> Iterator[contextpipe.Pipeline]:
    """The pipeline the service runs, opened and warmed up in this process as it does."""
    pipeline = contextpipe.Pipeline.open(project_dir=project)
    try:
        pipeline.warm_up()
        # As the service does after its warm-up: else this side alone pays the collector's
        # passes over the warmed-up graph, which hides the service's own cost.
        gc.freeze()
        yield pipeline
    finally:
        pipeline.close()


def load_in_process(
    pipeline: contextpipe.Pipeline, bodies: Sequence[dict[str, Any]]
) -> dict[str, float]:
    """The same requests assembled in this process: latencies (ms) as `load` gives them,
    and the p50 of the `elapsed_ms` their answers report."""
    took: list[float] = []
    reported: list[float] = []
    for body in bodies:
        started = time.perf_counter()
        found = pipeline.assemble(body["query"], budget=body["budget"])
        took.append((time.perf_counter() - started) * 1000)
        reported.append(found.elapsed_ms)
    return _percentiles(took) | {"reported_p50": round(statistics.median(reported), 2)}


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return round(int(found.group(1)) / 1024, 1) if found else float("nan")


def measure_load(
    project: str, requests: int = REQUESTS, rss_requests: int = 0, rss_rounds: int = 2
) -> dict[str, Any]:
    """The levels, the overhead (median over `OVERHEAD_ROUNDS` of service p50 less
    in-process p50, the two measured in turn while the other side idles, so both see the
    same machine), and the RSS before and after each of `rss_rounds` x `rss_requests`.
    """
    bodies = [{"query": q, "budget": BUDGET} for q in latency_queries(requests)]
    result: dict[str, Any] = {}
    with running_service(project) as (url, pid), in_process(project) as pipeline:
        load(url, "/v1/assemble", bodies, 1)  # warm: every query once, on both sides
        load_in_process(pipeline, bodies)
        turns = [
            (load_in_process(pipeline, bodies), load(url, "/v1/assemble", bodies, 1, True))
            for _ in range(OVERHEAD_ROUNDS)
        ]

        def gap(key: str) -> float:
            return round(statistics.median(far[key] - near[key] for near, far in turns), 2)

        result["in_process_p50"] = statistics.median(near["p50"] for near, _ in turns)
        result["overhead_p50"] = gap("p50")
        # Of the overhead, what the assembly itself loses inside the service (its reported
        # time, served less in-process); the rest is HTTP, (de)serialising and hand-offs.
        result["assembly_slower_p50"] = gap("reported_p50")
        result["levels"] = [load(url, "/v1/assemble", bodies, n) for n in CLIENTS]
        if rss_requests:
            many = [{"query": q, "budget": BUDGET} for q in latency_queries(rss_requests)]
            readings = [rss_mb(pid)]
            errors = 0
            for _ in range(rss_rounds):
                errors += load(url, "/v1/assemble", many, 4)["errors"]
                readings.append(rss_mb(pid))
            result["rss_mb"] = {"after_each": readings, "errors": errors}
    return result


def measure_deadline(project: str, requests: int = REQUESTS) -> dict[str, Any]:
    """Chat requests at `DEADLINE_MS` with the misbehaving strategies installed."""
    site = Path(tempfile.mkdtemp(prefix="contextpipe-misbehaving-"))
    try:
        shutil.copy(_PLUGIN / "misbehaving_plugin.py", site)
        info = site / "contextpipe_misbehaving-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: contextpipe-misbehaving\nVersion: 0.1\n"
        )
        (info / "entry_points.txt").write_text(
            "[contextpipe.strategies]\nmisbehaving = misbehaving_plugin\n"
        )
        bodies = [
            {
                "model": "gpt-4o",
                "budget": BUDGET,
                "deadline_ms": DEADLINE_MS,
                "messages": [{"role": "user", "content": query}],
            }
            for query in latency_queries(requests)
        ]
        with running_service(project, {"PYTHONPATH": str(site)}) as (url, _):
            took: list[float] = []
            reasons: Counter[str] = Counter()
            with httpx.Client(base_url=url, timeout=_PATIENCE_S) as http:
                for body in bodies[:4] + bodies:
                    started = time.perf_counter()
                    answer = http.post("/v1/chat/assemble", json=body)
                    took.append((time.perf_counter() - started) * 1000)
                    reasons[answer.json()["metadata"]["fallback_reason"] or "none"] += 1
            return {
                "deadline_ms": DEADLINE_MS,
                **_percentiles(took[4:]),
                "fallbacks": dict(reasons),
            }
    finally:
        shutil.rmtree(site, ignore_errors=True)


class ServiceLoad:
    """asv: the service's latency at 1, 8 and 32 clients on the largest quick store."""

    timeout = 1800.0

    def setup_cache(self) -> dict[str, Any]:
        projects = build_corpora()
        size = 1_000 if QUICK else 10_000
        return memoized(projects, f"service-{size}", lambda: _flat(measure_load(projects[size])))

    def track_overhead_p50_ms(self, stats: dict[str, float]) -> float:
        return stats["overhead_p50"]

    def track_p99_32_clients_ms(self, stats: dict[str, float]) -> float:
        return stats["p99_32"]

    def track_errors(self, stats: dict[str, float]) -> float:
        return stats["errors"]


def _flat(result: dict[str, Any]) -> dict[str, float]:
    flat: dict[str, float] = {"overhead_p50": result["overhead_p50"]}
    for level in result["levels"]:
        for key in ("p50", "p95", "p99"):
            flat[f"{key}_{level['clients']}"] = level[key]
    flat["errors"] = float(sum(level["errors"] for level in result["levels"]))
    return flat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--rss-requests", type=int, default=RSS_REQUESTS)
    parser.add_argument("--no-deadline", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(measure_load(args.project, args.requests, args.rss_requests)), flush=True)
    if not args.no_deadline:
        print(json.dumps(measure_deadline(args.project, args.requests)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
