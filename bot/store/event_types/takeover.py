"""A staff member takes a participant's conversation over from the bot, and hands it back."""

from __future__ import annotations

from bot.store.events import EventData, event, fields


@event("takeover.started")
class TakeoverStarted(EventData):
    """The bot is paused for this participant: its pending turns wait until the hand-back.
    `by` names the staff member (`staff:<email>`)."""

    personal = fields("reason")
    plain = fields("by")

    by: str
    reason: str | None = None


@event("takeover.ended")
class TakeoverEnded(EventData):
    """The conversation is handed back to the bot, which takes up its waiting turns."""

    personal = fields()
    plain = fields("by")

    by: str


@event("takeover.quiet_hours_overridden")
class QuietHoursOverridden(EventData):
    """A staff message answering a crisis alert (`alert_id`) was sent inside the participant's
    quiet hours (`quiet_hours`, at `local_time` for them): a person replying to a crisis is
    never held back by them. Recorded with the message (`outbox_id`), by whom."""

    personal = fields()
    plain = fields("by", "local_time", "quiet_hours")

    alert_id: str
    outbox_id: str
    by: str
    local_time: str
    quiet_hours: str
