"""The scheduler: APScheduler as an in-memory trigger over the `timers` projection (leader only).

APScheduler 3.11 `BackgroundScheduler`, memory job store, UTC, `coalesce=True`,
`misfire_grace_time=None` (a job runs however late; how late is too late is our policy, decided
in `bot.timers.firing`). Only timers due within the horizon (ten minutes, or six sweeps if
longer) are armed, and timers due at the same instant share one date job, so a study's
hundred thousand future timers cost a few hundred jobs and a burst due at once is one job.
The table is the truth: on start every pending timer due within the horizon is armed; each
sweep (every TIMER_SWEEP_SECONDS) reads only what is new to it, through indexes: the timers
that have come within the horizon since the last sweep (`status, due_at`) and the timers
written or cancelled since then (`updated_at`, less `CHANGE_MARGIN` for transactions that
committed late); commits in this process are picked up at once (the event store's commit
listener, waking the sweep thread through `signals.timers`). A job only hands its timers to the
firing threads (one on SQLite, two on PostgreSQL), which fire them in batches of `firing.BATCH`,
one transaction each, deciding there the turns of the kinds the runtime hands in (`turns`:
decision points). Only `run_forever`'s leader runs one; the web process never does.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler

from bot.core.clock import is_simulated
from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.store import outage
from bot.store.event_types.timers import (
    TimerCancelled,
    TimerDeferred,
    TimerFired,
    TimerScheduled,
    TimerSkipped,
)
from bot.store.events import Event
from bot.store.reads.timers import timers_to_sweep
from bot.store.services import Services
from bot.timers import firing
from bot.timers.kinds import with_grace
from bot.timers.leadership import Leadership, leadership_for
from bot.timers.simulated_trigger import SimulatedTrigger

log = logging.getLogger(__name__)
FROM_SETTINGS: Any = object()
HORIZON_FLOOR = 10 * 60.0  # seconds
# How far before the last sweep a change is looked for again: a timer's `updated_at` is when its
# event was appended, which may be a little before its transaction committed (or by a host
# whose clock runs a little behind). Reading a change twice is harmless.
CHANGE_MARGIN = timedelta(seconds=60)


@dataclass
class _Slot:
    """The timers due at one instant and the APScheduler job that wakes them."""

    job_id: str
    timer_ids: set[str] = field(default_factory=set)


class Scheduler:
    """Arms a job per instant at which pending timers are due within the horizon, and fires
    them through `bot.timers.firing` when due."""

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
        firing_threads: int | None = None,
        turns: Mapping[str, firing.Turn] | None = None,
    ) -> None:
        """`turns`: the kinds whose turns are decided in their firing batch (bot.timers.firing;
        the runtime's `bot.runtime.worker.turns_at_firing`), none by default."""
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
            turns=(
                firing.Turns(turns, services.windows, settings.chat_history_limit)
                if turns
                else None
            ),
        )
        self.sweep_seconds = sweep_seconds or settings.timer_sweep_seconds
        # Only timers due within the horizon get a job; each sweep moves it on, reading only
        # the slice it moved over. Six sweeps long, a timer is armed long before it is due even
        # if a few sweeps fail; short, the leader starts with jobs for the next minutes only.
        self.horizon = horizon or timedelta(seconds=max(6 * self.sweep_seconds, HORIZON_FLOOR))
        self._horizon_end: datetime | None = None  # None: the next sweep reads the whole horizon
        self._since: datetime | None = None  # changes after this are read by the next sweep
        self.threads = threads
        # timer id -> the instant its job runs, and instant -> its slot. Changed by the sweep
        # thread (and APScheduler's threads, which take a slot as its job runs): under _lock.
        self._armed: dict[str, datetime] = {}
        self._slots: dict[datetime, _Slot] = {}
        self._lock = threading.Lock()
        self._job_ids = itertools.count()
        self._changes: deque[tuple[str, str, datetime | None]] = deque()
        self._stopping = threading.Event()
        self._aps: BackgroundScheduler | SimulatedTrigger | None = None
        self._thread: threading.Thread | None = None
        # Firing threads, each with its own batch and transaction. PostgreSQL's round trips
        # overlap with two; SQLite has one writer, so a second would only wait for the lock.
        if firing_threads is None:
            firing_threads = 1 if services.store.engine.dialect.name == "sqlite" else 2
        self.firing_threads = firing_threads
        self._firing: list[threading.Thread] = []
        self._due: queue.SimpleQueue[list[tuple[str, datetime]]] = queue.SimpleQueue()

    @property
    def armed(self) -> int:
        """How many timers have a job waiting."""
        return len(self._armed)

    @property
    def jobs(self) -> int:
        """How many APScheduler jobs wait (one per instant at which armed timers are due)."""
        return len(self._slots)

    def fire_due(self, now: datetime | None = None) -> list[firing.Decision]:
        """Fire everything due at `now` (the clock's now by default), without APScheduler."""
        return firing.fire_due(self.services.store, now or self.services.clock.now(), self.policy)

    def start(self) -> None:
        """Start APScheduler, arm every pending timer due within the horizon, and start the
        sweep and firing threads."""
        # APScheduler logs each job added and run at INFO; the timer events are the record.
        logging.getLogger("apscheduler").setLevel(max(logging.WARNING, log.getEffectiveLevel()))
        if is_simulated(self.services.clock):  # APScheduler runs on the wall clock
            self._aps = SimulatedTrigger(self.services.clock)
        else:
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
        self._firing = [
            threading.Thread(target=self._fire_loop, name=f"timer-fire-{n}", daemon=True)
            for n in range(self.firing_threads)
        ]
        for thread in self._firing:
            thread.start()
        log.info("scheduler started with %d pending timers armed (%d jobs)", self.armed, self.jobs)

    def stop(self) -> None:
        """Stop firing. A job running now is not waited for: it only hands its timers to the
        firing threads, which have stopped, and its timers stay scheduled for the next leader.
        APScheduler's `shutdown(wait=True)` holds its job-store lock while it waits for running
        jobs; a job waiting for `_lock`, held by a thread calling into APScheduler (`_arm`,
        `_unslot`), then waited for ever, and so did the process, at exit, for the job's pool
        thread."""
        self._stopping.set()
        if self._committed in self.services.store.listeners:
            self.services.store.listeners.remove(self._committed)
        self.services.signals.timers.notify()
        if self._thread is not None:
            self._thread.join(timeout=30)
        for thread in self._firing:
            thread.join(timeout=30)
        if self._aps is not None and self._aps.running:
            self._aps.shutdown(wait=False)
        log.info("scheduler stopped")

    def sweep(self) -> int:
        """Bring the jobs up to date with the table: on the first sweep, arm every pending
        timer due within the horizon; then read only the timers the horizon moved over and
        those changed since the last sweep, arming, moving or disarming each. How many timers
        it read."""
        now = self.services.clock.now()
        horizon_end = now + self.horizon
        rows = timers_to_sweep(
            self.services.store,
            horizon_end,
            last_horizon_end=self._horizon_end,
            changed_since=self._since,
        )
        self._horizon_end = horizon_end
        self._since = now - CHANGE_MARGIN
        for timer_id, due, status in rows:
            if status == "scheduled" and due <= horizon_end:
                self._arm(timer_id, due)
            else:
                self._disarm(timer_id)
        return len(rows)

    def _loop(self) -> None:
        next_sweep = time.monotonic() + self.sweep_seconds
        while not self._stopping.is_set():
            self.services.signals.timers.wait(max(0.0, next_sweep - time.monotonic()))
            if self._stopping.is_set():
                return
            began = outage.began()
            try:
                self._apply_changes()
                if time.monotonic() >= next_sweep:
                    self.sweep()
                    next_sweep = time.monotonic() + self.sweep_seconds
                    outage.succeeded(began)
            except Exception as exc:  # noqa: BLE001 - the sweep's one broad except: log, go on
                outage.loop_failed(log, exc, "timer sweep (retrying at the next sweep)")
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

    def _arm(self, timer_id: str, due: datetime) -> None:
        assert self._aps is not None
        with self._lock:
            if self._armed.get(timer_id) == due:
                return
            self._unslot(timer_id)
            slot = self._slots.get(due)
            if slot is None:
                # A fresh job id per slot: a job that has just run may still be being removed.
                slot = self._slots[due] = _Slot(f"timers-{next(self._job_ids)}")
                self._aps.add_job(self._run, "date", run_date=due, id=slot.job_id, args=[due])
            slot.timer_ids.add(timer_id)
            self._armed[timer_id] = due

    def _disarm(self, timer_id: str) -> None:
        with self._lock:
            self._unslot(timer_id)

    def _unslot(self, timer_id: str) -> None:
        """Take `timer_id` out of its slot, and the slot's job away if it was the last (under
        _lock)."""
        due = self._armed.pop(timer_id, None)
        slot = self._slots.get(due) if due is not None else None
        if slot is None:
            return
        slot.timer_ids.discard(timer_id)
        if not slot.timer_ids:
            del self._slots[due]  # type: ignore[arg-type]
            try:
                if self._aps is not None:
                    self._aps.remove_job(slot.job_id)
            except JobLookupError:
                pass  # it is running

    def _run(self, due: datetime) -> None:
        """The APScheduler job of an instant: hand its timers to the firing thread (a burst due
        at once becomes a few batches, each one transaction, rather than a transaction each)."""
        with self._lock:
            slot = self._slots.pop(due, None)
            taken = sorted(slot.timer_ids) if slot is not None else []
            for timer_id in taken:
                del self._armed[timer_id]
        if not self._stopping.is_set():
            for begin in range(0, len(taken), firing.BATCH):  # a batch each, for any thread
                self._due.put([(timer_id, due) for timer_id in taken[begin : begin + firing.BATCH]])

    def _fire_loop(self) -> None:
        waiting: deque[tuple[str, datetime]] = deque()
        while not self._stopping.is_set():
            if not waiting:
                try:
                    waiting.extend(self._due.get(timeout=0.5))
                except queue.Empty:
                    continue
            while len(waiting) < firing.BATCH:  # whatever else came due meanwhile joins it
                try:
                    waiting.extend(self._due.get_nowait())
                except queue.Empty:
                    break
            batch = [waiting.popleft() for _ in range(min(firing.BATCH, len(waiting)))]
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
        except Exception as exc:  # noqa: BLE001 - the firing loop's broad except: one by one
            if outage.is_outage(exc):
                outage.failed(exc, "timer firing")
                self._retry(batch)  # one by one would fail as well: all at the next sweep
                return
            log.exception("firing %d timer(s) together failed; one by one", len(batch))
            self._fire_each(batch)
        finally:
            self.services.signals.timers.notify()

    def _fire_each(self, batch: list[tuple[str, datetime]]) -> None:
        """Fire a failed batch one timer at a time, so a timer that cannot be fired holds up
        none of the others; those that fail again are retried at the next sweep."""
        failed = []
        for timer_id, due in batch:
            try:
                now = self.services.clock.now()
                firing.fire_one(self.services.store, timer_id, now, self.policy)
            except Exception as exc:  # noqa: BLE001 - logged; the timer is tried again later
                if outage.is_outage(exc):
                    outage.failed(exc, "timer firing")
                else:
                    log.exception("firing timer %s failed; retrying at the next sweep", timer_id)
                failed.append((timer_id, due))
        self._retry(failed)

    def _retry(self, batch: list[tuple[str, datetime]]) -> None:
        """Arm timers whose firing failed again, at the next sweep (not at once: a database
        that is down would otherwise be asked again and again)."""
        at = self.services.clock.now() + timedelta(seconds=self.sweep_seconds)
        for timer_id, due in batch:
            self._changes.append(("arm", timer_id, max(due, at)))


def _beat(on_beat: Callable[[], object] | None) -> None:
    if on_beat is None:
        return
    try:
        on_beat()
    except Exception as exc:  # noqa: BLE001 - the beat's one broad except: log, check later
        outage.loop_failed(log, exc, "the leader's periodic check (trying again at the next beat)")


def run_forever(
    services: Services,
    stop: threading.Event,
    *,
    leadership: Leadership | None = None,
    on_beat: Callable[[], object] | None = None,
    **scheduler_options: Any,
) -> None:
    """Campaign for leadership; while leading, run the scheduler, and `on_beat` (the readiness
    check, handed in by the runtime) at each renewal of the lease; until `stop` is set."""
    ttl = timedelta(seconds=services.settings.scheduler_lease_seconds)
    leadership = leadership or leadership_for(services.store.engine, services.clock, ttl)
    beat = leadership.ttl.total_seconds() / 3
    while not stop.is_set():
        try:
            leading = leadership.acquire()
        except Exception as exc:  # noqa: BLE001 - the campaign's one broad except: try later
            outage.loop_failed(log, exc, "campaign for scheduler leadership")
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
                _beat(on_beat)
        except Exception as exc:  # noqa: BLE001 - one broad except: stop leading, campaign again
            outage.loop_failed(log, exc, "scheduler (giving up leadership)")
        finally:
            scheduler.stop()
            try:
                leadership.release()
            except Exception:  # noqa: BLE001 - an expired lease is as good as a released one
                log.warning("could not release scheduler leadership cleanly")
