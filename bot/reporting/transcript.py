"""A participant's transcript: their inbound and outbound messages, built from events + outbox.

`build` is pure (events and outbox rows in, lines out); `read_page` and `read_lines` fetch what
it needs from the store, for the API and for `tandem export`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.localtime import validate_timezone
from bot.core.segments import count_segments
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageQueued, MessageReceived, MessageSent
from bot.store.events import Event, participant_stream
from bot.store.reads.transcript import event_batches, events_about_outbox, events_page
from bot.store.reads.transcript import outbox_rows as read_outbox_rows

LINE_TYPES = (MessageReceived.event_type, MessageQueued.event_type)


@dataclass(frozen=True)
class TranscriptLine:
    """One message to or from a participant, as a researcher reads it."""

    participant_id: str
    seq: int
    message_id: str
    direction: str  # "inbound" | "outbound"
    channel: str
    kind: str
    keyword: str | None
    text: str | None
    media: tuple[str, ...]
    status: str
    error_code: int | None
    error_message: str | None
    segments: int | None
    provider_sid: str | None
    created_at: datetime
    sent_at: datetime | None
    status_at: datetime | None


def zone(name: str | None) -> ZoneInfo:
    """The participant's zone; UTC if the stored name is not (or no longer) an IANA zone."""
    try:
        return validate_timezone(name or "UTC")
    except ValueError:
        return ZoneInfo("UTC")


def local(instant: datetime | None, tz: ZoneInfo) -> datetime | None:
    return instant.astimezone(tz) if instant is not None else None


def segment_count(channel: str, text: str | None, reported: int | None) -> int | None:
    """Twilio's count when it reported one, else counted from the text (SMS only)."""
    if reported is not None:
        return reported
    if channel == "sms" and text:
        return count_segments(text)
    return None


def inbound_line(ev: Event, data: MessageReceived) -> TranscriptLine:
    return TranscriptLine(
        participant_id=ev.participant_id or "",
        seq=ev.seq,
        message_id=data.message_sid,
        direction="inbound",
        channel=data.channel,
        kind="message",
        keyword=data.keyword,
        text=data.body,
        media=tuple(m.url for m in data.media),
        status="received",
        error_code=None,
        error_message=None,
        segments=segment_count(data.channel, data.body, None),
        provider_sid=data.message_sid,
        created_at=ev.occurred_at,
        sent_at=None,
        status_at=ev.occurred_at,
    )


def outbound_line(
    ev: Event, data: MessageQueued, row: Mapping[str, Any] | None, reported: int | None
) -> TranscriptLine:
    row = row or {}
    return TranscriptLine(
        participant_id=ev.participant_id or "",
        seq=ev.seq,
        message_id=data.outbox_id,
        direction="outbound",
        channel=data.channel,
        kind=data.kind,
        keyword=None,
        text=data.body,
        media=(),
        status=row.get("status") or "pending",
        error_code=row.get("error_code"),
        error_message=row.get("error_message"),
        segments=segment_count(data.channel, data.body, reported),
        provider_sid=row.get("provider_sid"),
        created_at=ev.occurred_at,
        sent_at=row.get("sent_at"),
        status_at=row.get("updated_at"),
    )


def build(
    stream: Iterable[Event], outbox_rows: Mapping[str, Mapping[str, Any]]
) -> list[TranscriptLine]:
    """The transcript lines of `stream` (message events in order; others are ignored).

    `outbox_rows` maps outbox id to its `outbox` row (status, error, sent time); `message.sent`
    events in `stream` give the segment counts Twilio reported. Messages queued for someone
    other than the participant (a supervisor alert, a debug trace) are not part of it.
    """
    received: list[tuple[Event, Any]] = []
    reported: dict[str, int] = {}
    for ev in stream:
        data = ev.data
        if isinstance(data, MessageSent) and data.segments is not None:
            reported[data.outbox_id] = data.segments
        elif isinstance(data, MessageReceived) or (
            isinstance(data, MessageQueued) and data.to_participant
        ):
            received.append((ev, data))
    lines = []
    for ev, data in sorted(received, key=lambda pair: pair[0].seq):
        if isinstance(data, MessageReceived):
            lines.append(inbound_line(ev, data))
        else:
            row = outbox_rows.get(data.outbox_id)
            lines.append(outbound_line(ev, data, row, reported.get(data.outbox_id)))
    return lines


def read_page(
    store: EventStore, participant_id: str, after: int, limit: int
) -> tuple[list[TranscriptLine], int | None]:
    """Up to `limit` lines with seq > `after`, and the cursor of the next page (None at the end)."""
    stream_id = participant_stream(participant_id)
    found = events_page(store, stream_id, LINE_TYPES, after, limit, _is_line)
    lines = build(_with_details(store, stream_id, found), _outbox_of(store, found))
    if len(lines) > limit:
        return lines[:limit], lines[limit - 1].seq
    return lines, None


def read_lines(
    store: EventStore,
    participant_id: str,
    *,
    since: datetime | None = None,
    upto: int | None = None,
    batch: int = 1000,
) -> Iterable[TranscriptLine]:
    """Every line of a participant's transcript (optionally from `since`, up to seq `upto`),
    fetched `batch` message events at a time."""
    stream_id = participant_stream(participant_id)
    for found in event_batches(
        store, stream_id, LINE_TYPES, _is_line, since=since, upto=upto, batch=batch
    ):
        yield from build(_with_details(store, stream_id, found), _outbox_of(store, found))


def _is_line(ev: Event) -> bool:
    data = ev.data
    return isinstance(data, MessageReceived) or (
        isinstance(data, MessageQueued) and data.to_participant
    )


def _outbound_ids(found: Sequence[Event]) -> list[str]:
    return [e.data.outbox_id for e in found if isinstance(e.data, MessageQueued)]


def _with_details(store: EventStore, stream_id: str, found: list[Event]) -> list[Event]:
    """`found` plus the `message.sent` events of its outbound messages (segment counts)."""
    ids = _outbound_ids(found)
    if not ids:
        return found
    return found + events_about_outbox(store, stream_id, MessageSent.event_type, ids)


def _outbox_of(store: EventStore, found: Sequence[Event]) -> dict[str, dict[str, Any]]:
    ids = _outbound_ids(found)
    if not ids:
        return {}
    return read_outbox_rows(store, ids)
