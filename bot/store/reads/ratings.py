"""Named reads for fidelity review (bot.services.ratings, bot.console.fidelity_page): who can be
reviewed, by their review code, and the ratings given on a participant's transcript."""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from bot.store.event_store import EventStore
from bot.store.events import Event, participant_stream
from bot.store.reads.transcript import events_page, outbox_rows
from bot.store.schema import participants

RATED = ("turn.rated",)
_ALL = 1_000_000


def review_code(participant_id: str) -> str:
    """A participant's stable code on the blind review pages (`R-` and 10 hex digits of a hash
    of the id): not the id, not the pseudonymised export's study code."""
    return "R-" + hashlib.sha256(f"review:{participant_id}".encode()).hexdigest()[:10]


def reviewable(store: EventStore) -> list[tuple[str, str]]:
    """(review code, participant id) of every participant, by code."""
    with store.reading() as conn:
        ids = conn.execute(select(participants.c.participant_id)).scalars().all()
    return sorted((review_code(str(pid)), str(pid)) for pid in ids)


def participant_of_code(store: EventStore, code: str) -> str | None:
    """The participant whose review code is `code` (None: nobody's)."""
    return next((pid for found, pid in reviewable(store) if found == code), None)


def ratings(store: EventStore, participant_id: str) -> list[Event]:
    """The participant's `turn.rated` events, opened, in order."""
    stream = participant_stream(participant_id)
    return events_page(store, stream, RATED, 0, _ALL, lambda _e: True)


def outbound_message(store: EventStore, message_id: str) -> dict[str, object] | None:
    """The outbox row of `message_id` (None: no such message)."""
    return outbox_rows(store, [message_id]).get(message_id)
