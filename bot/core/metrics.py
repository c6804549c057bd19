"""The metrics each process measures itself (prometheus_client): webhook, turn and LLM call
latencies and LLM calls by outcome. GET /metrics (bot.web.metrics) adds the figures the
database holds at scrape time (queue depths, sends by status, timers, alerts).

With gunicorn and a separate worker process, set PROMETHEUS_MULTIPROC_DIR to one directory
every process of the host can write (emptied before they start): each process then writes its
samples there and /metrics adds them up (prometheus_client's multiprocess mode). Without it,
/metrics reports the serving process's own samples, which is right for `tandem serve`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from time import perf_counter

from prometheus_client import Counter, Histogram

# Seconds: a webhook answers in milliseconds; a turn or an LLM call takes seconds.
_FAST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_SLOW = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 45.0, 90.0)

# registry=None: each scrape builds its own registry (bot.web.metrics), so that tests and
# several apps in one process do not share a global one.
WEBHOOK_SECONDS = Histogram(
    "tandem_webhook_seconds",
    "Time to answer a Twilio webhook",
    ["webhook"],
    buckets=_FAST,
    registry=None,
)
TURN_SECONDS = Histogram(
    "tandem_turn_seconds",
    "Time a worker took to decide and commit one work item",
    ["outcome"],
    buckets=_SLOW,
    registry=None,
)
LLM_CALLS = Counter(
    "tandem_llm_calls", "LLM calls made by this deployment", ["outcome"], registry=None
)
LLM_SECONDS = Histogram(
    "tandem_llm_call_seconds",
    "Latency of one LLM call (retries included)",
    ["outcome"],
    buckets=_SLOW,
    registry=None,
)
IN_PROCESS = (WEBHOOK_SECONDS, TURN_SECONDS, LLM_CALLS, LLM_SECONDS)


def multiprocess() -> bool:
    """Whether the processes share PROMETHEUS_MULTIPROC_DIR (gunicorn and a worker)."""
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def llm_called(ok: bool, latency_ms: float | None) -> None:
    outcome = "ok" if ok else "failed"
    LLM_CALLS.labels(outcome).inc()
    if latency_ms is not None:
        LLM_SECONDS.labels(outcome).observe(latency_ms / 1000)


@contextmanager
def timed(histogram: Histogram, label: str) -> Iterator[None]:
    """Observe the seconds the block took (also when it raises)."""
    started = perf_counter()
    try:
        yield
    finally:
        histogram.labels(label).observe(perf_counter() - started)
