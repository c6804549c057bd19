"""What every part of a process is handed: settings, the event store, the clock, wake-ups.

`bot.runtime.bootstrap` builds it; the web app, the worker, the dispatcher, the scheduler and
the CLI take it as an argument. Nothing is global.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.clock import Clock
from bot.core.config import Settings
from bot.core.signals import Signals
from bot.store.event_store import EventStore
from bot.store.recent import RecentWindows


@dataclass
class Services:
    """What every entry point (web, worker, scheduler, CLI) is handed: nothing is global."""

    settings: Settings
    store: EventStore
    clock: Clock
    signals: Signals = field(default_factory=Signals)
    # The participants' decoded windows of last messages, shared by this process's workers.
    windows: RecentWindows = field(default_factory=RecentWindows)

    def close(self) -> None:
        self.store.engine.dispose()
