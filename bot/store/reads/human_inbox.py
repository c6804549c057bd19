"""Named reads for the inbox of messages that need a human: messages from unknown numbers
(any stream that is not a participant's, however unknown senders are stored), from
participants after they withdrew, were unenrolled or opted out, and those that arrived during
a takeover; minus those a `message.handled` event settles."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select

from bot.store.event_store import EventStore
from bot.store.events import Event
from bot.store.schema import alerts, events, participants
from bot.store.stored_rows import row_to_event

PARTICIPANT = "participant:"
LEFT = ("participant.withdrawn", "participant.opted_out", "participant.unenrolled")
TAKEOVER = ("takeover.started", "takeover.ended")


@dataclass(frozen=True)
class Entry:
    """One message needing a human; `participant_id` is None for an unknown sender, `why`
    says why it is here (`unknown sender`, `withdrawn`, `opted out`, `during takeover`...)."""

    message_id: str
    seq: int
    stream_id: str
    participant_id: str | None
    why: str
    recorded_at: datetime
    sender: str
    body: str


def open_entries(store: EventStore) -> list[Entry]:
    """Every message needing a human not yet handled, newest first."""
    with store.reading() as conn:
        handled = {
            str(r[0])
            for r in conn.execute(
                select(events.c.data["message_id"].as_string()).where(
                    events.c.event_type == "message.handled"
                )
            )
        }
        why: dict[int, str] = {}
        for seq in conn.execute(
            select(events.c.seq).where(
                events.c.event_type == "message.received",
                ~events.c.stream_id.like(PARTICIPANT + "%"),
            )
        ).scalars():
            why[seq] = "unknown sender"
        for seq, reason in _after_leaving(conn):
            why.setdefault(seq, reason)
        for seq in _during_takeover(conn):
            why.setdefault(seq, "during takeover")
        if not why:
            return []
        rows = conn.execute(
            select(events).where(events.c.seq.in_(list(why))).order_by(events.c.seq.desc())
        ).all()
        found = [
            _entry(row_to_event(row, store.sealer, conn), why[row.seq])
            for row in rows
            if row.event_id not in handled
        ]
    return found


def message_event(store: EventStore, message_id: str) -> Event | None:
    """The `message.received` event `message_id` (None: no such message)."""
    with store.reading() as conn:
        row = conn.execute(
            select(events).where(
                events.c.event_id == message_id, events.c.event_type == "message.received"
            )
        ).first()
        return None if row is None else row_to_event(row, store.sealer, conn)


def _after_leaving(conn: Any) -> list[tuple[int, str]]:
    """Messages of participants who left or opted out, received after they did."""
    gone = {
        PARTICIPANT + r.participant_id: ("opted out" if r.status == "active" else r.status)
        for r in conn.execute(
            select(participants.c.participant_id, participants.c.status).where(
                or_(participants.c.status != "active", participants.c.opted_out.is_(True))
            )
        )
    }
    if not gone:
        return []
    left: dict[str, int] = {}
    rows = conn.execute(
        select(events.c.stream_id, events.c.seq, events.c.event_type)
        .where(
            and_(
                events.c.stream_id.in_(list(gone)),
                or_(events.c.event_type.in_(LEFT), events.c.event_type == "message.received"),
            )
        )
        .order_by(events.c.seq)
    ).all()
    found = []
    for stream, seq, event_type in rows:
        if event_type in LEFT:
            left.setdefault(stream, seq)
        elif stream in left:
            found.append((seq, gone[stream]))
    return found


def _during_takeover(conn: Any) -> list[int]:
    """Messages received while a staff member held the participant's conversation."""
    streams = select(events.c.stream_id).where(events.c.event_type == "takeover.started")
    rows = conn.execute(
        select(events.c.stream_id, events.c.seq, events.c.event_type)
        .where(
            and_(
                events.c.stream_id.in_(streams),
                or_(events.c.event_type.in_(TAKEOVER), events.c.event_type == "message.received"),
            )
        )
        .order_by(events.c.seq)
    ).all()
    held: dict[str, bool] = defaultdict(bool)
    found = []
    for stream, seq, event_type in rows:
        if event_type in TAKEOVER:
            held[stream] = event_type == "takeover.started"
        elif held[stream]:
            found.append(seq)
    return found


def _entry(event: Event, why: str) -> Entry:
    data: Any = event.data
    pid = event.stream_id[len(PARTICIPANT) :] if event.stream_id.startswith(PARTICIPANT) else None
    return Entry(
        message_id=event.event_id,
        seq=event.seq,
        stream_id=event.stream_id,
        participant_id=pid,
        why=why,
        recorded_at=event.recorded_at,
        sender=str(getattr(data, "from_address", "") or ""),
        body=str(getattr(data, "body", "") or ""),
    )


def supervised_participants(store: EventStore) -> set[str]:
    """Participants a supervisor may see: those with an alert for supervisors (a crisis, a
    review item, or one texted to them), as the participant page decides."""
    query = select(alerts.c.participant_id).where(
        and_(
            alerts.c.participant_id.is_not(None),
            or_(
                alerts.c.kind == "crisis",
                alerts.c.severity == "review",
                alerts.c.notify_supervisors.is_(True),
            ),
        )
    )
    with store.reading() as conn:
        return {str(r[0]) for r in conn.execute(query)}
