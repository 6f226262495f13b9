"""`GET /metrics` in the Prometheus text format (prometheus-client): requests in flight and
waiting, each strategy's latency and outcomes, refusals, and chat fallbacks by reason.

Each app has a registry of its own, so that two services in one process (tests) never
mix their counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ... import AssembledContext, ChatContext, StrategyReport
from .admission import Admission

#: Seconds: a strategy's latency from 1 ms to its default deadline (3 s).
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0)


class Metrics:
    def __init__(self, admission: Admission) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        in_flight = Gauge(
            "contextpipe_requests_in_flight", "Requests being served.", registry=self.registry
        )
        in_flight.set_function(lambda: admission.in_flight)
        queued = Gauge(
            "contextpipe_requests_queued", "Requests waiting for a turn.", registry=self.registry
        )
        queued.set_function(lambda: admission.waiting)
        self.refused = Counter(
            "contextpipe_requests_refused",
            "Requests refused with 503 because every slot and the queue were taken.",
            registry=self.registry,
        )
        self._latency = Histogram(
            "contextpipe_strategy_seconds",
            "Each strategy's time in a request.",
            ["strategy"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._outcomes = Counter(
            "contextpipe_strategy_outcomes",
            "Each strategy's outcome in a request: ok, timeout, skipped or error.",
            ["strategy", "status"],
            registry=self.registry,
        )
        self._fallbacks = Counter(
            "contextpipe_chat_fallbacks",
            "Chat requests answered with their messages unchanged, by reason: busy, deadline,"
            " store_unavailable, no_room or error.",
            ["reason"],
            registry=self.registry,
        )

    def observe_chat(self, context: ChatContext) -> None:
        reason = context.metadata.fallback_reason
        if reason:
            self._fallbacks.labels(reason.partition(":")[0]).inc()
        self._observe_strategies(context.strategies)

    def observe(self, context: AssembledContext) -> None:
        self._observe_strategies(context.strategies)

    def _observe_strategies(self, reports: Sequence[StrategyReport]) -> None:
        for report in reports:
            self._outcomes.labels(report.name, report.status).inc()
            if report.status != "skipped":
                self._latency.labels(report.name).observe(report.elapsed_ms / 1000)

    def text(self) -> bytes:
        return generate_latest(self.registry)
