"""A schedule counted from an event (`from:`): the start is that event's instant (an
instrument's completion, a step entered, enrollment) or a profile date's first local instant,
and every occasion counted from it is outside quiet hours, deferred, or explicitly skipped —
over random schedules, quiet hours and events on DST-change days. An event that has not
happened stops the turn loudly rather than starting from now."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.localtime import clock_reaches, local_date
from bot.interventions.interpreter.failures import ConditionFailure
from bot.interventions.interpreter.series_anchor import series_anchor
from bot.store.event_types.interventions import StepEntered
from bot.store.events import Event
from bot.timers.recurrence import NO_WINDOW, QUIET_HOURS, occasions
from bot.timers.recurrence_format import Recurrence
from tests.timers.test_recurrence import QUIET_PROPERTY, definitions, settings_of_a_participant

NOW = datetime(2030, 1, 1, tzinfo=UTC)  # far from every event: a start is never "now"
KINDS = ("enrollment", "phq9.completed", "check.entered", "check.entered (stream)", "profile")


def _entered(step: str, at: datetime) -> Event:
    return Event(
        seq=1,
        event_id="e1",
        stream_id="participant:p",
        stream_version=1,
        data=StepEntered(intervention="x", step=step),
        meta={},
        idempotency_key=None,
        occurred_at=at,
        recorded_at=at,
    )


def _situation(kind: str, at: datetime, zone: str) -> tuple[str, dict, dict, list[Event]]:
    """`from:` as written, the participant row, the data and the stream of event `kind`
    happening at `at`."""
    row: dict[str, Any] = {"timezone": zone, "enrolled_at": NOW, "step_counters": {}}
    data: dict[str, Any] = {"instruments": {"phq9": {"last": {"administered_at": None}}}}
    history: list[Event] = []
    if kind == "enrollment":
        row["enrolled_at"] = at
    elif kind == "phq9.completed":
        data["instruments"]["phq9"]["last"]["administered_at"] = at.isoformat()
    elif kind == "check.entered":
        row["step_counters"] = {"last_entered": {"check": at.isoformat()}}
    elif kind == "check.entered (stream)":
        history = [_entered("check", at)]
    else:
        data["profile"] = {"quit_date": local_date(at, ZoneInfo(zone)).isoformat()}
        return "profile.quit_date", row, data, history
    return kind.split(" ")[0], row, data, history


@QUIET_PROPERTY
@given(st.data(), st.sampled_from(KINDS))
def test_occasions_counted_from_an_event_are_outside_quiet_hours_or_deferred(
    data: st.DataObject, kind: str
) -> None:
    tz, at, quiet = data.draw(settings_of_a_participant())
    written, row, values, history = _situation(kind, at, tz.key)
    anchor = series_anchor(written, row, values, history, NOW)

    if kind == "profile":  # the date's first local instant, even where midnight is skipped
        day = local_date(at, tz)
        assert anchor == clock_reaches(day, time(0), tz)
        assert local_date(anchor, tz) == day
    else:
        assert anchor == at

    recurrence = Recurrence.model_validate({**data.draw(definitions(anchor, tz)), "from": written})
    found = occasions(recurrence, anchor, tz, quiet, "seed", limit=40)
    assert found or recurrence.until is not None  # a schedule with no end never stops
    for occasion in found:
        assert occasion.planned_utc >= anchor - timedelta(seconds=1)
        in_quiet = quiet is not None and quiet.contains(occasion.planned_utc, tz)
        if occasion.reason == QUIET_HOURS:
            assert in_quiet and recurrence.quiet_hours == "skip"
        elif occasion.deferred:
            assert in_quiet and recurrence.quiet_hours != "skip"
            assert quiet is not None and not quiet.contains(occasion.due_utc, tz)
        elif occasion.reason != NO_WINDOW:
            assert not in_quiet and occasion.due_utc == occasion.planned_utc


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("phq9.completed", "phq9 has not been completed yet"),
        ("check.entered", "the participant has not entered step check"),
        ("profile.quit_date", "profile.quit_date is not set"),
    ],
)
def test_an_event_that_has_not_happened_stops_the_turn(written: str, said: str) -> None:
    row = {"timezone": "America/Toronto", "enrolled_at": NOW, "step_counters": {}}
    data = {"instruments": {"phq9": {"last": {"administered_at": None}}}, "profile": {}}
    with pytest.raises(ConditionFailure, match=said):
        series_anchor(written, row, data, [], NOW)
