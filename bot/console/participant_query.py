"""The participants table's query for the console: a named read (bot.store.reads)."""

from __future__ import annotations

from bot.store.reads.participant_query import PAGE_SIZES, SORTS, STATUSES, Filters, choices, page

__all__ = ["PAGE_SIZES", "SORTS", "STATUSES", "Filters", "choices", "page"]
