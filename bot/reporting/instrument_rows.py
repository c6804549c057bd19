"""instruments.csv, folded from a participant's instrument events (pure): one row per
administration that ended (completed or abandoned), with its items, total, band and duration,
in the columns bot.instruments.result describes (docs/instruments.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bot.instruments.result import COLUMNS
from bot.reporting.results import Column
from bot.reporting.transcript import local, zone
from bot.store.event_types.instruments import InstrumentAbandoned, InstrumentCompleted
from bot.store.events import Event

INSTRUMENT_COLUMNS = (
    *(Column(c.name, c.type, c.description, c.options) for c in COLUMNS),
    Column("duration_minutes", "number", "minutes from the first item sent to the end"),
    Column("administration_id", "text", "the administration's id (its events carry it)"),
)
INSTRUMENT_TYPES = ("instrument.completed", "instrument.abandoned")


def instrument_rows(
    history: Iterable[Event], row: dict[str, Any], since: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per administration that ended, in order; `since` keeps those ended from then."""
    timezone = str(row.get("timezone") or "UTC")
    tz = zone(timezone)
    found: list[dict[str, Any]] = []
    count: dict[str, int] = {}
    for ev in history:
        data = ev.data
        if not isinstance(data, InstrumentCompleted | InstrumentAbandoned):
            continue
        if since is not None and ev.occurred_at < since:
            continue
        result = data.result if isinstance(data, InstrumentCompleted) else {}
        if isinstance(data, InstrumentCompleted):
            count[data.instrument] = data.count
        answers = result.get("items") or dict(getattr(data, "answers", {}) or {})
        answers = {k: v for k, v in answers.items() if v is not None}
        missing = result.get("missing")
        found.append(
            {
                "participant_id": row["participant_id"],
                "intervention": row.get("intervention"),
                "instrument": data.instrument,
                "administration": data.number,
                "count": count.get(data.instrument, 0),
                "status": "completed" if isinstance(data, InstrumentCompleted) else "abandoned",
                "mode": data.mode,
                "timezone": timezone,
                "started_utc": data.started_at,
                "ended_utc": ev.occurred_at,
                "ended_local": local(ev.occurred_at, tz),
                "total": result.get("total"),
                "mean": result.get("mean"),
                "band": result.get("band"),
                "complete": bool(result.get("complete")),
                "answered": len(answers),
                "missing": " ".join(missing) if missing is not None else "",
                "answers": json.dumps(answers, ensure_ascii=False),
                "subscales": json.dumps(result.get("subscales") or {}, ensure_ascii=False),
                "duration_minutes": round(
                    (ev.occurred_at - data.started_at).total_seconds() / 60, 2
                ),
                "administration_id": data.administration_id,
            }
        )
    return found
