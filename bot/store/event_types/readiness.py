"""Readiness episodes (bot.services.readiness): a degraded state began, or it ended."""

from __future__ import annotations

from bot.store.events import EventData, event, fields


@event("readiness.degraded")
class ReadinessDegraded(EventData):
    """A degraded state (`llm_failing`, `turns_failing`, ...) was first seen; `detail` says
    what was counted. Recorded on the system stream, once per episode."""

    personal = fields()
    plain = fields("state", "detail")

    state: str
    detail: str


@event("readiness.restored")
class ReadinessRestored(EventData):
    """The degraded state was no longer seen: its episode is over."""

    personal = fields()
    plain = fields("state")

    state: str
