"""The study overview's numbers: a named read of the store (bot.store.reads.study_numbers)."""

from __future__ import annotations

from bot.store.reads.study_numbers import ACTIVE_WINDOW, DAYS, Overview, overview

__all__ = ["ACTIVE_WINDOW", "DAYS", "Overview", "overview"]
