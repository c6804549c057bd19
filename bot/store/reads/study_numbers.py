"""The study overview's numbers, counted by the database: status, messages, adherence, trouble."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, select

from bot.store.schema import alerts, events, outbox, participants, work_items

DAYS = 14
ACTIVE_WINDOW = timedelta(days=7)


@dataclass(frozen=True)
class Overview:
    by_status: list[tuple[str, int]]
    by_intervention: list[tuple[str, int]]
    days: list[str]
    messages: dict[str, list[int]]
    adherence: dict[str, dict[str, list[int]]]  # question -> answered/missed per day
    active: int
    replied_recently: int
    open_alerts: int  # review items aside
    open_reviews: int
    failed_sends: int
    parked_work: int

    @property
    def response_rate(self) -> float | None:
        return self.replied_recently / self.active if self.active else None


def _day(conn: Connection, column: Any) -> Any:
    """The UTC calendar day of a timestamp column, as the engine writes it."""
    if conn.dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.strftime("%Y-%m-%d", column)


def overview(conn: Connection, now: datetime) -> Overview:
    start = (now - timedelta(days=DAYS - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    days = [(start + timedelta(days=n)).strftime("%Y-%m-%d") for n in range(DAYS)]
    enrolled = participants.c.status != "unenrolled"
    by_status = conn.execute(
        select(participants.c.status, func.count()).group_by(participants.c.status)
    ).all()
    by_intervention = conn.execute(
        select(participants.c.intervention, func.count())
        .where(enrolled)
        .group_by(participants.c.intervention)
    ).all()
    day = _day(conn, events.c.recorded_at)
    messages = {"in": [0] * DAYS, "out": [0] * DAYS}
    counted = conn.execute(
        select(events.c.event_type, day, func.count())
        .where(
            and_(
                events.c.recorded_at >= start,
                events.c.event_type.in_(("message.received", "message.queued")),
                events.c.stream_id.like("participant:%"),
            )
        )
        .group_by(events.c.event_type, day)
    ).all()
    for event_type, on, count in counted:
        if on in days:
            messages["in" if event_type == "message.received" else "out"][days.index(on)] += count
    adherence: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {"answered": [0] * DAYS, "missed": [0] * DAYS}
    )
    question = events.c.data["measurement"].as_string()
    for event_type, name, on, count in conn.execute(
        select(events.c.event_type, question, day, func.count())
        .where(
            and_(
                events.c.recorded_at >= start,
                events.c.event_type.in_(("measurement.recorded", "measurement.missed")),
            )
        )
        .group_by(events.c.event_type, question, day)
    ).all():
        if on in days:
            kind = "answered" if event_type == "measurement.recorded" else "missed"
            adherence[name][kind][days.index(on)] += count
    # Who can be expected to write: active (so not withdrawn, paused or completed) and not
    # opted out (a participant who sent STOP is not messaged, so silence is not non-response).
    active = and_(participants.c.status == "active", participants.c.opted_out.is_(False))
    return Overview(
        by_status=sorted((s, n) for s, n in by_status),
        by_intervention=sorted((i, n) for i, n in by_intervention),
        days=days,
        messages=messages,
        adherence=dict(sorted(adherence.items())),
        active=_count(conn, participants, active),
        replied_recently=_count(
            conn, participants, and_(active, participants.c.last_inbound_at >= now - ACTIVE_WINDOW)
        ),
        open_alerts=_count(
            conn, alerts, and_(alerts.c.status != "resolved", alerts.c.severity != "review")
        ),
        open_reviews=_count(
            conn, alerts, and_(alerts.c.status != "resolved", alerts.c.severity == "review")
        ),
        failed_sends=_count(conn, outbox, outbox.c.status.in_(("failed", "undelivered"))),
        parked_work=_count(conn, work_items, work_items.c.status == "parked"),
    )


def _count(conn: Connection, table: Any, where: Any) -> int:
    return int(conn.execute(select(func.count()).select_from(table).where(where)).scalar_one())
