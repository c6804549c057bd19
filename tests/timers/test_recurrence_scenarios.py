"""Recurring schedules in the situations of the issue, on DST days, and at their ends."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.timers.recurrence import (
    MERGED,
    NO_WINDOW,
    QUIET_HOURS,
    SAME_MOMENT,
    next_occasion,
    occasions,
)
from bot.timers.recurrence_format import Recurrence

TORONTO = ZoneInfo("America/Toronto")
NIGHT = parse_quiet_hours("21:00-08:00")


def schedule(**data: Any) -> Recurrence:
    return Recurrence.model_validate(data)


def at(day: date, hour: int, minute: int = 0, tz: ZoneInfo = TORONTO) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=tz)


def local(instant: datetime, tz: ZoneInfo = TORONTO) -> datetime:
    return instant.astimezone(tz)


PHQ9 = schedule(every="14 days", **{"from": "phq9.completed"}, offset="14d", until={"count": 6})
ANSWERED = at(date(2026, 10, 20), 21, 13)  # the chain crosses the fall-back of 1 November


def test_a_phq9_answered_at_2113_is_asked_again_at_0800_after_the_quiet_hours() -> None:
    first = occasions(PHQ9, ANSWERED, TORONTO, NIGHT, "phq9", limit=1)[0]
    assert local(first.planned_utc) == at(date(2026, 11, 3), 21, 13)
    assert local(first.due_utc) == at(date(2026, 11, 4), 8, 0)
    assert first.deferred and not first.skipped


def test_a_chain_of_phq9_administrations_goes_on_until_its_sixth() -> None:
    chain = [next_occasion(PHQ9, ANSWERED, TORONTO, NIGHT, "phq9", None)]
    while chain[-1] is not None:
        chain.append(next_occasion(PHQ9, ANSWERED, TORONTO, NIGHT, "phq9", chain[-1].index))
    given = [occasion for occasion in chain if occasion is not None]
    expected_days = [date(2026, 11, 3) + timedelta(days=14 * k) for k in range(6)]
    assert [occasion.local_date for occasion in given] == expected_days
    assert all(not occasion.skipped for occasion in given)
    assert [local(o.due_utc) for o in given] == [
        at(d + timedelta(days=1), 8) for d in expected_days
    ]


EMA = schedule(
    every="1 day",
    windows=["08:00-12:00", "12:00-16:00", "16:00-21:00"],
    offset="1d",
    until={"days": 14},
)


def test_the_ema_asks_three_times_every_day_each_time_inside_its_window() -> None:
    found = occasions(EMA, at(date(2026, 3, 1), 15), TORONTO, NIGHT, "ema")
    days = [date(2026, 3, 2) + timedelta(days=k) for k in range(14)]
    assert [(o.local_date, o.slot) for o in found] == [(d, s) for d in days for s in range(3)]
    for occasion in found:
        window = EMA.windows[occasion.slot] if EMA.windows else None
        assert window is not None and not occasion.skipped and not occasion.deferred
        assert window.start <= local(occasion.planned_utc).time() < window.end


def test_a_window_overlapping_quiet_hours_loses_no_prompt_when_deferral_is_declared() -> None:
    early = schedule(every="1 day", windows="07:00-10:00", quiet_hours="defer", until={"days": 30})
    quiet = parse_quiet_hours("22:00-08:00")
    found = occasions(early, at(date(2026, 3, 1), 0), TORONTO, quiet, "morning")
    assert len(found) == 30 and not any(occasion.skipped for occasion in found)
    deferred = [occasion for occasion in found if occasion.deferred]
    assert deferred, "the seed should put some draws before 08:00"
    assert all(local(o.due_utc) == at(o.local_date, 8) for o in deferred)


def test_occasions_deferred_into_one_quiet_period_are_merged_and_recorded() -> None:
    late = schedule(every="1 day", windows="23:00-23:30", times=3, quiet_hours="defer")
    found = occasions(late, at(date(2026, 3, 1), 12), TORONTO, NIGHT, "late", limit=6)
    assert [o.reason for o in found] == [None, MERGED, MERGED] * 2
    assert all(o.deferred for o in found)
    assert found[1].due_utc == found[0].due_utc


def test_a_count_keeps_going_past_merged_occasions() -> None:
    late = schedule(
        every="1 day", windows="23:00-23:30", times=3, quiet_hours="defer", until={"count": 4}
    )
    found = occasions(late, at(date(2026, 3, 1), 12), TORONTO, NIGHT, "late")
    assert len([o for o in found if not o.skipped]) == 4
    assert len({o.local_date for o in found}) == 4


def test_an_on_time_occasion_at_the_instant_a_deferred_one_is_due_is_merged() -> None:
    twice = schedule(every="1 day", at=["23:00", "08:00"], quiet_hours="defer", offset="1d")
    found = occasions(twice, at(date(2026, 3, 1), 12), TORONTO, NIGHT, "twice", limit=3)
    assert [o.reason for o in found] == [None, None, SAME_MOMENT]
    assert found[2].planned_utc == found[1].due_utc


def test_skip_returns_the_skipped_occasion_with_its_reason_and_never_ends_the_chain() -> None:
    nightly = schedule(every="1 day", at="21:30", quiet_hours="skip", until={"count": 2})
    found = occasions(nightly, at(date(2026, 3, 1), 12), TORONTO, NIGHT, "n", limit=5)
    assert [(o.skipped, o.reason, o.deferred) for o in found] == [(True, QUIET_HOURS, False)] * 5
    assert next_occasion(nightly, at(date(2026, 3, 1), 12), TORONTO, NIGHT, "n", 50) is not None


def test_skipped_occasions_do_not_count_towards_until_count() -> None:
    both = schedule(every="1 day", at=["07:30", "21:30"], quiet_hours="skip", until={"count": 3})
    quiet = parse_quiet_hours("21:00-07:00")
    found = occasions(both, at(date(2026, 3, 1), 0), TORONTO, quiet, "both")
    assert [local(o.planned_utc).hour for o in found] == [7, 21, 7, 21, 7]
    assert [o.skipped for o in found] == [False, True, False, True, False]


def test_a_fixed_time_in_the_spring_forward_gap_moves_forward_by_the_gap() -> None:
    night = schedule(every="1 day", at="02:30", until={"days": 3})
    found = occasions(night, at(date(2026, 3, 7), 0), TORONTO, None, "gap")
    assert found[1].local_date == date(2026, 3, 8)
    assert found[1].planned_utc == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)  # 03:30 EDT


def test_an_ambiguous_fixed_time_is_its_first_occurrence() -> None:
    night = schedule(every="1 day", at="01:30", until={"days": 1})
    found = occasions(night, at(date(2026, 11, 1), 0), TORONTO, None, "overlap")
    assert found[0].planned_utc == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT


def test_a_time_in_sao_paulos_midnight_gap_moves_forward() -> None:
    sao_paulo = ZoneInfo("America/Sao_Paulo")
    night = schedule(every="1 day", at="00:30", until={"days": 1})
    found = occasions(night, at(date(2018, 11, 4), 0, tz=sao_paulo), sao_paulo, None, "sp")
    assert found[0].planned_utc == datetime(2018, 11, 4, 3, 30, tzinfo=UTC)  # 01:30 -02


def test_a_window_wholly_inside_the_gap_is_recorded_as_skipped_that_day() -> None:
    gap = schedule(every="1 day", windows="02:10-02:40", until={"days": 3})
    found = occasions(gap, at(date(2026, 3, 7), 0), TORONTO, None, "gap")
    assert [(o.local_date, o.reason) for o in found] == [
        (date(2026, 3, 7), None),
        (date(2026, 3, 8), NO_WINDOW),
        (date(2026, 3, 9), None),
    ]


def test_a_deferral_into_the_repeated_hour_ends_at_its_first_pass() -> None:
    quiet = QuietHours(time(22, 0), time(1, 30))
    late = schedule(every="1 day", at="23:00", quiet_hours="defer", until={"count": 1})
    found = occasions(late, at(date(2026, 10, 31), 12), TORONTO, quiet, "fold")
    assert found[0].due_utc == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT


def test_weekly_schedules_keep_their_wall_time_across_the_clock_change() -> None:
    weekly = schedule(every="1 week", until={"count": 3})
    found = occasions(weekly, at(date(2026, 10, 25), 10), TORONTO, None, "w")
    assert [local(o.planned_utc) for o in found] == [
        at(date(2026, 10, 25) + timedelta(days=7 * k), 10) for k in range(3)
    ]
    assert found[0].planned_utc.hour != found[1].planned_utc.hour  # UTC moves, local does not


def test_every_two_weeks_on_monday_and_thursday_uses_alternate_calendar_weeks() -> None:
    pairs = schedule(every="2 weeks", on=["thursday", "monday"], at="10:00", until={"count": 5})
    found = occasions(pairs, at(date(2026, 3, 4), 12), TORONTO, None, "pairs")  # a Wednesday
    assert [o.local_date for o in found] == [
        date(2026, 3, 5),
        date(2026, 3, 16),
        date(2026, 3, 19),
        date(2026, 3, 30),
        date(2026, 4, 2),
    ]


def test_an_offset_in_hours_is_elapsed_time_even_across_the_clock_change() -> None:
    soon = schedule(every="1 day", offset="2h", until={"count": 1})
    anchor = at(date(2026, 3, 8), 1, 30)
    found = occasions(soon, anchor, TORONTO, None, "soon")
    assert found[0].planned_utc == anchor.astimezone(UTC) + timedelta(hours=2)


def test_an_offset_in_days_keeps_the_wall_time_and_leaves_a_gap_forward() -> None:
    tomorrow = schedule(every="1 day", offset="1d", until={"count": 1})
    found = occasions(tomorrow, at(date(2026, 3, 7), 2, 30), TORONTO, None, "t")
    assert local(found[0].planned_utc) == at(date(2026, 3, 8), 3, 30)


def test_until_days_counts_local_days_from_the_start() -> None:
    month = schedule(every="1 day", at="09:00", until={"days": 28})
    found = occasions(month, at(date(2026, 3, 1), 8), TORONTO, None, "m")
    assert [o.local_date for o in found] == [date(2026, 3, 1) + timedelta(k) for k in range(28)]


def test_until_date_includes_that_date_and_then_the_chain_ends() -> None:
    short = schedule(every="1 day", at="09:00", until={"date": "2026-03-05"})
    anchor = at(date(2026, 3, 1), 8)
    found = occasions(short, anchor, TORONTO, None, "s")
    assert found[-1].local_date == date(2026, 3, 5) and len(found) == 5
    assert next_occasion(short, anchor, TORONTO, None, "s", found[-1].index) is None


def test_after_returns_only_later_occasions_numbered_from_the_start() -> None:
    daily = schedule(every="1 day", at="09:00")
    anchor = at(date(2026, 3, 1), 8)
    later = occasions(daily, anchor, TORONTO, None, "d", after=at(date(2026, 3, 4), 9), limit=2)
    assert [(o.index, o.local_date) for o in later] == [
        (4, date(2026, 3, 5)),
        (5, date(2026, 3, 6)),
    ]


def test_random_times_spread_evenly_over_the_window() -> None:
    morning = schedule(every="1 day", windows="08:00-12:00", until={"days": 400})
    found = occasions(morning, at(date(2026, 1, 1), 0), TORONTO, None, "spread")
    quarters = [0, 0, 0, 0]
    for occasion in found:
        wall = local(occasion.planned_utc)
        quarters[wall.hour - 8] += 1
    assert all(70 <= count <= 130 for count in quarters), quarters  # 100 each expected, sd 8.7


def test_several_random_times_in_one_window_are_drawn_independently() -> None:
    three = schedule(every="1 day", windows="08:00-20:00", times=3, until={"days": 1})
    found = occasions(three, at(date(2026, 3, 2), 0), TORONTO, None, "three")
    assert len({o.planned_utc for o in found}) == 3
