"""The inbox of messages that need a human: listing them and marking one handled.

A message from an unknown number, from a participant who withdrew or opted out, or one that
arrived during a takeover is otherwise recorded and nothing more; here staff see it and settle
it. Marking handled records `message.handled` (who, in the event's meta and `by`; when, its
time) on the message's own stream, once; a message whose turn still waits (during a takeover)
has that turn settled too, so the bot never answers what staff handled.
"""

from __future__ import annotations

from typing import Any

from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.takeover import MessageHandled
from bot.store.event_types.work import WorkCompleted
from bot.store.events import EventData, NewEvent
from bot.store.reads import human_inbox
from bot.store.reads.human_inbox import Entry

__all__ = ["Entry", "entries", "mark_handled"]


def entries(store: EventStore) -> list[Entry]:
    """Every message needing a human, not yet handled, newest first."""
    return human_inbox.open_entries(store)


def mark_handled(store: EventStore, message_id: str, *, actor: str) -> Entry | None:
    """Record that `actor` handled the message; a second mark records nothing. Refused
    (not_found) for an id that names no received message. Returns the entry as it was (None
    when it did not need a human or was handled already)."""
    message = human_inbox.message_event(store, message_id)
    if message is None:
        raise Refused("No message with this id.", "message_id", "not_found")
    before = next((e for e in entries(store) if e.message_id == message_id), None)
    key = f"handled:{message_id}"
    handled = MessageHandled(message_id=message_id, by=actor, how="marked")
    pid = message.participant_id
    if pid is None:
        store.append(message.stream_id, [NewEvent(handled, meta={"actor": actor})], None, key)
        return before

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        work = next(p for p in store.projections if p.name == "work_items")
        item = tx.row(work, message_id)
        settled: list[EventData] = []
        if item is not None and item["status"] == "pending":
            settled.append(WorkCompleted(work_id=message_id, skipped="handled by staff (marked)"))
        return [*settled, handled]

    participant_lock.change(store, pid, decide, actor=actor, idempotency_key=key)
    return before
