"""Sign-in throttling for the console: kept in the database (bot.store.login_throttle)."""

from __future__ import annotations

from bot.store.login_throttle import LIMITS, Limit, failed, keys, locked_until, succeeded

__all__ = ["LIMITS", "Limit", "failed", "keys", "locked_until", "succeeded"]
