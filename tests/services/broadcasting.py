"""Helpers for broadcast tests: participants enrolled straight into a store, and a broadcast
made and settled through the services."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.runtime.routing import intervention_catalogue
from bot.services import broadcasts
from bot.services.broadcast_sending import BroadcastSender, QuietRules
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import ProfileSaved
from bot.store.events import EventData, participant_stream
from tests.factories import enrolled

CATALOGUE = intervention_catalogue()


def enroll(store: EventStore, n: int, *extra: EventData, **changes: Any) -> str:
    event = enrolled(phone=f"+1415555{n:04d}", **{"intervention": "habit-coach", **changes})
    store.append(participant_stream(event.participant_id), [event, *extra])
    return event.participant_id


def profile(**changes: Any) -> ProfileSaved:
    return ProfileSaved(changes=changes, source="operator")


def create(store: EventStore, now: datetime, **request: Any) -> broadcasts.Planned:
    body = {"message": "Hello {{ participant.name or 'there' }}", **request}
    return broadcasts.create(store, CATALOGUE, body, actor="test", now=now)


def settle(store: EventStore, now: datetime, quiet: QuietRules | None = None) -> list[str]:
    """Settle every recipient due at `now`; their outcomes in order."""
    sender = BroadcastSender(store, quiet)
    return [sender.send(due, now)[0] for due in sender.due(now, 1000)]
