"""In-process wake-ups: a commit that creates work or outbound messages wakes the right threads.

Other processes find the same rows by polling; a wake-up only makes this process faster.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol

WORK_TYPES = {
    "message.received",
    "participant.enrolled",
    "timer.fired",
    "work.requested",
    "work.failed",
    "broadcast.step_requested",
}
OUTBOX_TYPES = {"message.queued", "message.failed", "participant.opted_in"}
TIMER_TYPES = {"timer.scheduled", "timer.deferred", "timer.cancelled"}


class Typed(Protocol):
    """Anything with an `event_type`: the store's committed events."""

    @property
    def event_type(self) -> str: ...


class Wakeup:
    """A level-triggered signal: `notify` sets it, `wait` returns early once and clears it."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def notify(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> bool:
        fired = self._event.wait(timeout)
        self._event.clear()
        return fired


class Signals:
    """The wake-ups of one process, fed by the event store after every commit."""

    def __init__(self) -> None:
        self.work = Wakeup()
        self.outbox = Wakeup()
        self.timers = Wakeup()

    def committed(self, events: Iterable[Typed]) -> None:
        types = {e.event_type for e in events}
        if types & WORK_TYPES:
            self.work.notify()
        if types & OUTBOX_TYPES:
            self.outbox.notify()
        if types & TIMER_TYPES:
            self.timers.notify()
