"""Storage: the append-only event table, its projections, and engines for SQLite and PostgreSQL."""

from bot.store.engine import make_engine, normalise_url
from bot.store.event_store import (
    AppendResult,
    ConcurrencyError,
    ConstraintViolation,
    EventStore,
    Transaction,
)

__all__ = [
    "AppendResult",
    "ConcurrencyError",
    "ConstraintViolation",
    "EventStore",
    "Transaction",
    "make_engine",
    "normalise_url",
]
