"""A stand-in conversation module that greets and echoes, until the conversation engine lands."""

from __future__ import annotations

from bot.event_types.messages import MessageReceived
from bot.events import EventData
from bot.outbound import to_participant
from bot.turns import Turn

GREETING = "Welcome to Tandem! Reply to this message and I will answer."


def handle(turn: Turn) -> list[EventData]:
    """Greet on enrollment; repeat an inbound message back."""
    if turn.kind == "enrolled":
        return list(to_participant(turn.participant, GREETING, kind="greeting"))
    if turn.kind == "inbound" and turn.trigger is not None:
        message = turn.trigger.data
        if isinstance(message, MessageReceived):
            text = message.body.strip() or f"({len(message.media)} attachment(s))"
            return list(to_participant(turn.participant, f"You said: {text}"))
    return []
