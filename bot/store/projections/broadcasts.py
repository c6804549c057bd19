"""The `broadcasts` projection: one row per broadcast, folded from its own stream."""

from __future__ import annotations

from bot.store.event_types.broadcasts import BroadcastCancelled, BroadcastCreated
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "broadcast_id",
    "created_by",
    "title",
    "message",
    "whatsapp_template",
    "filter",
    "send_at",
    "recipients",
    "status",
    "created_at",
    "cancelled_by",
    "cancelled_at",
    "seq",
    "step",
    "schedule",
)
TYPES = frozenset({BroadcastCreated.event_type, BroadcastCancelled.event_type})


def key(event: Event) -> str | None:
    data = event.data
    if isinstance(data, BroadcastCreated | BroadcastCancelled):
        return data.broadcast_id
    return None


def apply(row: Row | None, event: Event) -> Row | None:
    data = event.data
    if isinstance(data, BroadcastCreated) and row is None:
        return {
            "broadcast_id": data.broadcast_id,
            "created_by": data.created_by,
            "title": data.title,
            "message": data.message,
            "whatsapp_template": data.whatsapp_template,
            "filter": dict(data.filter),
            "send_at": dict(data.send_at),
            "recipients": data.recipients,
            "status": "active",
            "created_at": event.recorded_at,
            "cancelled_by": None,
            "cancelled_at": None,
            "seq": event.seq,
            "step": data.step,
            "schedule": data.schedule,
        }
    if isinstance(data, BroadcastCancelled) and row is not None and row["status"] == "active":
        return {
            **row,
            "status": "cancelled",
            "cancelled_by": data.by,
            "cancelled_at": event.recorded_at,
        }
    return row


PROJECTION = Projection("broadcasts", "broadcast_id", COLUMNS, key, apply, types=TYPES)
