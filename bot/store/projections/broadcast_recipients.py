"""The `broadcast_recipients` projection: one row per recipient of a broadcast, planned on the
broadcast's stream (pending, due at a moment) and settled on the participant's own stream
(queued with its outbox row, held with a reason, or deferred to a later moment). A broadcast
that starts a step passes through `started` (its turn requested) before it is queued or held."""

from __future__ import annotations

from bot.store.event_types.broadcasts import (
    BroadcastDeferred,
    BroadcastHeld,
    BroadcastPlanned,
    BroadcastStepRequested,
)
from bot.store.event_types.messages import MessageQueued
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "recipient_id",
    "broadcast_id",
    "participant_id",
    "status",
    "reason",
    "due_at",
    "outbox_id",
    "updated_at",
)
TYPES = frozenset(
    {
        BroadcastPlanned.event_type,
        BroadcastHeld.event_type,
        BroadcastDeferred.event_type,
        BroadcastStepRequested.event_type,
        MessageQueued.event_type,
    }
)


def recipient_id(broadcast_id: str, participant_id: str) -> str:
    return f"{broadcast_id}:{participant_id}"


def key(event: Event) -> str | None:
    data = event.data
    if isinstance(data, BroadcastPlanned):
        return recipient_id(data.broadcast_id, data.participant_id)
    if (
        isinstance(data, BroadcastHeld | BroadcastDeferred | BroadcastStepRequested)
        and event.participant_id
    ):
        return recipient_id(data.broadcast_id, event.participant_id)
    if isinstance(data, MessageQueued) and data.broadcast_id and event.participant_id:
        return recipient_id(data.broadcast_id, event.participant_id)
    return None


def apply(row: Row | None, event: Event) -> Row | None:
    data, at = event.data, event.recorded_at
    if isinstance(data, BroadcastPlanned):
        if row is not None:
            return row  # planned once: the first plan stands
        return {
            "recipient_id": recipient_id(data.broadcast_id, data.participant_id),
            "broadcast_id": data.broadcast_id,
            "participant_id": data.participant_id,
            "status": "pending",
            "reason": None,
            "due_at": data.due_at,
            "outbox_id": None,
            "updated_at": at,
        }
    if row is None or row["status"] not in ("pending", "started"):
        return row  # settled once: a queued or held recipient stays so
    if isinstance(data, BroadcastStepRequested):
        if row["status"] != "pending":
            return row
        return {**row, "status": "started", "reason": None, "updated_at": at}
    if isinstance(data, MessageQueued):
        return {
            **row,
            "status": "queued",
            "reason": None,
            "outbox_id": data.outbox_id,
            "updated_at": at,
        }
    if isinstance(data, BroadcastHeld):
        return {**row, "status": "held", "reason": data.reason, "updated_at": at}
    if isinstance(data, BroadcastDeferred) and row["status"] == "pending":
        return {**row, "due_at": data.until, "reason": data.reason, "updated_at": at}
    return row


PROJECTION = Projection("broadcast_recipients", "recipient_id", COLUMNS, key, apply, types=TYPES)
