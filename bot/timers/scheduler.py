"""The scheduler: APScheduler as an in-memory trigger over the `timers` projection (leader only).

APScheduler 3.11 `BackgroundScheduler`, memory job store, UTC, `coalesce=True`,
`misfire_grace_time=None` (a job runs however late; how late is too late is our policy, decided
in `bot.timers.firing`). One date job per pending timer due within the horizon (two hours, or
six sweeps), named by the timer id. The table is the truth: on start every pending timer due
within the horizon is armed, and each sweep arms those that have come within it; commits in this
process are picked up at once (the event store's commit listener, waking the sweep thread
through `signals.timers`); timers written or cancelled by other processes are picked up by the
sweep every TIMER_SWEEP_SECONDS. A job only hands its timer to one firing thread, which fires
whatever is due in batches of `firing.BATCH`, one transaction each. Only `run_forever`'s leader
runs one; the web process never does.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import select

from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.store.event_types.timers import (
    TimerCancelled,
    TimerDeferred,
    TimerFired,
    TimerScheduled,
    TimerSkipped,
)
from bot.store.events import Event
from bot.store.schema import timers
from bot.store.services import Services
from bot.timers import firing
from bot.timers.kinds import with_grace
from bot.timers.leadership import Leadership, leadership_for

log = logging.getLogger(__name__)
FROM_SETTINGS: Any = object()
HORIZON_FLOOR = 2 * 3600.0  # seconds


class Scheduler:
    """Arms a job per pending timer and fires each through `bot.timers.firing` when due."""

    def __init__(
        self,
        services: Services,
        *,
        quiet_hours: QuietHours | str | None = FROM_SETTINGS,
        intervention_quiet_hours: Mapping[str, QuietHours | None] | None = None,
        grace: Mapping[str, float | None] | None = None,
        sweep_seconds: float | None = None,
        threads: int = 4,
        horizon: timedelta | None = None,
    ) -> None:
        settings = services.settings
        if quiet_hours is FROM_SETTINGS:
            quiet_hours = settings.quiet_hours
        if isinstance(quiet_hours, str):
            quiet_hours = parse_quiet_hours(quiet_hours)
        self.services = services
        self.policy = firing.FiringPolicy(
            quiet_hours=quiet_hours,
            by_intervention=dict(intervention_quiet_hours or {}),
            kinds=with_grace(settings.timer_grace if grace is None else grace),
        )
        self.sweep_seconds = sweep_seconds or settings.timer_sweep_seconds
        # Only timers due within the horizon get a job; each sweep moves it on. A horizon many
        # sweeps long arms every timer long before it is due, and the leader holds (and starts
        # with) jobs for the next hours, not for every timer of a long study.
        self.horizon = horizon or timedelta(seconds=max(6 * self.sweep_seconds, HORIZON_FLOOR))
        self._horizon_end: datetime | None = None
        self.threads = threads
        self._armed: dict[str, datetime] = {}  # timer id -> due_at; touched by one thread only
        self._changes: deque[tuple[str, str, datetime | None]] = deque()
        self._stopping = threading.Event()
        self._aps: BackgroundScheduler | None = None
        self._thread: threading.Thread | None = None
        self._firing: threading.Thread | None = None
        self._due: queue.SimpleQueue[tuple[str, datetime]] = queue.SimpleQueue()

    @property
    def armed(self) -> int:
        """How many timers have a job waiting."""
        return len(self._armed)

    def fire_due(self, now: datetime | None = None) -> list[firing.Decision]:
        """Fire everything due at `now` (the clock's now by default), without APScheduler."""
        return firing.fire_due(self.services.store, now or self.services.clock.now(), self.policy)

    def start(self) -> None:
        """Start APScheduler, arm every pending timer due within the horizon, and start the
        sweep and firing threads."""
        # APScheduler logs each job added and run at INFO; the timer events are the record.
        logging.getLogger("apscheduler").setLevel(max(logging.WARNING, log.getEffectiveLevel()))
        self._aps = BackgroundScheduler(
            timezone=UTC,
            jobstores={"default": MemoryJobStore()},
            executors={"default": ThreadPoolExecutor(self.threads)},
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 1},
        )
        self._aps.start(paused=True)
        # Listen before loading: a timer committed meanwhile is then seen one way or the other.
        self.services.store.listeners.append(self._committed)
        self.sweep()
        self._aps.resume()
        self._thread = threading.Thread(target=self._loop, name="timer-sweep", daemon=True)
        self._thread.start()
        self._firing = threading.Thread(target=self._fire_loop, name="timer-fire", daemon=True)
        self._firing.start()
        log.info("scheduler started with %d pending timers armed", len(self._armed))

    def stop(self) -> None:
        """Stop firing; jobs already running finish their (short) transaction."""
        self._stopping.set()
        if self._committed in self.services.store.listeners:
            self.services.store.listeners.remove(self._committed)
        self.services.signals.timers.notify()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._firing is not None:
            self._firing.join(timeout=30)
        if self._aps is not None and self._aps.running:
            self._aps.shutdown(wait=True)
        log.info("scheduler stopped")

    def sweep(self) -> None:
        """Make the jobs match the table's timers due within the horizon: arm new or moved
        ones, disarm the rest."""
        horizon_end = self.services.clock.now() + self.horizon
        with self.services.store.reading() as conn:
            rows = conn.execute(
                select(timers.c.timer_id, timers.c.due_at).where(
                    timers.c.status == "scheduled", timers.c.due_at <= horizon_end
                )
            ).all()
        self._horizon_end = horizon_end
        pending = {row.timer_id: row.due_at for row in rows}
        for timer_id in [t for t in self._armed if t not in pending]:
            self._disarm(timer_id)
        for timer_id, due in pending.items():
            if self._armed.get(timer_id) != due:
                self._arm(timer_id, due)

    def _loop(self) -> None:
        next_sweep = time.monotonic() + self.sweep_seconds
        while not self._stopping.is_set():
            self.services.signals.timers.wait(max(0.0, next_sweep - time.monotonic()))
            if self._stopping.is_set():
                return
            try:
                self._apply_changes()
                if time.monotonic() >= next_sweep:
                    self.sweep()
                    next_sweep = time.monotonic() + self.sweep_seconds
            except Exception:  # noqa: BLE001 - the sweep's one broad except: log, go on
                log.exception("timer sweep failed; retrying at the next sweep")
                next_sweep = time.monotonic() + self.sweep_seconds

    def _committed(self, events: Iterable[Event]) -> None:
        """Store listener (runs in the committing thread): note timer changes, wake the sweep."""
        noted = False
        for event in events:
            data = event.data
            if isinstance(data, TimerScheduled | TimerDeferred):
                self._changes.append(("arm", data.timer_id, data.due_at))
                noted = True
            elif isinstance(data, TimerCancelled | TimerFired | TimerSkipped):
                self._changes.append(("disarm", data.timer_id, None))
                noted = True
        if noted:
            self.services.signals.timers.notify()

    def _apply_changes(self) -> None:
        while self._changes:
            what, timer_id, due = self._changes.popleft()
            if what == "arm" and due is not None:
                if self._horizon_end is not None and due > self._horizon_end:
                    self._disarm(timer_id)  # beyond the horizon: a later sweep arms it
                else:
                    self._arm(timer_id, due)
            elif what == "disarm":
                self._disarm(timer_id)
            elif what == "ran" and self._armed.get(timer_id) == due:
                del self._armed[timer_id]  # its job is gone; the next sweep re-arms it if due

    def _arm(self, timer_id: str, due: datetime) -> None:
        assert self._aps is not None
        self._aps.add_job(
            self._run,
            "date",
            run_date=due,
            id=timer_id,
            args=[timer_id, due],
            replace_existing=True,
        )
        self._armed[timer_id] = due

    def _disarm(self, timer_id: str) -> None:
        if self._armed.pop(timer_id, None) is None or self._aps is None:
            return
        try:
            self._aps.remove_job(timer_id)
        except JobLookupError:
            pass  # it already ran

    def _run(self, timer_id: str, due: datetime) -> None:
        """The APScheduler job: hand the timer to the firing thread (a burst of jobs due at
        once becomes a few batches, each one transaction, rather than a transaction each)."""
        if not self._stopping.is_set():
            self._due.put((timer_id, due))

    def _fire_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                batch = [self._due.get(timeout=0.5)]
            except queue.Empty:
                continue
            while len(batch) < firing.BATCH:
                try:
                    batch.append(self._due.get_nowait())
                except queue.Empty:
                    break
            self._fire(batch)

    def _fire(self, batch: list[tuple[str, datetime]]) -> None:
        """Fire a batch now (the clock's now, not APScheduler's)."""
        try:
            now = self.services.clock.now()
            ids = [timer_id for timer_id, _ in batch]
            decisions = firing.fire_many(self.services.store, ids, now, self.policy)
            for (timer_id, due), decision in zip(batch, decisions, strict=True):
                if decision.outcome == "none" and due > self.services.clock.now():
                    self._changes.append(("arm", timer_id, due))  # woke early: wait again
        except Exception:  # noqa: BLE001 - the firing loop's one broad except: the sweep retries
            log.exception("firing %d timer(s) failed", len(batch))
        finally:
            for timer_id, due in batch:
                self._changes.append(("ran", timer_id, due))
            self.services.signals.timers.notify()


def run_forever(
    services: Services,
    stop: threading.Event,
    *,
    leadership: Leadership | None = None,
    **scheduler_options: Any,
) -> None:
    """Campaign for leadership; while leading, run the scheduler; until `stop` is set."""
    ttl = timedelta(seconds=services.settings.scheduler_lease_seconds)
    leadership = leadership or leadership_for(services.store.engine, services.clock, ttl)
    beat = leadership.ttl.total_seconds() / 3
    while not stop.is_set():
        try:
            leading = leadership.acquire()
        except Exception:  # noqa: BLE001 - the campaign's one broad except: try again later
            log.exception("could not campaign for scheduler leadership")
            leading = False
        if not leading:
            stop.wait(beat)
            continue
        log.info("this process is now the scheduler leader")
        scheduler = Scheduler(services, **scheduler_options)
        try:
            scheduler.start()
            while not stop.wait(beat):
                if not leadership.renew():
                    log.warning("scheduler leadership lost; standing by")
                    break
        except Exception:  # noqa: BLE001 - one broad except: stop leading, campaign again
            log.exception("scheduler failed; giving up leadership")
        finally:
            scheduler.stop()
            try:
                leadership.release()
            except Exception:  # noqa: BLE001 - an expired lease is as good as a released one
                log.warning("could not release scheduler leadership cleanly")
