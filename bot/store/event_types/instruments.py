"""Instrument events: one administration of a questionnaire (docs/instruments.md), from its
first message to its completion or abandonment.

An administration is a unit: `administration_id` ties its events together, `number` counts the
participant's administrations of that instrument (abandoned ones included). The answers and
scores describe the participant (sealed); the instrument, items and ids are plain.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from bot.store.events import EventData, event, fields

Mode = Literal["one-per-message", "all-at-once"]


@event("instrument.started")
class InstrumentStarted(EventData):
    """The first message of an administration was queued (`outbox_id`): the first item
    (`item`), or every item at once (`item` None). `abandon_minutes`: silence after which it is
    abandoned. `timer_id`: the timer that asked it (an `administer:` action or a schedule)."""

    personal = fields()
    plain = fields("administration_id", "instrument", "item", "mode", "outbox_id", "timer_id")

    administration_id: str
    instrument: str
    number: int = 1
    mode: Mode = "one-per-message"
    item: str | None = None
    outbox_id: str | None = None
    timer_id: str | None = None
    abandon_minutes: float = 120


@event("instrument.item_answered")
class InstrumentItemAnswered(EventData):
    """A reply was read as the answer to `item` (`skipped`: the participant skipped it, and
    `value` is None); `next_item` is the item asked next (None: none is left)."""

    personal = fields("value")
    plain = fields("administration_id", "instrument", "item", "next_item")

    administration_id: str
    instrument: str
    item: str
    value: Any = None
    skipped: bool = False
    next_item: str | None = None


@event("instrument.answer_rejected")
class InstrumentAnswerRejected(EventData):
    """A reply that could not be read as the answer (`reason`, as told to the participant);
    `attempt` counts the re-asks of the current item; `final`: no more re-asks, the
    administration is abandoned with it."""

    personal = fields("reason")
    plain = fields("administration_id", "instrument", "item")

    administration_id: str
    instrument: str
    item: str | None = None
    reason: str
    attempt: int = 1
    final: bool = False


@event("instrument.completed")
class InstrumentCompleted(EventData):
    """Every item was answered or skipped: the scored result. `result` holds what conditions
    read as `instruments.<name>.last.*` (total, mean, band, items, subscales, complete,
    missing, administered_at, count); `count` is the completed administrations so far."""

    personal = fields("result")
    plain = fields("administration_id", "instrument", "mode")

    administration_id: str
    instrument: str
    number: int = 1
    count: int = 1
    mode: Mode = "one-per-message"
    started_at: datetime
    result: dict[str, Any] = {}


@event("instrument.abandoned")
class InstrumentAbandoned(EventData):
    """The administration ended unfinished: `reason` is `silence` (no answer within its
    abandon time), `reasks` (no readable answer after the re-asks) or `superseded` (a new
    administration of an instrument started). `answers`: the items answered so far."""

    personal = fields("answers")
    plain = fields("administration_id", "instrument", "mode", "reason")

    administration_id: str
    instrument: str
    number: int = 1
    mode: Mode = "one-per-message"
    started_at: datetime
    reason: Literal["silence", "reasks", "superseded"]
    answers: dict[str, Any] = {}
