"""A trivial turn handler for pipe tests: it answers each inbound message with its own text."""

from __future__ import annotations

from bot.channel.outbound import to_participant
from bot.conversation.turns import Turn
from bot.store.event_types.messages import MessageReceived
from bot.store.events import EventData


def echo(turn: Turn) -> list[EventData]:
    message = turn.trigger.data if turn.trigger is not None else None
    if turn.kind != "inbound" or not isinstance(message, MessageReceived):
        return []
    return list(to_participant(turn.participant, f"You said: {message.body}"))
