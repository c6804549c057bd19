"""The composition root: builds the real adapters from settings and wires them together."""

from __future__ import annotations

import logging

from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.store import EventStore, make_engine


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )


def build_store(settings: Settings, clock: Clock | None = None) -> EventStore:
    """The event store on the configured database, with every projection."""
    return EventStore(make_engine(settings.database_url), clock=clock or SystemClock())
