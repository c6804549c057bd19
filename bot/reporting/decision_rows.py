"""The rows of decisions.csv (docs/decisions.md): one per `decision.made`, joined with its
`decision.outcome`, in the columns bot.analysis.report reads. Pure: events in, rows out.
`tandem analyze decisions` (from the database) and the console's Decisions page read them;
the export's decisions.csv is bot.reporting.decision_file's fold, per participant."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.interventions.interpreter.decision_outcomes import as_number
from bot.store.event_types.decisions import DecisionMade, DecisionOutcome
from bot.store.events import Event

Row = dict[str, Any]


def decision_rows(
    events: Iterable[Event],
    zones: Mapping[str, ZoneInfo] | None = None,
    enrolled: Mapping[str, datetime] | None = None,
    arms: Mapping[str, str] | None = None,
) -> list[Row]:
    """One row per decision point, in the order made: `zones` (participant -> zone) give the
    local time (naive) and `enrolled` the day in study (0 on the day of enrollment); `arms`
    the study arm, where there is one. An outcome not yet recorded leaves the row's outcome
    empty; an unavailable point's probabilities and option are empty."""
    made: list[tuple[str, DecisionMade]] = []
    outcomes: dict[tuple[str, str, int], DecisionOutcome] = {}
    for ev in events:
        pid = str(ev.participant_id or "")
        if isinstance(ev.data, DecisionMade):
            made.append((pid, ev.data))
        elif isinstance(ev.data, DecisionOutcome):
            outcomes[(pid, ev.data.decision, ev.data.index)] = ev.data
    return [
        _row(pid, point, outcomes, zones or {}, enrolled or {}, arms or {}) for pid, point in made
    ]


def _row(
    pid: str,
    point: DecisionMade,
    outcomes: Mapping[tuple[str, str, int], DecisionOutcome],
    zones: Mapping[str, ZoneInfo],
    enrolled: Mapping[str, datetime],
    arms: Mapping[str, str],
) -> Row:
    zone = zones.get(pid, ZoneInfo("UTC"))
    local = point.scheduled_for.astimezone(zone)
    start = enrolled.get(pid)
    outcome = outcomes.get((pid, point.decision, point.index))
    row: Row = {
        "participant": pid,
        "arm": arms.get(pid, ""),
        "decision": point.decision,
        "index": point.index,
        "utc": point.scheduled_for.isoformat(),
        "local_time": local.replace(tzinfo=None).isoformat(),
        "day_in_study": (local.date() - start.astimezone(zone).date()).days if start else None,
        "available": point.available,
        "unavailable_reason": point.unavailable_reason or "",
        "option": point.option or "",
        "outcome_value": as_number(outcome.value)
        if outcome and outcome.status == "observed"
        else None,
        "outcome_status": outcome.status if outcome else "",
    }
    row |= {f"p_{option}": p for option, p in point.ordered_probabilities().items()}
    row |= {f"mod_{name}": as_number(value) for name, value in point.moderators.items()}
    return row
