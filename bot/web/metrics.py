"""`GET /metrics`: Prometheus's text format, for a bearer token (METRICS_TOKEN or one of
TANDEM_API_TOKENS). What each process measured (bot.core.metrics: webhook, turn and LLM call
latencies, LLM calls by outcome; summed over processes with PROMETHEUS_MULTIPROC_DIR) and what
the database holds at scrape time, so every process answers the same: queue depths, outbox
messages by status, timers due and overdue, open and unattended alerts and review items, failed
turns and each readiness state (1 = degraded)."""

from __future__ import annotations

from collections.abc import Iterator
from time import perf_counter
from typing import Any

from flask import Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from bot.core import metrics
from bot.core.config import Settings
from bot.services import readiness
from bot.store.reads import readiness as reads
from bot.store.services import Services
from bot.web.auth import authenticate, matches
from bot.web.current import services

WEBHOOKS = "/webhooks/twilio/"


class DatabaseFigures:
    """A collector reading the readiness figures at each scrape."""

    def __init__(self, current: Services) -> None:
        self.current = current

    def collect(self) -> Iterator[Metric]:
        s = self.current
        with s.store.reading() as conn:
            f = reads.figures(conn, s.clock.now(), readiness.limits(s.settings))
        gauges = {
            "tandem_work_items_pending": ("Work items waiting for a worker", f.pending_work),
            "tandem_work_items_parked": ("Work items parked after their last retry", f.parked_work),
            "tandem_outbox_pending": ("Messages waiting to be sent", f.pending_sends),
            "tandem_timers_due": ("Scheduled timers already due", f.due_timers),
            "tandem_timers_overdue": (
                "Timers over 5 minutes late",
                f.overdue_timers,
            ),
            "tandem_alerts_open": ("Alerts not resolved (review items aside)", f.open_alerts),
            "tandem_alerts_unattended": ("Alerts unacknowledged in time", f.unattended_alerts),
            "tandem_reviews_open": ("Review items nobody cleared yet", f.open_reviews),
            "tandem_reviews_unattended": (
                "Review items open past their escalation",
                f.unattended_reviews,
            ),
            "tandem_turns_failed_last_hour": (
                "Turns failed in the last hour",
                f.failed_turns,
            ),
        }
        for name, (doc, value) in gauges.items():
            yield GaugeMetricFamily(name, doc, value=value)
        yield _by_label(
            "tandem_outbox_messages", "Outbox messages by status", "status", f.sends_by_status
        )
        yield _by_label(
            "tandem_llm_calls_recorded",
            "llm.called events in the database by outcome",
            "outcome",
            f.llm_by_outcome,
        )
        degraded = GaugeMetricFamily(
            "tandem_degraded", "Readiness states (1 = degraded), as GET /ready", labels=["state"]
        )
        for state in readiness.judge(f, s.settings):
            degraded.add_metric([state.name], 1 if state.degraded else 0)
        yield degraded


def allowed(settings: Settings, header: str | None) -> bool:
    scheme, _, presented = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        return False
    if settings.metrics_token and matches(presented.strip(), [settings.metrics_token]):
        return True
    return bool(settings.api_tokens) and authenticate(settings, header) is not None


def exposition(current: Services) -> bytes:
    registry = CollectorRegistry()
    if metrics.multiprocess():
        MultiProcessCollector(registry)
    else:
        for metric in metrics.IN_PROCESS:
            registry.register(metric)
    registry.register(DatabaseFigures(current))
    return generate_latest(registry)


def register(app: Flask) -> None:
    @app.route("/metrics")
    def scrape() -> Any:
        current = services()
        if not allowed(current.settings, request.headers.get("Authorization")):
            answer = Response("a bearer token (METRICS_TOKEN or an API token) is needed\n", 401)
            answer.headers["WWW-Authenticate"] = 'Bearer realm="tandem"'
            return answer
        return Response(exposition(current), mimetype=CONTENT_TYPE_LATEST)

    @app.before_request
    def _started() -> None:
        if request.path.startswith(WEBHOOKS):
            g.webhook_started = perf_counter()

    @app.after_request
    def _observed(response: Response) -> Response:
        started = g.pop("webhook_started", None)
        if started is not None:
            name = request.path.removeprefix(WEBHOOKS).split("/", 1)[0] or "other"
            metrics.WEBHOOK_SECONDS.labels(name).observe(perf_counter() - started)
        return response


def _by_label(name: str, doc: str, label: str, counts: dict[str, int]) -> GaugeMetricFamily:
    """A gauge with one sample per key of `counts`, labelled `label`."""
    family = GaugeMetricFamily(name, doc, labels=[label])
    for key, n in sorted(counts.items()):
        family.add_metric([key], n)
    return family
