"""Deciding on a participant as they stand under their stream's lock, and appending it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.events import EventData, NewEvent, participant_stream

NOT_FOUND = "Participant not found"
Decide = Callable[[Transaction, dict[str, Any]], Sequence[EventData]]


def change(
    store: EventStore,
    participant_id: str,
    decide: Decide,
    *,
    actor: str,
    idempotency_key: str | None = None,
) -> tuple[dict[str, Any], list[EventData]]:
    """Lock the participant's stream, hand their row to `decide` and append what it decides
    (with `actor` in each event's meta) in the same transaction: what was read is what the
    append sees, so no retry is needed. Returns their row afterwards and the decided events;
    `decide` raises `Refused` to append nothing."""
    stream = participant_stream(participant_id)
    heads = next(p for p in store.projections if p.name == "participants")
    with store.transaction() as tx:
        tx.lock(stream)
        row = tx.row(heads, participant_id)
        if row is None:
            raise Refused(NOT_FOUND, "participant_id", "not_found")
        decided = list(decide(tx, dict(row)))
        if decided:
            meta = {"actor": actor}
            tx.append(stream, [NewEvent(e, meta=meta) for e in decided], None, idempotency_key)
    after = store.projection_row("participants", participant_id)
    assert after is not None  # it was there under the lock, and rows are never deleted
    return after, decided


def takeover_of(store: EventStore, tx: Transaction, participant_id: str) -> dict[str, Any] | None:
    """The participant's takeover row as it stands in `tx` (None: never taken over)."""
    takeovers = next(p for p in store.projections if p.name == "takeovers")
    held = tx.row(takeovers, participant_id)
    return dict(held) if held is not None else None
