"""How an author writes a recurring schedule, and what the validator refuses and says."""

from __future__ import annotations

from datetime import time, timedelta
from typing import Any

import pytest
import yaml

from bot.core.localtime import parse_quiet_hours
from bot.timers.recurrence_format import (
    Every,
    Recurrence,
    parse_every,
    parse_offset,
    recurrence_problems,
    window_quiet_problems,
)

NIGHT = parse_quiet_hours("22:00-08:00")


def problems_of(text: str) -> list[tuple[tuple[str | int, ...], str]]:
    return recurrence_problems(yaml.safe_load(text))[1]


def parsed(text: str) -> Recurrence:
    recurrence, problems = recurrence_problems(yaml.safe_load(text))
    assert recurrence is not None, problems
    return recurrence


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 day", Every(1, "day")),
        ("14 days", Every(14, "day")),
        ("14d", Every(14, "day")),
        ("2 weeks", Every(2, "week")),
        ("2W", Every(2, "week")),
        ("daily", Every(1, "day")),
        ("weekly", Every(1, "week")),
    ],
)
def test_periods_are_read_as_authors_write_them(text: str, expected: Every) -> None:
    assert parse_every(text) == expected


@pytest.mark.parametrize("text", ["0 days", "fortnightly", "2 months", "", "-1 day"])
def test_a_period_that_is_not_days_or_weeks_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a period"):
        parse_every(text)


def test_a_bare_number_of_every_asks_for_its_unit() -> None:
    assert problems_of("every: 14") == [
        (("every",), "`every`: 14 needs a unit: '14 days' or '14 weeks'")
    ]


def test_offsets_in_days_are_local_days_and_in_hours_are_elapsed() -> None:
    assert parse_offset("3d").days == 3 and parse_offset("2 weeks").days == 14
    assert parse_offset("2h").elapsed == timedelta(hours=2)
    assert parse_offset("30m").elapsed == timedelta(minutes=30) and parse_offset("30m").days == 0


def test_unquoted_times_that_yaml_reads_as_base_60_numbers_are_clock_times() -> None:
    assert parsed("every: 1 day\nat: [21:00, 9:30, '08:15']").at == (
        time(21, 0),
        time(9, 30),
        time(8, 15),
    )


def test_the_yaml_key_on_which_yaml_reads_as_true_is_the_weekdays() -> None:
    assert parsed("every: 2 weeks\non: [Monday, thursday]\nat: '09:00'").on == (
        "monday",
        "thursday",
    )


def test_a_full_schedule_reads_every_key() -> None:
    recurrence = parsed(
        "every: 1 day\nwindows: [08:00-12:00, 12:00-16:00]\ntimes: 2\nfrom: phq9.completed\n"
        "offset: 3d\nuntil: {date: 2027-03-01}\nquiet_hours: skip\n"
    )
    assert recurrence.start_from == "phq9.completed" and recurrence.times == 2
    assert [str(w) for w in recurrence.windows or ()] == ["08:00-12:00", "12:00-16:00"]
    assert recurrence.until is not None and str(recurrence.until.date) == "2027-03-01"
    assert recurrence.policy == "skip"


def test_quiet_hours_defer_unless_the_author_says_skip() -> None:
    assert parsed("every: 1 day").policy == "defer"
    assert parsed("every: 1 day").quiet_hours is None


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("every: 1 day\non: [monday]", ("on",), "goes with `every: N weeks`"),
        ("every: 1 week\non: [monday, monday]", ("on",), "each weekday once"),
        ("every: 1 day\nat: '09:00'\nwindows: 10:00-11:00", ("at",), "not both"),
        ("every: 1 day\nat: '09:00'\ntimes: 3", ("times",), "goes with `windows` only"),
        ("every: 1 day\nat: ['09:00', '9:00']", ("at",), "each time once"),
        ("every: 1 day\nwindows: [08:00-12:00, 11:00-13:00]", ("windows",), "overlap"),
        ("every: 1 day\nwindows: [22:00-01:00, 00:30-02:00]", ("windows",), "overlap"),
        ("every: 1 day\nwindows: 09:00-09:00", ("windows", 0), "is empty"),
        ("every: 1 day\nuntil: {count: 2, days: 3}", ("until",), "exactly one of"),
        ("every: 1 day\nuntil: {count: 0}", ("until", "count"), "greater than or equal to 1"),
        ("every: 1 day\nquiet_hours: later", ("quiet_hours",), "'defer' or 'skip'"),
        ("every: 1 day\nevery_other: true", ("every_other",), "unknown key `every_other`"),
        ("at: '09:00'", ("every",), "`every` is required"),
        ("every: 1 day\non: [funday]", ("on", 0), "monday"),
    ],
)
def test_a_malformed_schedule_is_refused_at_the_key_at_fault(
    text: str, key: tuple[Any, ...], words: str
) -> None:
    problems = problems_of(text)
    assert [where for where, _ in problems] == [key]
    assert words in problems[0][1]


def test_a_window_partly_inside_quiet_hours_is_refused_unless_deferral_is_declared() -> None:
    evening = parsed("every: 1 day\nwindows: 20:00-23:00")
    (problem,) = window_quiet_problems(evening, NIGHT)
    assert "20:00-23:00 overlaps quiet hours 22:00-08:00" in problem
    assert "declare `quiet_hours: defer`" in problem


def test_a_window_inside_quiet_hours_is_refused_when_the_author_says_skip() -> None:
    early = parsed("every: 1 day\nwindows: 06:00-07:00\nquiet_hours: skip")
    (problem,) = window_quiet_problems(early, NIGHT)
    assert "says `quiet_hours: skip`" in problem


def test_a_window_inside_quiet_hours_is_accepted_when_deferral_is_declared() -> None:
    early = parsed("every: 1 day\nwindows: [06:00-09:00, 21:00-23:30]\nquiet_hours: defer")
    assert window_quiet_problems(early, NIGHT) == []


def test_a_fixed_time_inside_quiet_hours_crossing_midnight_is_refused() -> None:
    times = parsed("every: 1 day\nat: ['07:59', '08:00', '21:59', '22:00', '00:30']")
    problems = window_quiet_problems(times, NIGHT)
    assert [problem.split(" is inside")[0] for problem in problems] == [
        "`at` 07:59",
        "`at` 22:00",
        "`at` 00:30",
    ]


def test_windows_that_only_touch_quiet_hours_are_accepted() -> None:
    day = parsed("every: 1 day\nwindows: [08:00-12:00, 12:00-16:00, 16:00-22:00]")
    assert window_quiet_problems(day, NIGHT) == []


def test_a_window_crossing_midnight_meets_quiet_hours_that_do_not() -> None:
    late = parsed("every: 1 day\nwindows: 23:00-01:00")
    assert window_quiet_problems(late, parse_quiet_hours("00:30-06:00")) != []
    assert window_quiet_problems(late, parse_quiet_hours("02:00-06:00")) == []


def test_without_quiet_hours_or_fixed_times_there_is_nothing_to_refuse() -> None:
    assert window_quiet_problems(parsed("every: 1 day\nat: '23:00'"), None) == []
    assert window_quiet_problems(parsed("every: 14 days"), NIGHT) == []
