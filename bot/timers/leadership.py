"""Exactly one scheduler per deployment: what leading means, and the store's ways to hold it.

The store holds leadership (bot.store.leadership): a PostgreSQL advisory lock on a connection
of its own, or a `leases` row renewed before it expires elsewhere. This names the claim the
scheduler works with.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from bot.store.leadership import NAME, AdvisoryLock, LeaseRow, holder_name, leadership_for

__all__ = [
    "NAME",
    "AdvisoryLock",
    "Leadership",
    "LeaseRow",
    "holder_name",
    "leadership_for",
]


class Leadership(Protocol):
    """A claim on being the one scheduler."""

    ttl: timedelta

    def acquire(self) -> bool:
        """Become the leader if nobody is; true if this process leads now."""
        ...

    def renew(self) -> bool:
        """Keep leading; false once leadership was lost."""
        ...

    def release(self) -> None:
        """Stop leading (a no-op if not leading)."""
        ...
