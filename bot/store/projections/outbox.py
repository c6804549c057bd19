"""The `outbox` projection: messages to send, and what became of each."""

from __future__ import annotations

from bot.store.event_types.messages import (
    MessageDeferred,
    MessageFailed,
    MessageQueued,
    MessageSent,
    MessageStatus,
    MessageSuppressed,
)
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "outbox_id",
    "participant_id",
    "stream_id",
    "position",
    "to_address",
    "channel",
    "kind",
    "body",
    "content_sid",
    "content_variables",
    "status",
    "attempts",
    "next_attempt_at",
    "provider_sid",
    "error_code",
    "error_message",
    "queued_at",
    "sent_at",
    "updated_at",
)
# Delivery progress never moves backwards; failed/undelivered are terminal. "unknown" (a send
# that may or may not have created a message) ranks lowest, so any report from the provider
# (even "accepted") settles it.
RANK = {
    "pending": 0,
    "deferred": 0,
    "unknown": 0,
    "accepted": 1,
    "scheduled": 1,
    "queued": 2,
    "sending": 3,
    "sent": 4,
    "delivered": 5,
    "read": 6,
}
TERMINAL = {"failed", "undelivered", "canceled", "suppressed"}
# Not yet sent: the dispatcher's own verdicts (failed, suppressed, deferred) apply only here.
UNSENT = ("pending", "deferred", "unknown")
TYPES = {
    cls.event_type
    for cls in (
        MessageQueued,
        MessageSent,
        MessageFailed,
        MessageStatus,
        MessageSuppressed,
        MessageDeferred,
    )
}


def key(event: Event) -> str | None:
    if event.event_type not in TYPES:
        return None
    return getattr(event.data, "outbox_id", None)


def advance(current: str, new: str) -> str:
    """The status after a report of `new`: forward only, terminal states stay."""
    if current in TERMINAL:
        return current
    if new in TERMINAL:
        return new
    return new if RANK.get(new, 0) > RANK.get(current, 0) else current


def _reported(row: Row) -> str:
    """The status a provider report starts from. A row failed without a provider message can
    only have been given up after an unknown outcome: the provider's word then wins."""
    if row["status"] == "failed" and row["provider_sid"] is None:
        return "unknown"
    return row["status"]


def apply(row: Row | None, event: Event) -> Row | None:
    data = event.data
    at = event.recorded_at
    if isinstance(data, MessageQueued):
        if row is not None:
            return row
        return {
            "outbox_id": data.outbox_id,
            "participant_id": event.participant_id,
            "stream_id": event.stream_id,
            "position": event.seq,
            "to_address": data.to_address,
            "channel": data.channel,
            "kind": data.kind,
            "body": data.body,
            "content_sid": data.content_sid,
            "content_variables": data.content_variables,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": at,
            "provider_sid": None,
            "error_code": None,
            "error_message": None,
            "queued_at": at,
            "sent_at": None,
            "updated_at": at,
        }
    if row is None:
        return None
    if isinstance(data, MessageFailed | MessageSuppressed | MessageDeferred):
        if row["status"] not in UNSENT:
            return row  # a late verdict never undoes a send the provider confirmed
    if isinstance(data, MessageSent):
        return {
            **row,
            "status": advance(_reported(row), "sent"),
            "provider_sid": data.provider_sid,
            "attempts": data.attempt,
            "sent_at": at,
            "updated_at": at,
        }
    if isinstance(data, MessageFailed):
        status = "failed" if data.permanent else "unknown" if data.outcome_unknown else "pending"
        return {
            **row,
            "status": status,
            "attempts": data.attempt,
            "error_code": data.error_code,
            "error_message": data.error_message,
            "next_attempt_at": data.retry_at if data.retry_at else row["next_attempt_at"],
            "updated_at": at,
        }
    if isinstance(data, MessageStatus):
        return {
            **row,
            "status": advance(_reported(row), data.status),
            "provider_sid": row["provider_sid"] or data.provider_sid,
            "error_code": data.error_code or row["error_code"],
            "updated_at": at,
        }
    if isinstance(data, MessageSuppressed):
        return {**row, "status": "suppressed", "error_message": data.reason, "updated_at": at}
    if isinstance(data, MessageDeferred):
        return {
            **row,
            "status": "deferred",
            "error_message": data.reason,
            "next_attempt_at": data.until,
            "updated_at": at,
        }
    return row


PROJECTION = Projection("outbox", "outbox_id", COLUMNS, key, apply, types=frozenset(TYPES))
