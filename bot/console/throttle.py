"""Sign-in throttling for the console: kept in the database (bot.store.login_throttle)."""

from __future__ import annotations

from bot.store.login_throttle import LIMITS, Limit, attempt, keys, succeeded

__all__ = ["LIMITS", "Limit", "attempt", "keys", "succeeded"]
