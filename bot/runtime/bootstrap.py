"""The composition root: builds the real adapters from settings and wires them together."""

from __future__ import annotations

import logging

from bot.core.clock import Clock, SystemClock
from bot.core.config import Settings
from bot.store.engine import make_engine
from bot.store.event_store import EventStore
from bot.store.services import Services


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )


def build_store(settings: Settings, clock: Clock | None = None) -> EventStore:
    """The event store on the configured database, with every projection."""
    return EventStore(make_engine(settings.database_url), clock=clock or SystemClock())


def build_services(
    settings: Settings, *, clock: Clock | None = None, store: EventStore | None = None
) -> Services:
    """Wire the store, the clock and this process's wake-ups."""
    clock = clock or SystemClock()
    store = store or build_store(settings, clock)
    services = Services(settings=settings, store=store, clock=clock)
    store.listeners.append(services.signals.committed)
    return services
