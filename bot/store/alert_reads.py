"""Reads of the `alerts` projection: the list the API filters, the alerts still to be closed."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from bot.store.schema import alerts


def list_alerts(
    conn: Connection,
    *,
    status: str | None = None,
    participant_id: str | None = None,
    kind: str | None = None,
    severity: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """Alerts, newest first, matching every filter given."""
    query = select(alerts)
    for column, value in (
        (alerts.c.status, status),
        (alerts.c.participant_id, participant_id),
        (alerts.c.kind, kind),
        (alerts.c.severity, severity),
    ):
        if value is not None:
            query = query.where(column == value)
    query = query.order_by(alerts.c.raised_at.desc(), alerts.c.alert_id).limit(limit)
    return [dict(row._mapping) for row in conn.execute(query)]


def unresolved_alerts(conn: Connection) -> list[dict[str, Any]]:
    """Every alert open or acknowledged (what a supervisor's ACK may name)."""
    query = select(alerts).where(alerts.c.status.in_(("open", "acknowledged")))
    return [dict(row._mapping) for row in conn.execute(query)]
