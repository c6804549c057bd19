"""What the study page's "Needs attention" counts beyond alerts and sends: failed turns,
participants stuck on fallbacks, and messages that need a human (from unknown numbers, from
participants who left or opted out, during a takeover)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, literal, or_, select

from bot.store.events import SENDER_PREFIX, SYSTEM_STREAM
from bot.store.schema import events, participants, takeovers

LEFT = ("participant.withdrawn", "participant.opted_out", "participant.unenrolled")
# A participant whose last STUCK_TURNS turns within STUCK_WINDOW all failed (no LLM call
# succeeded since) is getting nothing but fallbacks.
STUCK_TURNS = 2
STUCK_WINDOW = timedelta(days=1)


@dataclass(frozen=True)
class Attention:
    failed_turns: int
    stuck_on_fallbacks: int
    needing_human: int


def attention(conn: Connection, now: datetime, window: timedelta) -> Attention:
    """The counts within `window` before `now` (stuck: within STUCK_WINDOW)."""
    since = now - window
    failed = conn.execute(
        select(func.count())
        .select_from(events)
        .where(and_(events.c.event_type == "turn.failed", events.c.recorded_at >= since))
    ).scalar_one()
    return Attention(
        failed_turns=int(failed),
        stuck_on_fallbacks=_stuck(conn, now - STUCK_WINDOW),
        needing_human=_needing_human(conn, since),
    )


def _stuck(conn: Connection, since: datetime) -> int:
    """Participants whose newest STUCK_TURNS outcomes are failed turns (an LLM call that
    succeeded ends a run of failures)."""
    rows = conn.execute(
        select(events.c.stream_id, events.c.event_type, events.c.data["ok"].as_boolean())
        .where(
            and_(
                events.c.event_type.in_(("turn.failed", "llm.called")),
                events.c.recorded_at >= since,
                events.c.stream_id.like("participant:%"),
            )
        )
        .order_by(events.c.seq)
    ).all()
    runs: dict[str, int] = defaultdict(int)
    for stream, event_type, ok in rows:
        if event_type == "turn.failed":
            runs[stream] += 1
        elif ok is not False:
            runs[stream] = 0
    return sum(1 for n in runs.values() if n >= STUCK_TURNS)


def _needing_human(conn: Connection, since: datetime) -> int:
    handled = select(events.c.data["message_id"].as_string()).where(
        events.c.event_type == "message.handled"
    )
    received = and_(
        events.c.event_type == "message.received",
        events.c.recorded_at >= since,
        events.c.event_id.not_in(handled),  # settled in the inbox or at a hand-back
    )
    # Unknown senders' texts: on a sender's own stream, or (recorded before those streams
    # existed) on the system stream, as the inbox lists them (bot/store/reads/human_inbox.py).
    stranger = or_(
        events.c.stream_id.like(f"{SENDER_PREFIX}%"), events.c.stream_id == SYSTEM_STREAM
    )
    unknown = _count(conn, select(func.count()).where(received, stranger))
    left = (
        # By seq, not time: a message in the same instant as the leaving still counts.
        select(events.c.stream_id, func.max(events.c.seq).label("at"))
        .where(events.c.event_type.in_(LEFT))
        .group_by(events.c.stream_id)
        .subquery()
    )
    stream_of = literal("participant:") + participants.c.participant_id
    after_leaving = (
        select(func.count())
        .select_from(
            events.join(left, left.c.stream_id == events.c.stream_id).join(
                participants, stream_of == events.c.stream_id
            )
        )
        .where(
            received,
            events.c.seq > left.c.at,
            or_(participants.c.status != "active", participants.c.opted_out.is_(True)),
        )
    )
    taken_over = (
        select(func.count())
        .select_from(
            events.join(
                takeovers,
                literal("participant:") + takeovers.c.participant_id == events.c.stream_id,
            )
        )
        .where(
            received, takeovers.c.status == "active", events.c.recorded_at >= takeovers.c.started_at
        )
    )
    return unknown + _count(conn, after_leaving) + _count(conn, taken_over)


def _count(conn: Connection, query: Any) -> int:
    return int(conn.execute(query).scalar_one() or 0)
