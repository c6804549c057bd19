"""Tests for participant-local time: parsing, DST gaps and overlaps, windows, quiet hours."""

import dataclasses
import math
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.core.localtime import (
    QuietHours,
    clock_reaches,
    fmt_local,
    is_nonexistent,
    local_date,
    local_day_bounds,
    next_daily,
    parse_local_time,
    parse_quiet_hours,
    random_daily,
    to_utc,
    validate_timezone,
)

TORONTO = ZoneInfo("America/Toronto")
SYDNEY = ZoneInfo("Australia/Sydney")
SANTIAGO = ZoneInfo("America/Santiago")
NINE = time(9, 0)
NIGHT = QuietHours(time(22, 0), time(8, 0))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def local(tz: ZoneInfo, *args: int) -> datetime:
    return datetime(*args, tzinfo=tz).astimezone(UTC)


# Parsing and validation


@pytest.mark.parametrize("text", ["09:00", "9:00"])
def test_parse_local_time_accepts_padded_and_unpadded_hours(text):
    assert parse_local_time(text) == time(9, 0)


def test_parse_local_time_reads_the_last_minute_of_the_day():
    assert parse_local_time("23:59") == time(23, 59)


@pytest.mark.parametrize(
    "text", ["25:00", "24:00", "9am", "09:60", "0900", "9:0", "", " 09:00", "09:00:00", "٠٩:٠٠"]
)
def test_parse_local_time_rejects_anything_but_24_hour_hh_mm(text):
    with pytest.raises(ValueError, match="invalid local time"):
        parse_local_time(text)


def test_validate_timezone_returns_the_named_zone():
    assert validate_timezone("America/Toronto") == TORONTO


@pytest.mark.parametrize(
    "name", ["Mars/Olympus_Mons", "", "../etc", "/etc/passwd", "America", "localtime", "right/UTC"]
)
def test_validate_timezone_rejects_names_that_are_not_iana_zones(name):
    with pytest.raises(ValueError, match="unknown timezone"):
        validate_timezone(name)


# Points in time: to_utc and the DST rules


def test_to_utc_converts_an_ordinary_summer_time():
    assert to_utc(date(2026, 6, 1), NINE, TORONTO) == utc(2026, 6, 1, 13, 0)


def test_to_utc_moves_a_time_in_the_spring_gap_forward_by_the_gap():
    instant = to_utc(date(2026, 3, 8), time(2, 30), TORONTO)
    assert instant == utc(2026, 3, 8, 7, 30)
    assert fmt_local(instant, TORONTO) == "2026-03-08T03:30:00-04:00"


def test_to_utc_moves_a_sydney_gap_time_forward_by_the_gap():
    assert fmt_local(to_utc(date(2026, 10, 4), time(2, 30), SYDNEY), SYDNEY) == (
        "2026-10-04T03:30:00+11:00"
    )


def test_to_utc_takes_the_first_occurrence_of_a_repeated_time():
    assert to_utc(date(2026, 11, 1), time(1, 30), TORONTO) == utc(2026, 11, 1, 5, 30)


def test_to_utc_takes_the_first_occurrence_in_sydney_autumn():
    assert to_utc(date(2026, 4, 5), time(2, 30), SYDNEY) == utc(2026, 4, 4, 15, 30)


def test_to_utc_ignores_the_fold_of_the_time_it_is_given():
    later = time(1, 30, fold=1)
    assert to_utc(date(2026, 11, 1), later, TORONTO) == utc(2026, 11, 1, 5, 30)


def test_to_utc_rejects_a_local_time_carrying_a_tzinfo():
    with pytest.raises(ValueError, match="must not carry a tzinfo"):
        to_utc(date(2026, 6, 1), time(9, 0, tzinfo=UTC), TORONTO)


def test_is_nonexistent_is_true_only_inside_the_gap():
    day = date(2026, 3, 8)
    assert is_nonexistent(day, time(2, 30), TORONTO)
    assert not is_nonexistent(day, time(3, 0), TORONTO)
    assert not is_nonexistent(day, time(1, 59), TORONTO)


def test_is_nonexistent_is_false_for_a_repeated_time():
    assert not is_nonexistent(date(2026, 11, 1), time(1, 30), TORONTO)


def test_clock_reaches_a_gap_time_at_the_moment_of_the_change():
    assert clock_reaches(date(2026, 3, 8), time(2, 30), TORONTO) == utc(2026, 3, 8, 7, 0)


def test_clock_reaches_an_existing_time_when_to_utc_does():
    assert clock_reaches(date(2026, 11, 1), time(1, 30), TORONTO) == utc(2026, 11, 1, 5, 30)


# Daily schedules


@pytest.mark.parametrize(
    ("tz", "first_after"),
    [
        (TORONTO, utc(2026, 3, 3, 18, 0)),
        (TORONTO, utc(2026, 10, 27, 18, 0)),
        (SYDNEY, utc(2026, 3, 31, 6, 0)),
        (SYDNEY, utc(2026, 9, 29, 6, 0)),
    ],
)
def test_chained_daily_prompt_stays_at_nine_local_across_a_dst_change(tz, first_after):
    firings, after = [], first_after
    for _ in range(10):
        after = next_daily(after, NINE, tz)
        firings.append(after.astimezone(tz))
    first_day = firings[0].date()
    assert [f.date() for f in firings] == [first_day + timedelta(days=i) for i in range(10)]
    assert {f.time() for f in firings} == {NINE}
    assert len({f.utcoffset() for f in firings}) == 2


def test_next_daily_is_later_the_same_day_before_the_time():
    assert next_daily(local(TORONTO, 2026, 6, 1, 8, 59), NINE, TORONTO) == utc(2026, 6, 1, 13, 0)


def test_next_daily_is_strictly_after_an_instant_at_the_time():
    assert next_daily(utc(2026, 6, 1, 13, 0), NINE, TORONTO) == utc(2026, 6, 2, 13, 0)


def test_next_daily_returns_utc():
    assert next_daily(utc(2026, 6, 1, 0, 0), NINE, TORONTO).tzinfo is UTC


def test_next_daily_shifts_a_gap_time_only_on_the_day_of_the_gap():
    after, firings = utc(2026, 3, 6, 12, 0), []
    for _ in range(3):
        after = next_daily(after, time(2, 30), TORONTO)
        firings.append(fmt_local(after, TORONTO))
    assert firings == [
        "2026-03-07T02:30:00-05:00",
        "2026-03-08T03:30:00-04:00",
        "2026-03-09T02:30:00-04:00",
    ]


def test_next_daily_fires_a_repeated_time_once_at_its_first_occurrence():
    first = next_daily(utc(2026, 10, 31, 12, 0), time(1, 30), TORONTO)
    second = next_daily(first, time(1, 30), TORONTO)
    assert first == utc(2026, 11, 1, 5, 30)
    assert second == utc(2026, 11, 2, 6, 30)


def test_next_daily_accepts_an_after_in_any_fixed_offset():
    after = datetime(2026, 6, 1, 10, 0, tzinfo=timezone(timedelta(hours=2)))
    assert next_daily(after, NINE, TORONTO) == utc(2026, 6, 1, 13, 0)


PROPERTY_ZONES = [
    "America/Toronto",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "America/Santiago",
    "America/St_Johns",
    "Europe/London",
    "Asia/Kolkata",
    "UTC",
]
CHANGES = [
    utc(2026, 3, 8, 7, 0),
    utc(2026, 11, 1, 6, 0),
    utc(2026, 4, 4, 16, 0),
    utc(2026, 10, 3, 16, 0),
    utc(2026, 10, 3, 15, 30),
    utc(2026, 9, 6, 4, 0),
    utc(2026, 4, 5, 3, 0),
    utc(2026, 3, 29, 1, 0),
]
near_a_change = st.builds(
    lambda change, minutes: change + timedelta(minutes=minutes),
    st.sampled_from(CHANGES),
    st.integers(min_value=-3 * 24 * 60, max_value=3 * 24 * 60),
)
any_instant = st.builds(
    lambda seconds: utc(2020, 1, 1) + timedelta(seconds=seconds),
    st.integers(min_value=0, max_value=16 * 365 * 24 * 3600),
)
instants = st.one_of(near_a_change, any_instant)
zones = st.sampled_from(PROPERTY_ZONES).map(ZoneInfo)
early_hours = st.times(max_value=time(3, 59)).map(lambda t: t.replace(fold=0))
wall_times = st.one_of(early_hours, st.times().map(lambda t: t.replace(fold=0)))


def _is_in_a_gap(day: date, wall: time, tz: ZoneInfo) -> bool:
    naive = datetime.combine(day, wall)
    return naive.replace(tzinfo=tz).astimezone(UTC).astimezone(tz).replace(tzinfo=None) != naive


@settings(database=None, max_examples=300)
@given(after=instants, tz=zones, wall=wall_times)
def test_next_daily_is_within_a_day_and_at_the_wall_time_unless_in_a_gap(after, tz, wall):
    fired = next_daily(after, wall, tz)
    assert after < fired <= after + timedelta(hours=25)
    shown = fired.astimezone(tz)
    if shown.time() != wall:
        assert any(_is_in_a_gap(shown.date() - timedelta(days=d), wall, tz) for d in (0, 1))


# Random windows


def test_random_daily_draw_zero_is_the_window_start():
    after = local(TORONTO, 2026, 6, 1, 6, 0)
    assert random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.0) == utc(2026, 6, 1, 14, 0)


def test_random_daily_draw_just_below_one_is_the_last_microsecond_of_the_window():
    after = local(TORONTO, 2026, 6, 1, 6, 0)
    drawn = random_daily(after, time(10, 0), time(12, 0), TORONTO, math.nextafter(1.0, 0.0))
    assert drawn == utc(2026, 6, 1, 16, 0) - timedelta(microseconds=1)


def test_random_daily_draw_is_linear_in_the_window():
    after = local(TORONTO, 2026, 6, 1, 6, 0)
    assert random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.25) == utc(2026, 6, 1, 14, 30)


def test_random_daily_window_crossing_midnight_ends_the_next_local_day():
    after = local(TORONTO, 2026, 6, 1, 12, 0)
    drawn = random_daily(after, time(21, 0), time(2, 0), TORONTO, 0.9)
    assert fmt_local(drawn, TORONTO) == "2026-06-02T01:30:00-04:00"


def test_random_daily_uses_a_midnight_crossing_window_still_open_after_midnight():
    after = local(TORONTO, 2026, 6, 2, 0, 30)
    drawn = random_daily(after, time(21, 0), time(2, 0), TORONTO, 0.9)
    assert fmt_local(drawn, TORONTO) == "2026-06-02T01:30:00-04:00"


def test_random_daily_uses_tomorrow_once_todays_window_has_passed():
    after = local(TORONTO, 2026, 6, 1, 13, 0)
    drawn = random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.5)
    assert fmt_local(drawn, TORONTO) == "2026-06-02T11:00:00-04:00"


def test_random_daily_uses_tomorrow_when_the_draw_lands_before_after():
    after = local(TORONTO, 2026, 6, 1, 11, 0)
    drawn = random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.25)
    assert fmt_local(drawn, TORONTO) == "2026-06-02T10:30:00-04:00"


def test_random_daily_uses_today_when_the_draw_lands_after_after():
    after = local(TORONTO, 2026, 6, 1, 11, 0)
    drawn = random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.75)
    assert fmt_local(drawn, TORONTO) == "2026-06-01T11:30:00-04:00"


def test_random_daily_spreads_over_the_real_length_of_a_short_spring_window():
    after = local(TORONTO, 2026, 3, 7, 12, 0)
    drawn = random_daily(after, time(0, 0), time(4, 0), TORONTO, 0.5)
    assert drawn == utc(2026, 3, 8, 6, 30)


def test_random_daily_spreads_over_the_real_length_of_a_long_autumn_window():
    after = local(TORONTO, 2026, 10, 31, 12, 0)
    drawn = random_daily(after, time(0, 0), time(4, 0), TORONTO, 0.5)
    assert drawn == utc(2026, 11, 1, 6, 30)


def test_random_daily_skips_a_window_wholly_inside_the_gap():
    after = local(TORONTO, 2026, 3, 8, 0, 0)
    drawn = random_daily(after, time(2, 0), time(2, 45), TORONTO, 0.0)
    assert fmt_local(drawn, TORONTO) == "2026-03-09T02:00:00-04:00"


@pytest.mark.parametrize("draw", [1.0, -0.1, math.nan])
def test_random_daily_rejects_a_draw_outside_zero_to_one(draw):
    with pytest.raises(ValueError, match="draw must be in"):
        random_daily(utc(2026, 6, 1, 0, 0), time(10, 0), time(12, 0), TORONTO, draw)


def test_random_daily_rejects_an_empty_window():
    with pytest.raises(ValueError, match="empty window"):
        random_daily(utc(2026, 6, 1, 0, 0), time(10, 0), time(10, 0), TORONTO, 0.5)


@settings(database=None, max_examples=200)
@given(
    after=instants,
    tz=zones,
    start=wall_times,
    end=wall_times,
    draw=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_random_daily_lands_after_after_and_within_two_days(after, tz, start, end, draw):
    assume(start != end)
    drawn = random_daily(after, start, end, tz, draw)
    assert after < drawn < after + timedelta(hours=49)


# Quiet hours


@pytest.mark.parametrize(
    ("hour", "minute", "quiet"),
    [(22, 0, True), (23, 30, True), (3, 0, True), (7, 59, True), (8, 0, False), (21, 59, False)],
)
def test_quiet_hours_crossing_midnight_contain_the_night(hour, minute, quiet):
    assert NIGHT.contains(local(TORONTO, 2026, 6, 1, hour, minute), TORONTO) is quiet


def test_quiet_hours_within_a_day_contain_only_that_span():
    lunch = QuietHours(time(12, 0), time(13, 0))
    assert lunch.contains(local(TORONTO, 2026, 6, 1, 12, 30), TORONTO)
    assert not lunch.contains(local(TORONTO, 2026, 6, 1, 13, 0), TORONTO)
    assert not lunch.contains(local(TORONTO, 2026, 6, 1, 11, 59), TORONTO)


def test_quiet_hours_with_equal_start_and_end_are_never_quiet():
    never = QuietHours(time(22, 0), time(22, 0))
    assert not never.contains(local(TORONTO, 2026, 6, 1, 22, 0), TORONTO)


def test_quiet_hours_are_read_on_the_participants_clock():
    assert NIGHT.contains(utc(2026, 6, 2, 3, 0), TORONTO)
    assert not NIGHT.contains(utc(2026, 6, 2, 3, 0), SYDNEY)


def test_quiet_hours_started_before_midnight_end_at_eight_the_next_local_day():
    ends = NIGHT.end_after(local(TORONTO, 2026, 6, 1, 23, 30), TORONTO)
    assert fmt_local(ends, TORONTO) == "2026-06-02T08:00:00-04:00"


def test_quiet_hours_entered_after_midnight_end_at_eight_the_same_local_day():
    ends = NIGHT.end_after(local(TORONTO, 2026, 6, 2, 3, 0), TORONTO)
    assert fmt_local(ends, TORONTO) == "2026-06-02T08:00:00-04:00"


def test_quiet_hours_across_spring_forward_end_at_eight_local_nine_real_hours_later():
    start = local(TORONTO, 2026, 3, 7, 23, 0)
    ends = NIGHT.end_after(start, TORONTO)
    assert fmt_local(ends, TORONTO) == "2026-03-08T08:00:00-04:00"
    assert ends - start == timedelta(hours=8)


def test_quiet_hours_across_fall_back_end_at_eight_local_in_standard_time():
    ends = NIGHT.end_after(local(TORONTO, 2026, 10, 31, 23, 0), TORONTO)
    assert ends == utc(2026, 11, 1, 13, 0)


def test_quiet_hours_ending_inside_the_gap_end_at_the_change():
    short_night = QuietHours(time(22, 0), time(2, 30))
    ends = short_night.end_after(local(TORONTO, 2026, 3, 8, 1, 0), TORONTO)
    assert ends == utc(2026, 3, 8, 7, 0)
    assert not short_night.contains(ends, TORONTO)


def test_quiet_hours_end_in_the_first_pass_of_a_repeated_hour():
    early = QuietHours(time(0, 0), time(1, 30))
    assert early.end_after(utc(2026, 11, 1, 5, 10), TORONTO) == utc(2026, 11, 1, 5, 30)


def test_quiet_hours_entered_in_the_second_pass_end_in_the_second_pass():
    early = QuietHours(time(0, 0), time(1, 30))
    assert early.end_after(utc(2026, 11, 1, 6, 10), TORONTO) == utc(2026, 11, 1, 6, 30)


def test_quiet_hours_end_after_refuses_an_instant_outside_quiet_hours():
    with pytest.raises(ValueError, match="not inside quiet hours"):
        NIGHT.end_after(local(TORONTO, 2026, 6, 1, 12, 0), TORONTO)


def test_defer_leaves_an_instant_outside_quiet_hours_unchanged_in_utc():
    noon = datetime(2026, 6, 1, 12, 0, tzinfo=TORONTO)
    deferred = NIGHT.defer(noon, TORONTO)
    assert deferred == noon
    assert deferred.tzinfo is UTC


def test_defer_moves_an_instant_inside_quiet_hours_to_their_end():
    assert NIGHT.defer(local(TORONTO, 2026, 6, 1, 23, 0), TORONTO) == utc(2026, 6, 2, 12, 0)


def test_defer_skips_a_quiet_end_that_a_dst_gap_lands_inside_quiet_hours():
    # Quiet all day but 00:00-00:01; Sao Paulo's clocks jumped from 00:00 to 01:00 on
    # 2017-10-15, so that day's awake minute never happened: the next one is 16 October's.
    sao_paulo = ZoneInfo("America/Sao_Paulo")
    almost_always = QuietHours(time(0, 1), time(0, 0))

    deferred = almost_always.defer(utc(2017, 10, 14, 5, 0), sao_paulo)

    assert not almost_always.contains(deferred, sao_paulo)
    assert deferred == datetime(2017, 10, 16, 0, 0, tzinfo=sao_paulo)


def test_quiet_hours_reject_times_carrying_a_tzinfo():
    with pytest.raises(ValueError, match="must not carry a tzinfo"):
        QuietHours(time(22, 0, tzinfo=UTC), time(8, 0))


# Local days and formatting


def test_local_date_is_the_participants_calendar_date():
    assert local_date(utc(2026, 6, 2, 2, 0), TORONTO) == date(2026, 6, 1)
    assert local_date(utc(2026, 6, 2, 2, 0), SYDNEY) == date(2026, 6, 2)


def test_local_day_bounds_of_an_ordinary_day_are_local_midnights():
    assert local_day_bounds(date(2026, 6, 1), TORONTO) == (
        utc(2026, 6, 1, 4, 0),
        utc(2026, 6, 2, 4, 0),
    )


@pytest.mark.parametrize(
    ("tz", "day", "hours"),
    [
        (TORONTO, date(2026, 3, 8), 23),
        (TORONTO, date(2026, 11, 1), 25),
        (SYDNEY, date(2026, 4, 5), 25),
        (SYDNEY, date(2026, 10, 4), 23),
    ],
)
def test_local_day_bounds_span_the_real_length_of_a_dst_day(tz, day, hours):
    start, end = local_day_bounds(day, tz)
    assert end - start == timedelta(hours=hours)


def test_local_day_bounds_start_at_the_change_when_midnight_is_skipped():
    start, end = local_day_bounds(date(2026, 9, 6), SANTIAGO)
    assert fmt_local(start, SANTIAGO) == "2026-09-06T01:00:00-03:00"
    assert end == utc(2026, 9, 7, 3, 0)


def test_fmt_local_shows_local_wall_time_with_its_offset():
    assert fmt_local(utc(2026, 6, 1, 13, 0), TORONTO) == "2026-06-01T09:00:00-04:00"


NAIVE = datetime(2026, 6, 1, 9, 0)  # noqa: DTZ001 - the point of these tests


@pytest.mark.parametrize(
    "call",
    [
        lambda: next_daily(NAIVE, NINE, TORONTO),
        lambda: random_daily(NAIVE, time(10, 0), time(12, 0), TORONTO, 0.5),
        lambda: NIGHT.contains(NAIVE, TORONTO),
        lambda: NIGHT.end_after(NAIVE, TORONTO),
        lambda: NIGHT.defer(NAIVE, TORONTO),
        lambda: local_date(NAIVE, TORONTO),
        lambda: fmt_local(NAIVE, TORONTO),
    ],
    ids=["next_daily", "random_daily", "contains", "end_after", "defer", "local_date", "fmt"],
)
def test_naive_datetimes_are_rejected(call):
    with pytest.raises(ValueError, match="must be a timezone-aware datetime"):
        call()


# Boundaries single-change mutants of bot/core/localtime.py survived (make mutation)


def test_quiet_hours_within_a_day_start_at_their_first_instant():
    lunch = QuietHours(time(12, 0), time(13, 0))
    assert lunch.contains(local(TORONTO, 2026, 6, 1, 12, 0), TORONTO)
    assert lunch.contains(local(TORONTO, 2026, 6, 1, 12, 59), TORONTO)


def test_quiet_hours_entered_at_exactly_their_start_before_midnight_end_the_next_morning():
    start = local(TORONTO, 2026, 6, 1, 22, 0)
    assert fmt_local(NIGHT.end_after(start, TORONTO), TORONTO) == "2026-06-02T08:00:00-04:00"
    assert fmt_local(NIGHT.defer(start, TORONTO), TORONTO) == "2026-06-02T08:00:00-04:00"


def test_quiet_hours_in_their_first_minute_after_midnight_end_the_same_morning():
    just_after = local(TORONTO, 2026, 6, 2, 0, 0)
    assert fmt_local(NIGHT.end_after(just_after, TORONTO), TORONTO) == ("2026-06-02T08:00:00-04:00")


def test_deferring_outside_quiet_hours_keeps_the_instant_in_utc():
    noon = local(TORONTO, 2026, 6, 1, 12, 0)
    deferred = NIGHT.defer(noon, TORONTO)
    assert deferred == noon and deferred.tzinfo == UTC


def test_random_daily_takes_tomorrow_when_the_draw_lands_exactly_on_after():
    after = local(TORONTO, 2026, 6, 1, 11, 0)
    drawn = random_daily(after, time(10, 0), time(12, 0), TORONTO, 0.5)
    assert fmt_local(drawn, TORONTO) == "2026-06-02T11:00:00-04:00"  # strictly after


def test_random_daily_skips_a_gap_window_the_day_after_to_the_day_after_that():
    after = local(TORONTO, 2026, 3, 7, 23, 0)  # today's window passed; tomorrow's is in the gap
    drawn = random_daily(after, time(2, 10), time(2, 50), TORONTO, 0.5)
    assert fmt_local(drawn, TORONTO) == "2026-03-09T02:30:00-04:00"


def test_clock_reaches_a_gap_time_at_the_change_east_of_greenwich():
    london = ZoneInfo("Europe/London")  # 01:00 GMT becomes 02:00 BST on 2026-03-29
    assert clock_reaches(date(2026, 3, 29), time(1, 30), london) == utc(2026, 3, 29, 1, 0)


class _NoOffset(tzinfo):  # a tzinfo that does not know its offset
    def utcoffset(self, dt):  # noqa: ANN001, ANN201, ARG002
        return None


def test_a_datetime_whose_tzinfo_has_no_offset_counts_as_naive():
    unknown = datetime(2026, 6, 1, 12, 0, tzinfo=_NoOffset())
    with pytest.raises(ValueError, match="timezone-aware"):
        next_daily(unknown, NINE, TORONTO)


def test_parse_quiet_hours_reads_a_window_and_none_for_nothing():
    assert parse_quiet_hours("22:00-08:00") == NIGHT
    assert parse_quiet_hours(" 12:00 - 13:30 ") == QuietHours(time(12, 0), time(13, 30))
    assert parse_quiet_hours(None) is None
    assert parse_quiet_hours("") is None
    assert parse_quiet_hours("   ") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("22:00", "expected HH:MM-HH:MM"),
        ("22:00-22:00", "start and end are the same"),
        ("22:00-25:00", "invalid local time"),
    ],
)
def test_parse_quiet_hours_says_what_is_wrong(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_quiet_hours(text)


def test_quiet_hours_cannot_be_changed_once_read():
    with pytest.raises(dataclasses.FrozenInstanceError):
        NIGHT.start = time(23, 0)  # type: ignore[misc]
