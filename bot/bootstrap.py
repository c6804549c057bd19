"""The composition root: builds the real adapters from settings and wires them together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.signals import Signals
from bot.store import EventStore, make_engine


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )


def build_store(settings: Settings, clock: Clock | None = None) -> EventStore:
    """The event store on the configured database, with every projection."""
    return EventStore(make_engine(settings.database_url), clock=clock or SystemClock())


@dataclass
class Services:
    """What every entry point (web, worker, scheduler, CLI) is handed: nothing is global."""

    settings: Settings
    store: EventStore
    clock: Clock
    signals: Signals = field(default_factory=Signals)

    def close(self) -> None:
        self.store.engine.dispose()


def build_services(
    settings: Settings, *, clock: Clock | None = None, store: EventStore | None = None
) -> Services:
    """Wire the store, the clock and this process's wake-ups."""
    clock = clock or SystemClock()
    store = store or build_store(settings, clock)
    services = Services(settings=settings, store=store, clock=clock)
    store.listeners.append(services.signals.committed)
    return services
