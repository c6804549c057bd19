"""What a Twilio status callback records: `message.status` on the message's stream, and consent
lost to error 21610. The outbox projection keeps the status from moving backwards."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from bot.channel import consent
from bot.channel.inbound import Append, InvalidForm, message_sid, required
from bot.store.event_types.messages import DeliveryStatus, MessageStatus
from bot.store.events import SYSTEM_STREAM, EventData

UNSUBSCRIBED = 21610  # Twilio: the recipient replied STOP; every later send fails
STATUSES = frozenset(get_args(DeliveryStatus))


@dataclass(frozen=True)
class StatusReport:
    """One callback: which message, its new status, and our outbox id from the callback URL."""

    message_sid: str
    status: DeliveryStatus
    error_code: int | None = None
    outbox_id: str | None = None

    @property
    def idempotency_key(self) -> str:
        return f"status:{self.message_sid}:{self.status}"


_OUTBOX_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def parse_status(form: Mapping[str, str], outbox_id: str | None) -> StatusReport:
    """Read a status-callback form; raises InvalidForm naming the first problem."""
    sid = message_sid(form)
    status = required(form, "MessageStatus")
    if status not in STATUSES:
        raise InvalidForm(f"MessageStatus {status[:40]!r} is not a Twilio message status")
    if outbox_id and not _OUTBOX_ID.fullmatch(outbox_id):
        raise InvalidForm("outbox_id (in the callback URL) must be the id Tandem put there")
    raw_code = (form.get("ErrorCode") or "").strip()
    if raw_code and not (raw_code.isascii() and raw_code.isdigit()):
        raise InvalidForm("ErrorCode must be a whole number")
    return StatusReport(sid, status, int(raw_code) if raw_code else None, outbox_id or None)  # type: ignore[arg-type]  # status checked against the Literal above


def decide(
    report: StatusReport,
    outbox_row: Mapping[str, Any] | None,
    participant: Mapping[str, Any] | None,
    pending_timers: Sequence[Mapping[str, Any]],
    now: datetime,
) -> Append:
    """`message.status` on the stream of the outbox row it reports on (the system stream when
    no row is known); a 21610 also opts the row's participant out."""
    status = MessageStatus(
        provider_sid=report.message_sid,
        status=report.status,
        outbox_id=outbox_row["outbox_id"] if outbox_row else None,
        error_code=report.error_code,
    )
    events: list[EventData] = [status]
    if participant is not None and report.error_code == UNSUBSCRIBED:
        events += consent.opt_out(participant, pending_timers, "error_21610", now)
    return Append(
        outbox_row["stream_id"] if outbox_row else SYSTEM_STREAM,
        events,
        idempotency_key=report.idempotency_key,
        expected_version=participant["version"] if participant is not None else None,
    )
