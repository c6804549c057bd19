"""Daily schedules (pure): occurrences, windows, DST rules, listing, deleting, chaining."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.localtime import QuietHours
from bot.store.event_types.schedules import ScheduleCreated, parse_when
from bot.store.events import Event
from bot.timers.schedules import (
    create_daily,
    delete_schedule,
    draw_for,
    list_schedules,
    next_occurrence,
    occurrence,
)

TORONTO = ZoneInfo("America/Toronto")
PERSON = {"participant_id": "p1", "timezone": "America/Toronto", "status": "active"}
NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def _stream(*batches: list) -> list[Event]:
    """Events as a stream would record them, in order."""
    flat = [data for batch in batches for data in batch]
    return [
        Event(n, f"e{n}", "participant:p1", n, data, {}, None, NOW, NOW)
        for n, data in enumerate(flat, start=1)
    ]


def _row(timer: object, **changes: object) -> dict:
    return {**timer.model_dump(), "status": "scheduled", **changes}  # type: ignore[attr-defined]


def test_a_window_schedule_draws_a_time_inside_the_window_and_records_the_draw() -> None:
    _, first = create_daily(PERSON, "09:00-12:00", "daily", {"text": "Hi"}, NOW)
    local = first.due_at.astimezone(TORONTO)
    assert time(9) <= local.time() < time(12)
    assert first.payload["draw"] == draw_for(first.payload["schedule_id"], local.date())
    assert first.payload["local_date"] == local.date().isoformat()


def test_the_draw_places_the_time_proportionally_in_the_window() -> None:
    when = parse_when("09:00-12:00")
    instant = occurrence(when, date(2026, 5, 5), TORONTO, 0.5)
    assert instant is not None and instant.astimezone(TORONTO).time() == time(10, 30)


def test_the_same_schedule_and_day_always_draw_the_same_time() -> None:
    assert draw_for("s1", date(2026, 5, 5)) == draw_for("s1", date(2026, 5, 5))
    assert draw_for("s1", date(2026, 5, 5)) != draw_for("s1", date(2026, 5, 6))


def test_a_window_crossing_midnight_ends_the_next_morning() -> None:
    instant = occurrence(parse_when("23:00-01:00"), date(2026, 5, 5), TORONTO, 0.75)
    assert instant == datetime(2026, 5, 6, 0, 30, tzinfo=TORONTO)


def test_a_daily_time_in_the_spring_forward_gap_moves_forward_by_the_gap() -> None:
    instant = occurrence(parse_when("02:30"), date(2026, 3, 8), TORONTO, 0.0)
    assert instant == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)  # 03:30 EDT


def test_a_daily_time_that_occurs_twice_means_its_first_occurrence() -> None:
    instant = occurrence(parse_when("01:30"), date(2026, 11, 1), TORONTO, 0.0)
    assert instant == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT, not EST


def test_after_a_long_outage_the_chain_resumes_at_the_next_future_occurrence() -> None:
    _, first = create_daily(PERSON, "09:00", "daily", {}, NOW)
    week_later = first.due_at + timedelta(days=7, hours=3)
    nxt = next_occurrence(_row(first), PERSON, week_later)
    assert nxt is not None and nxt.due_at == first.due_at + timedelta(days=8)


def test_the_next_occurrence_follows_the_participants_new_timezone() -> None:
    _, first = create_daily(PERSON, "09:00", "daily", {}, NOW)
    moved = {**PERSON, "timezone": "Europe/Paris"}
    nxt = next_occurrence(_row(first), moved, first.due_at)
    assert nxt is not None and nxt.local_time == "2026-05-05T09:00:00+02:00"
    assert nxt.timezone == "Europe/Paris"


def test_deleting_a_schedule_cancels_only_its_own_pending_occurrence() -> None:
    mine, other = (
        create_daily(PERSON, "09:00", "daily", {}, NOW),
        create_daily(PERSON, "20:00", "daily", {}, NOW),
    )
    pending = [_row(mine[1]), _row(other[1])]
    deleted, *cancelled = delete_schedule(mine[0].schedule_id, pending)
    assert deleted.schedule_id == mine[0].schedule_id
    assert [c.timer_id for c in cancelled] == [mine[1].timer_id]


def test_listing_shows_each_live_schedule_with_its_next_occurrence() -> None:
    mine = create_daily(PERSON, "09:00", "daily", {"text": "Hi"}, NOW)
    gone = create_daily(PERSON, "20:00", "daily", {}, NOW)
    events = _stream(mine, gone, delete_schedule(gone[0].schedule_id, [_row(gone[1])]))
    (view,) = list_schedules(events, PERSON)
    assert (view.schedule_id, view.when, view.next_due_at) == (
        mine[0].schedule_id,
        "09:00",
        mine[1].due_at,
    )
    assert view.fires_at == view.next_due_at and view.note is None


def test_listing_shows_when_quiet_hours_will_really_deliver_the_occurrence() -> None:
    late = create_daily(PERSON, "23:00", "daily", {}, NOW)
    (view,) = list_schedules(_stream(late), PERSON, QuietHours(time(22), time(8)))
    assert view.fires_at == datetime(2026, 5, 5, 8, 0, tzinfo=TORONTO)
    assert view.note == "deferred to the end of quiet hours"


def test_listing_says_a_paused_participants_schedule_is_suppressed() -> None:
    (view,) = list_schedules(
        _stream(create_daily(PERSON, "09:00", "daily", {}, NOW)), {**PERSON, "status": "paused"}
    )
    assert view.fires_at is None and view.note == "suppressed while the participant is paused"


@pytest.mark.parametrize("bad", ["9am", "09:00-09:00", "24:00", "09:00-"])
def test_a_schedule_with_an_invalid_time_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        ScheduleCreated(schedule_id="s", when=bad)
