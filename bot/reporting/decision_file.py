"""decisions.csv, folded from a participant's decision events (pure): one row per decision
point, available or not (docs/decisions.md), joined with its proximal outcome, in the
participant's arm at that moment. Its fixed columns, typed and described, are in the codebook;
each option's probability (`p_<option>`) and each moderator's value (`mod_<name>`) get a
column of their own, named from the decision files the export describes (`decision_columns`).

An outcome's status: `observed` or `missing` as `decision.outcome` recorded it; `missing` too
when the participant withdrew or was erased while the window was open (no outcome can come);
`pending` while it is open; blank for a point that was not available (nothing was measured).
A point that could not be drawn (`decision.failed`) is a row too, unavailable for `failed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from bot.interventions.interpreter.decision_outcomes import as_number
from bot.reporting.cells import naive
from bot.reporting.columns import PID, timed
from bot.reporting.results import Column
from bot.reporting.transcript import local, zone
from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.events import Event

OUTCOME_STATUSES = ("observed", "missing", "pending")
REASONS: tuple[str, ...] = (
    "opted_out",
    "withdrawn",
    "paused",
    "takeover",
    "quiet_hours",
    "window_closed",
)
REASONS += ("condition", "failed")
DECISION_COLUMNS = (
    PID,
    Column("intervention", "text", "the intervention whose decision file made the point"),
    Column("arm", "text", "the participant's study arm at the point (blank if none)"),
    Column("decision", "text", "the decision's name (decisions/<name>.md)"),
    Column("index", "int", "the point's number for this participant and decision: 0, 1, ..."),
    Column("timezone", "text", "the participant's IANA time zone: the local times' zone"),
    *timed("at", "when the point was due"),
    Column("day_in_study", "int", "days since enrollment, in local dates (0: enrollment day)"),
    Column("available", "bool", "whether the participant could be randomised at the point"),
    Column(
        "unavailable_reason",
        "choice",
        "why not (blank when available): the engine's reasons, `condition` (the file's "
        "`available:` was false) or `failed` (the probabilities could not be drawn from)",
        REASONS,
    ),
    Column("option", "text", "the option drawn (blank when unavailable)"),
    Column(
        "draw", "number", "the uniform draw u in [0, 1) that chose it (`tandem decisions check`)"
    ),
    Column(
        "outcome_value",
        "number",
        "the proximal outcome as a number: yes/no as 1/0, minutes, a count, a numeric answer "
        "(blank unless observed)",
    ),
    Column(
        "outcome_status",
        "choice",
        "observed; missing (the window closed without data, or the participant withdrew or "
        "was erased while it was open); pending (the window is open); blank when unavailable",
        OUTCOME_STATUSES,
    ),
    Column("outcome_latency_seconds", "number", "seconds from the point to the first reply"),
)
DECISION_FIXED = tuple(column.name for column in DECISION_COLUMNS)
UNDECLARED = Column(
    "undeclared",
    "json",
    "probabilities and moderators of names no decision file declares now (an edited file): "
    "{name: value}, with their p_ or mod_ prefix",
)
DECISION_TYPES: tuple[str, ...] = ("decision.made", "decision.outcome", "decision.failed")
DECISION_TYPES += ("participant.allocated", "participant.withdrawn", "participant.erased")
_ENDINGS = ("participant.withdrawn", "participant.erased")


def decision_file_rows(
    history: Iterable[Event], row: Mapping[str, Any], since: datetime | None = None
) -> list[dict[str, Any]]:
    """decisions.csv's rows of one participant (their participants `row`), in the order
    their points were decided; `since` keeps the points due from then on."""
    tz = zone(str(row.get("timezone") or "UTC"))
    enrolled = row.get("enrolled_at")
    arm: str | None = None
    ended = False  # withdrawn or erased: no outcome can come any more
    rows: list[dict[str, Any]] = []
    by_point: dict[tuple[str, int], dict[str, Any]] = {}
    for ev in history:
        data = ev.data
        if isinstance(data, ParticipantAllocated):
            arm = data.arm
        elif isinstance(data, DecisionMade | DecisionFailed):
            record = _record(row, data, ev.occurred_at, tz, enrolled, arm)
            if ended and record["outcome_status"] == "pending":
                record["outcome_status"] = "missing"
            rows.append(record)
            by_point[(data.decision, data.index)] = record
        elif isinstance(data, DecisionOutcome):
            found = by_point.get((data.decision, data.index))
            if found is not None:
                observed = data.status == "observed"
                found["outcome_status"] = data.status
                found["outcome_value"] = _number(data.value) if observed else None
                found["outcome_latency_seconds"] = data.latency_seconds
        elif getattr(data, "event_type", "") in _ENDINGS:
            ended = True
            for found in rows:
                if found["outcome_status"] == "pending":
                    found["outcome_status"] = "missing"  # no outcome can come now
    return [r for r in rows if since is None or r["at_utc"] >= since]


def _record(
    row: Mapping[str, Any],
    data: DecisionMade | DecisionFailed,
    occurred: datetime,
    tz: Any,
    enrolled: datetime | None,
    arm: str | None,
) -> dict[str, Any]:
    made = data if isinstance(data, DecisionMade) else None
    at = made.scheduled_for if made else occurred
    there = local(at, tz)
    assert there is not None
    day = (there.date() - enrolled.astimezone(tz).date()).days if enrolled else None
    record: dict[str, Any] = {
        "participant_id": row["participant_id"],
        "intervention": (made.intervention if made else "") or row.get("intervention"),
        "arm": arm,
        "decision": data.decision,
        "index": data.index,
        "timezone": str(row.get("timezone") or "UTC"),
        "at_utc": at,
        "at_local": there,
        "at_local_naive": naive(there),
        "day_in_study": day,
        "available": made.available if made else False,
        "unavailable_reason": (made.unavailable_reason if made else "failed") or None,
        "option": made.option if made else None,
        "draw": made.u if made else None,
        "outcome_value": None,
        "outcome_status": "pending" if made and made.available else None,
        "outcome_latency_seconds": None,
    }
    if made is not None:
        record |= {f"p_{option}": p for option, p in made.ordered_probabilities().items()}
        record |= {f"mod_{name}": _number(v) for name, v in made.moderators.items()}
    return record


def _number(value: Any) -> Any:
    """A moderator's or outcome's cell: yes/no as 1/0, integers as integers, other numbers
    and numeric text as numbers (None for what is no number, e.g. an erased value)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    return as_number(value)


def decision_columns(names: Iterable[str]) -> tuple[str, ...]:
    """decisions.csv's columns: the fixed ones, then `names` (each option's `p_<option>`
    and each moderator's `mod_<name>`, as the decision files declare them), then
    `undeclared`."""
    return (*DECISION_FIXED, *dict.fromkeys(names), UNDECLARED.name)


def with_undeclared(record: dict[str, Any], columns: Iterable[str]) -> dict[str, Any]:
    """`record` with its probabilities and moderators outside `columns` gathered in
    `undeclared` (so that none is dropped without a trace)."""
    known = set(columns)
    extra = {k: v for k, v in record.items() if k.startswith(("p_", "mod_")) and k not in known}
    return {**record, UNDECLARED.name: extra or None}
