"""The broadcaster: one thread per deployment (led, like the scheduler) that settles due
broadcast recipients at BROADCAST_RATE_PER_SECOND.

Each recipient is settled by `bot.services.broadcast_sending` in one transaction (queued, held
or deferred), so the loop keeps no state a crash could lose: killed and started again, it
carries on with the recipients still pending and queues nobody twice. The rate is a token
bucket of one second's worth: each outbox row queued costs a token, a hold or a deferral none.
Leadership (a PostgreSQL advisory lock, else a lease row) keeps two processes from each
sending at the full rate.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from bot.services.broadcast_sending import BroadcastSender, QuietRules
from bot.store import outage
from bot.store.services import Services
from bot.timers.leadership import leadership_for

log = logging.getLogger(__name__)
BATCH = 100
IDLE_SECONDS = 2.0
LEASE = timedelta(seconds=15)


class Broadcaster:
    """Sends what is due of every active broadcast, no faster than `rate` messages a second."""

    def __init__(
        self,
        services: Services,
        name: str,
        *,
        quiet: QuietRules | None = None,
        rate: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.services = services
        self.name = name
        self.sender = BroadcastSender(services.store, quiet)
        self.rate = rate or services.settings.broadcast_rate_per_second
        self.capacity = max(1.0, self.rate)
        self.monotonic = monotonic
        self.sleep = sleep  # between sends when run without a stop event (tests, benchmarks)
        self.tokens = 1.0
        self.filled_at = monotonic()

    def run_forever(self, stop: threading.Event) -> None:
        """Lead, then send until `stop` is set; the loop's one broad except logs and goes on."""
        leader = leadership_for(
            self.services.store.engine, self.services.clock, LEASE, name="broadcaster"
        )
        try:
            while not stop.is_set():
                led, settled = False, 0
                began = outage.began()
                try:
                    led = leader.acquire()
                    settled = self.run_once(stop) if led else 0
                    outage.succeeded(began)
                except Exception as exc:  # noqa: BLE001 - the loop's one broad except
                    outage.loop_failed(log, exc, f"broadcaster {self.name}")
                if not settled:  # idle, or another process leads: look again later
                    stop.wait(IDLE_SECONDS if led else LEASE.total_seconds() / 3)
        finally:
            try:
                leader.release()
            except Exception:  # noqa: BLE001 - stopping: the lease expires by itself
                log.warning("broadcaster %s: leadership not released", self.name)

    def run_once(self, stop: threading.Event | None = None, limit: int = BATCH) -> int:
        """Settle up to `limit` due recipients, waiting for tokens between sends; returns how
        many were settled."""
        due = self.sender.due(self.services.clock.now(), limit)
        settled = 0
        for recipient in due:
            if stop is not None and stop.is_set():
                break
            if not self._wait_for_token(stop):
                break
            outcome, messages = self.sender.send(recipient, self.services.clock.now())
            if messages:
                self.tokens -= messages
                self.services.signals.outbox.notify()
            if outcome == "started":
                self.services.signals.work.notify()
            settled += outcome != "settled"
        if settled:
            log.info("broadcaster %s: %d recipients settled", self.name, settled)
        return settled

    def _wait_for_token(self, stop: threading.Event | None) -> bool:
        """Wait until a message may be queued; False if `stop` was set meanwhile."""
        while True:
            now = self.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.filled_at) * self.rate)
            self.filled_at = now
            if self.tokens >= 1:
                return True
            wait = (1 - self.tokens) / self.rate
            if stop is None:
                self.sleep(wait)
            elif stop.wait(wait):
                return False
