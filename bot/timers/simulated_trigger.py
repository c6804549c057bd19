"""The scheduler's trigger on a simulated clock (TANDEM_CLOCK): APScheduler's date jobs run on
the wall clock, so under a clock that jumps (bench/soak.py) a job would run hours early or late.
This stands in for the few APScheduler calls the scheduler makes (without importing it: only
bot.timers.scheduler does): it runs each job once the simulated clock has reached its instant,
in instant order, polling the clock."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.core.clock import Clock

log = logging.getLogger(__name__)
POLL_SECONDS = 0.02  # wall time between looks at the simulated clock


class SimulatedTrigger:
    """`add_job(func, "date", run_date=..., id=..., args=[...])`, `remove_job`, `start`,
    `resume`, `shutdown` and `running`, as the scheduler uses APScheduler's, on `clock`."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._jobs: dict[str, tuple[datetime, Callable[..., Any], list[Any]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._paused = True
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stop.is_set()

    def start(self, paused: bool = False) -> None:
        self._paused = paused
        self._thread = threading.Thread(target=self._loop, name="timer-trigger", daemon=True)
        self._thread.start()

    def resume(self) -> None:
        self._paused = False

    def shutdown(self, wait: bool = True) -> None:
        self._stop.set()
        if wait and self._thread is not None:
            self._thread.join(timeout=30)

    def add_job(
        self, func: Callable[..., Any], trigger: str, *, run_date: datetime, id: str, args: list
    ) -> None:
        if trigger != "date":
            raise ValueError(f"the simulated trigger runs date jobs only, not {trigger!r}")
        with self._lock:
            self._jobs[id] = (run_date, func, list(args))

    def remove_job(self, job_id: str) -> None:
        """Forget a job; one that has run (or is running) is gone already: nothing to do (the
        scheduler ignores APScheduler's JobLookupError for the same case)."""
        with self._lock:
            self._jobs.pop(job_id, None)

    def _loop(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            if self._paused:
                continue
            try:
                now = self.clock.now()
            except (OSError, ValueError):
                log.warning("the simulated clock could not be read; trying again")
                continue
            with self._lock:
                due = sorted((at, id) for id, (at, _, _) in self._jobs.items() if at <= now)
                jobs = [self._jobs.pop(id) for _, id in due]
            for _, func, args in jobs:
                try:
                    func(*args)
                except Exception:  # noqa: BLE001 - as APScheduler: log the job's failure, go on
                    log.exception("a simulated-clock timer job failed")
