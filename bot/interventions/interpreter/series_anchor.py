"""The instant a `repeat:` counts from, when its action runs (pure): the participant's
enrollment, the last completion of an instrument, the last entry into a step, or a date in the
profile (bot.interventions.language.series_start). An event that has not happened yet (no
completion, the field not set) stops the turn loudly (`condition.failed` and an alert): a
schedule never silently starts from "now" instead."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from typing import Any

from bot.core.localtime import clock_reaches
from bot.interventions.interpreter.failures import ConditionFailure
from bot.interventions.language.series_start import parse_start
from bot.store.event_types.interventions import StepEntered
from bot.store.events import Event
from bot.timers.one_shot import zone_of


def series_anchor(
    written: str,
    participant: Mapping[str, Any],
    data: Mapping[str, Any],
    history: Sequence[Event],
    now: datetime,
) -> datetime:
    """The start of a series `from: written` for `participant` (their row), with `data` as
    conditions read it and the stream `history` (the turn's, with its own events). A profile
    date counts from its first local instant (midnight, or the end of a DST gap there)."""
    start = parse_start(written)
    source = f"from: {written}"
    if start is None:
        raise ConditionFailure(source, "not an event a schedule can count from")
    if start.kind == "enrollment":
        enrolled = participant.get("enrolled_at")
        return enrolled if isinstance(enrolled, datetime) else now
    if start.kind == "completed":
        last = ((data.get("instruments") or {}).get(start.name) or {}).get("last") or {}
        if not last.get("administered_at"):
            raise ConditionFailure(source, f"{start.name} has not been completed yet")
        return datetime.fromisoformat(str(last["administered_at"]))
    if start.kind == "entered":
        stored = ((participant.get("step_counters") or {}).get("last_entered") or {}).get(
            start.name
        )
        if stored:
            return datetime.fromisoformat(str(stored))
        entered = [
            e.occurred_at
            for e in history
            if isinstance(e.data, StepEntered) and e.data.step == start.name
        ]
        if not entered:
            raise ConditionFailure(source, f"the participant has not entered step {start.name}")
        return max(entered)
    value = (data.get("profile") or {}).get(start.name)
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value.strip())
        except ValueError:
            raise ConditionFailure(
                source, f"profile.{start.name} is {value!r}, not a date (YYYY-MM-DD)"
            ) from None
    if not isinstance(value, date):
        raise ConditionFailure(source, f"profile.{start.name} is not set")
    if isinstance(value, datetime):
        return value
    return clock_reaches(value, time(0), zone_of(participant))  # the date's first instant
