"""What readiness is judged on (GET /ready, the console, /metrics, operator alerts): the last LLM
calls and sends, failed turns, parked work, due and overdue timers, queue depths and alerts
nobody took on, each counted by the database in one snapshot."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, select

from bot.store.schema import alerts, events, outbox, timers, work_items

# Outbox statuses a send ends in, and those of them that mean it did not reach the person.
FINISHED = ("sent", "delivered", "read", "failed", "undelivered", "unknown")
FAILED = ("failed", "undelivered")


@dataclass(frozen=True)
class Limits:
    """How far back and how late: the last `calls` LLM calls and sends, failed turns within
    `turn_window`, timers more than `late` past due, alerts open for more than `unattended`,
    review items open for more than `review_unattended`."""

    calls: int = 10
    turn_window: timedelta = timedelta(hours=1)
    late: timedelta = timedelta(minutes=5)
    unattended: timedelta = timedelta(minutes=60)
    review_unattended: timedelta = timedelta(minutes=65)


@dataclass(frozen=True)
class Figures:
    llm_calls: int  # of the last `calls`
    llm_failed: int
    sends: int  # of the last `calls` finished sends
    sends_failed: int
    failed_turns: int  # within turn_window
    parked_work: int
    pending_work: int
    pending_sends: int
    due_timers: int
    overdue_timers: int
    open_alerts: int  # review items aside
    unattended_alerts: int
    open_reviews: int
    unattended_reviews: int
    sends_by_status: dict[str, int]
    llm_by_outcome: dict[str, int]


def figures(conn: Connection, now: datetime, limits: Limits = Limits()) -> Figures:
    """The figures as the database holds them at `now`."""
    last_calls = (
        select(events.c.data["ok"].as_boolean().label("ok"))
        .where(events.c.event_type == "llm.called")
        .order_by(events.c.seq.desc())
        .limit(limits.calls)
        .subquery()
    )
    calls = conn.execute(select(last_calls.c.ok)).scalars().all()
    last_sends = (
        select(outbox.c.status)
        .where(outbox.c.status.in_(FINISHED))
        .order_by(outbox.c.updated_at.desc())
        .limit(limits.calls)
        .subquery()
    )
    sends = conn.execute(select(last_sends.c.status)).scalars().all()
    scheduled = timers.c.status == "scheduled"
    review = alerts.c.severity == "review"
    unacknowledged = and_(alerts.c.status == "open", ~review)
    open_review = and_(alerts.c.status != "resolved", review)
    by_status = conn.execute(select(outbox.c.status, func.count()).group_by(outbox.c.status))
    ok = events.c.data["ok"].as_boolean()
    by_outcome = conn.execute(
        select(ok, func.count()).where(events.c.event_type == "llm.called").group_by(ok)
    )
    return Figures(
        llm_calls=len(calls),
        llm_failed=sum(1 for c in calls if c is False),
        sends=len(sends),
        sends_failed=sum(1 for s in sends if s in FAILED),
        failed_turns=_count(
            conn,
            events,
            and_(
                events.c.event_type == "turn.failed",
                events.c.recorded_at >= now - limits.turn_window,
            ),
        ),
        parked_work=_count(conn, work_items, work_items.c.status == "parked"),
        pending_work=_count(conn, work_items, work_items.c.status == "pending"),
        pending_sends=_count(conn, outbox, outbox.c.status == "pending"),
        due_timers=_count(conn, timers, and_(scheduled, timers.c.due_at <= now)),
        overdue_timers=_count(conn, timers, and_(scheduled, timers.c.due_at < now - limits.late)),
        open_alerts=_count(conn, alerts, and_(alerts.c.status != "resolved", ~review)),
        unattended_alerts=_count(
            conn, alerts, and_(unacknowledged, alerts.c.raised_at < now - limits.unattended)
        ),
        open_reviews=_count(conn, alerts, open_review),
        unattended_reviews=_count(
            conn, alerts, and_(open_review, alerts.c.raised_at < now - limits.review_unattended)
        ),
        sends_by_status={str(s): int(n) for s, n in by_status},
        llm_by_outcome=_outcomes(by_outcome),
    )


def _outcomes(rows: Any) -> dict[str, int]:
    found = {"ok": 0, "failed": 0}
    for ok, n in rows:
        found["failed" if ok is False else "ok"] += int(n)
    return found


def episodes(conn: Connection, recent: int = 500) -> dict[str, datetime]:
    """Each degraded state whose episode is open (its newest `readiness.*` event is
    `readiness.degraded`), and when it began."""
    rows = conn.execute(
        select(events.c.event_type, events.c.data["state"].as_string(), events.c.recorded_at)
        .where(events.c.event_type.in_(("readiness.degraded", "readiness.restored")))
        .order_by(events.c.seq.desc())
        .limit(recent)
    ).all()
    newest: dict[str, tuple[str, datetime]] = {}
    for event_type, state, at in rows:
        newest.setdefault(state, (event_type, at))
    return {s: at for s, (t, at) in newest.items() if t == "readiness.degraded"}


def alerted_since(conn: Connection, state: str, since: datetime) -> bool:
    """Whether an operator alert about `state` was raised at or after `since`."""
    where = and_(alerts.c.kind == "degraded", alerts.c.rule == state, alerts.c.raised_at >= since)
    return _count(conn, alerts, where) > 0


def _count(conn: Connection, table: Any, where: Any) -> int:
    return int(conn.execute(select(func.count()).select_from(table).where(where)).scalar_one())
