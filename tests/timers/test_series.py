"""Recurring schedules as chains of timers (bot.timers.series): following the chain from the
first occasion, timer by timer, gives exactly the occasions the recurrence gives (every due
instant, every skip recorded) and ends only at `until`; an occasion of a series in quiet hours
is deferred at firing whatever its kind's policy."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.localtime import QuietHours
from bot.store.event_types.occasions import OccasionSkipped
from bot.store.event_types.timers import TimerDeferred, TimerScheduled
from bot.timers import series
from bot.timers.firing import FiringPolicy, decide
from bot.timers.recurrence import occasions
from bot.timers.recurrence_format import Recurrence
from tests.timers.test_recurrence import PROPERTIES, definitions, settings_of_a_participant

PAYLOAD = {"instrument": "craving", "text": "How strong is your craving?"}
STEPS = 12


def _row(timer: TimerScheduled) -> dict[str, Any]:
    return {"kind": timer.kind, "payload": timer.payload, "due_at": timer.due_at}


def _walk(events: list[Any], participant: dict[str, Any], quiet: QuietHours | None) -> tuple:
    due, skipped = [], []
    for _ in range(STEPS):
        skipped += [e.index for e in events if isinstance(e, OccasionSkipped)]
        timers = [e for e in events if isinstance(e, TimerScheduled)]
        if not timers:
            return due, skipped, True
        due.append(timers[0].due_at)
        events = series.following(_row(timers[0]), participant, quiet)
    return due, skipped, False


@settings(PROPERTIES, max_examples=40)
@given(st.data())
def test_following_the_chain_gives_exactly_the_recurrences_occasions(data: st.DataObject) -> None:
    tz, anchor, quiet = data.draw(settings_of_a_participant())
    written = series.written(data.draw(definitions(anchor, tz, ends=("count", "days", "date"))))
    participant = {"timezone": tz.key}
    expected = occasions(Recurrence.model_validate(written), anchor, tz, quiet, "s1", limit=200)
    if expected and all(o.skipped for o in expected):  # nothing given: every skip recorded
        if len(expected) == 200:  # (or, past 200 in a row, a loud error)
            with pytest.raises(ValueError, match="skipped in a row"):
                series.first(participant, "instrument", PAYLOAD, written, anchor, quiet, "s1")
            return
        found = series.first(participant, "instrument", PAYLOAD, written, anchor, quiet, "s1")
        assert [e.index for e in found] == [o.index for o in expected]
        return

    first = series.first(participant, "instrument", PAYLOAD, written, anchor, quiet, "s1")
    due, skipped, ended = _walk(first, participant, quiet)

    given_ = [o for o in expected if not o.skipped]
    assert due == [o.due_utc for o in given_][: len(due)]
    every_skip = [o.index for o in expected if o.skipped]
    assert skipped == every_skip[: len(skipped)]
    if ended:  # the chain stops only where the recurrence has no occasion left
        assert len(due) == len(given_) and skipped == every_skip


def test_a_series_occasion_in_quiet_hours_is_deferred_even_for_a_skipping_kind() -> None:
    tz = ZoneInfo("America/Toronto")
    quiet = QuietHours(time(22, 0), time(8, 0))
    participant = {"timezone": tz.key, "status": "active"}
    written = {"every": "1 day", "at": "23:00", "quiet_hours": "defer", "until": {"count": 2}}
    anchor = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    timer = series.first(
        participant, "measurement", {"measurement": "mood"}, written, anchor, None, "s"
    )
    row = {**_row(timer[0]), "timer_id": "t1", "status": "scheduled"}

    decision = decide(row, participant, row["due_at"], FiringPolicy(quiet_hours=quiet))

    assert decision.outcome == "deferred"
    assert isinstance(decision.events[0], TimerDeferred)


def test_the_last_occasion_ends_the_chain_and_a_skip_is_recorded() -> None:
    tz = ZoneInfo("Europe/London")
    quiet = QuietHours(time(22, 0), time(8, 0))
    written = {
        "every": "1 day",
        "at": ["07:00", "09:00"],
        "quiet_hours": "skip",
        "until": {"count": 2},
    }
    anchor = datetime(2026, 5, 4, 0, 0, tzinfo=UTC)
    participant = {"timezone": tz.key}

    first = series.first(participant, "instrument", PAYLOAD, written, anchor, quiet, "s")

    assert [type(e).__name__ for e in first] == ["OccasionSkipped", "TimerScheduled"]
    assert first[0].reason == "quiet hours" and first[0].what == "craving"
    second = series.following(_row(first[1]), participant, quiet)
    third = series.following(_row(second[-1]), participant, quiet)
    assert [type(e).__name__ for e in second] == ["OccasionSkipped", "TimerScheduled"]
    assert third == []
