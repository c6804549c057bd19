"""A staff member takes a participant's conversation over from the bot, and hands it back."""

from __future__ import annotations

from typing import Literal

from bot.store.events import EventData, event, fields

# What the hand-back did with the messages the participant sent during the takeover that staff
# had not answered: none waited, the bot takes them as its next turns, or staff marked them
# handled (the bot resumes without them).
Waiting = Literal["none", "bot", "handled"]


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
    """The conversation is handed back to the bot, which takes up its waiting turns.
    `waiting` is the staff member's choice for the unanswered messages `messages` (the ids of
    their `message.received` events): an explicit choice, never a silent consumption."""

    personal = fields()
    plain = fields("by", "waiting", "messages")

    by: str
    waiting: Waiting = "none"
    messages: list[str] = []


@event("message.handled")
class MessageHandled(EventData):
    """A message that needed a human (an inbox entry) is settled: `message_id` names its
    `message.received` event; `how` is `marked` (a staff member marked it handled),
    `answered` (staff wrote to the participant after it, during the takeover) or `bot` (handed
    to the bot at the hand-back). Recorded on the message's own stream."""

    personal = fields()
    plain = fields("message_id", "by", "how")

    message_id: str
    by: str
    how: Literal["marked", "answered", "bot"] = "marked"


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
