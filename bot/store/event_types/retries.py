"""A failed turn's retry came due (bot.conversation.turn_retry): the flow runs the turn again."""

from __future__ import annotations

from typing import Literal

from bot.store.events import EventData, event


@event("turn.retry_due")
class TurnRetryDue(EventData):
    """Retry `attempt` (1 = the first) of the turn that failed answering the message
    `message_event_id` (`inbound`) or greeting the participant (`enrolled`)."""

    timer_id: str
    attempt: int
    trigger: Literal["inbound", "enrolled"]
    message_event_id: str | None = None
