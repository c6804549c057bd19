"""Properties of recurring schedules over random definitions, quiet hours and DST-change days."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bot.core.localtime import QuietHours, clock_reaches, local_date, to_utc
from bot.timers.recurrence import (
    MERGED,
    NO_WINDOW,
    QUIET_HOURS,
    SAME_MOMENT,
    Occasion,
    next_occasion,
    occasions,
)
from bot.timers.recurrence_format import WEEKDAYS, Recurrence

ZONES = ("America/Toronto", "Europe/London", "Australia/Sydney", "America/Sao_Paulo", "UTC")
LIMIT = 60
Case = tuple[Recurrence, datetime, ZoneInfo, QuietHours | None, str]
PROPERTIES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUIET_PROPERTY = settings(PROPERTIES, max_examples=300)


@cache
def change_days(zone: str) -> tuple[date, ...]:
    """Local dates on which the zone's UTC offset changes (Sao Paulo had DST until 2019)."""
    tz, day, found = ZoneInfo(zone), date(2017, 1, 1), []
    while day < date(2028, 1, 1):
        before = datetime.combine(day, time(0), tzinfo=tz).utcoffset()
        after = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz).utcoffset()
        if before != after:
            found.append(day)
        day += timedelta(days=1)
    return tuple(found) or (date(2026, 3, 8),)


# Minutes of the day, half of them in the small hours where clocks change.
minutes = st.one_of(st.integers(0, 1439), st.integers(0, 200))


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


@st.composite
def settings_of_a_participant(draw: st.DrawFn) -> tuple[ZoneInfo, datetime, QuietHours | None]:
    """A zone, an anchor on or near one of its DST-change days (either pass of a repeated
    hour), and quiet hours (often crossing midnight) or none."""
    zone = draw(st.sampled_from(ZONES))
    tz = ZoneInfo(zone)
    day = draw(st.sampled_from(change_days(zone))) + timedelta(days=draw(st.integers(-2, 2)))
    minute, fold = draw(minutes), draw(st.integers(0, 1))
    wall = datetime.combine(day, time(minute // 60, minute % 60), tzinfo=tz).replace(fold=fold)
    anchor = wall.astimezone(UTC)
    start, end = draw(
        st.one_of(
            st.sampled_from([(1320, 480), (1260, 480), (0, 360)]),
            st.tuples(minutes, minutes).filter(lambda pair: pair[0] != pair[1]),
        )
    )
    quiet = draw(
        st.one_of(
            st.none(),
            st.just(QuietHours(time(start // 60, start % 60), time(end // 60, end % 60))),
        )
    )
    return tz, anchor, quiet


@st.composite
def definitions(
    draw: st.DrawFn,
    anchor: datetime,
    tz: ZoneInfo,
    units: tuple[str, ...] = ("day", "week"),
    weekdays: tuple[bool, ...] = (True, False),
    timings: tuple[str, ...] = ("from", "at", "windows"),
    ends: tuple[str, ...] = ("count", "days", "date", "none"),
) -> dict[str, Any]:
    """An author's schedule: period, weekdays, times or windows, start, end and quiet policy
    (each drawn from the choices given, so a property draws only the schedules it is about)."""
    unit = draw(st.sampled_from(units))
    data: dict[str, Any] = {"every": f"{draw(st.integers(1, 15 if unit == 'day' else 3))} {unit}"}
    if unit == "week" and draw(st.sampled_from(weekdays)):
        data["on"] = draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=4, unique=True))
    timing = draw(st.sampled_from(timings))
    if timing == "at":
        data["at"] = [
            clock(m) for m in draw(st.lists(minutes, min_size=1, max_size=3, unique=True))
        ]
    elif timing == "windows":
        count = draw(st.integers(1, 3))
        bounds = sorted(
            draw(st.lists(minutes, min_size=2 * count, max_size=2 * count, unique=True))
        )
        turn = draw(st.integers(0, 1439))
        bounds = [(bound + turn) % 1440 for bound in bounds]
        data["windows"] = [
            f"{clock(a)}-{clock(b)}" for a, b in zip(bounds[::2], bounds[1::2], strict=True)
        ]
        data["times"] = draw(st.integers(1, 3))
    data["offset"] = draw(st.sampled_from(["0d", "1d", "14d", "2h", "90m"]))
    end = draw(st.sampled_from(ends))
    if end == "count":
        data["until"] = {"count": draw(st.integers(1, 12))}
    elif end == "days":
        data["until"] = {"days": draw(st.integers(1, 40))}
    elif end == "date":
        data["until"] = {"date": local_date(anchor, tz) + timedelta(days=draw(st.integers(0, 60)))}
    data["quiet_hours"] = draw(st.sampled_from([None, "defer", "skip"]))
    return data


@st.composite
def cases(draw: st.DrawFn, **choices: tuple[Any, ...]) -> Case:
    tz, anchor, quiet = draw(settings_of_a_participant())
    recurrence = Recurrence.model_validate(draw(definitions(anchor, tz, **choices)))
    return recurrence, anchor, tz, quiet, draw(st.text(min_size=1, max_size=8))


def run(case: Case, limit: int = LIMIT) -> list[Occasion]:
    return occasions(*case, limit=limit)


@QUIET_PROPERTY
@given(cases())
def test_every_occasion_is_outside_quiet_hours_deferred_or_explicitly_skipped(case: Case) -> None:
    recurrence, _, tz, quiet, _ = case
    for occasion in run(case):
        in_quiet = quiet is not None and quiet.contains(occasion.planned_utc, tz)
        if occasion.reason == QUIET_HOURS:
            assert in_quiet and recurrence.quiet_hours == "skip"
        elif occasion.deferred:
            assert quiet is not None and in_quiet and recurrence.quiet_hours != "skip"
            assert occasion.due_utc == quiet.end_after(occasion.planned_utc, tz)
            assert not quiet.contains(occasion.due_utc, tz)
        elif occasion.reason != NO_WINDOW:
            assert not in_quiet
            assert occasion.due_utc == occasion.planned_utc
        assert occasion.skipped == (occasion.reason is not None)


@PROPERTIES
@given(cases(ends=("count",)))
def test_until_count_gives_exactly_that_many_occasions_deferred_ones_included(case: Case) -> None:
    recurrence = case[0]
    assert recurrence.until is not None and recurrence.until.count is not None
    found = run(case, limit=400)
    given_ = [occasion for occasion in found if not occasion.skipped]
    if len(found) < 400:  # ended (a skip policy may skip for longer than the limit looks)
        assert len(given_) == recurrence.until.count
        assert not found[-1].skipped
    assert len(given_) <= recurrence.until.count


@PROPERTIES
@given(cases(weekdays=(False,)))
def test_every_n_days_spaces_the_local_dates_by_n(case: Case) -> None:
    recurrence = case[0]
    dates = sorted({occasion.local_date for occasion in run(case)})
    assert all((day - dates[0]).days % recurrence.every.days == 0 for day in dates[1:])


@PROPERTIES
@given(cases(units=("week",), weekdays=(True,)))
def test_weekdays_and_every_n_weeks_are_honoured(case: Case) -> None:
    recurrence = case[0]
    assert recurrence.on is not None
    mondays = set()
    for occasion in run(case):
        assert WEEKDAYS[occasion.local_date.weekday()] in recurrence.on
        mondays.add(occasion.local_date - timedelta(days=occasion.local_date.weekday()))
    first = min(mondays, default=None)
    assert all((monday - first).days % recurrence.every.days == 0 for monday in mondays)


@PROPERTIES
@given(cases())
def test_times_are_the_declared_times_or_inside_their_windows(case: Case) -> None:
    recurrence, _, tz, _, _ = case
    for occasion in run(case):
        day = occasion.local_date
        if recurrence.at is not None:
            assert occasion.planned_utc in {to_utc(day, at, tz) for at in recurrence.at}
        for window in recurrence.windows or ():
            opens = clock_reaches(day, window.start, tz)
            closes = clock_reaches(day + timedelta(days=window.crosses_midnight), window.end, tz)
            if opens <= occasion.planned_utc < closes:
                break
        else:
            assert recurrence.windows is None or occasion.reason == NO_WINDOW


@PROPERTIES
@given(cases())
def test_slots_are_unique_and_given_occasions_are_due_at_increasing_instants(case: Case) -> None:
    found = run(case)
    assert [occasion.index for occasion in found] == list(range(len(found)))
    assert len({(o.local_date, o.slot) for o in found}) == len(found)
    planned = [occasion.planned_utc for occasion in found]
    assert planned == sorted(planned)
    due = [occasion.due_utc for occasion in found if not occasion.skipped]
    assert all(earlier < later for earlier, later in pairwise(due))
    for occasion in found:
        if occasion.reason in (MERGED, SAME_MOMENT):
            assert occasion.due_utc in due


@PROPERTIES
@given(cases(ends=("date", "days")))
def test_local_dates_stay_within_until_date_or_days(case: Case) -> None:
    recurrence, anchor, tz, _, _ = case
    until = recurrence.until
    assert until is not None
    found = run(case)
    if until.date is not None:
        assert all(occasion.local_date <= until.date for occasion in found)
    if until.days is not None and found:
        assert (found[-1].local_date - found[0].local_date).days < until.days


@PROPERTIES
@given(cases(ends=("none",)))
def test_a_schedule_without_until_never_ends(case: Case) -> None:
    assert case[0].until is None
    assert len(run(case)) == LIMIT


@PROPERTIES
@given(cases())
def test_the_same_seed_gives_the_same_occasions(case: Case) -> None:
    assert run(case) == run(case)


@PROPERTIES
@given(cases(timings=("windows",)), st.text(min_size=1, max_size=8))
def test_a_different_seed_draws_different_times(case: Case, other: str) -> None:
    recurrence, anchor, tz, quiet, seed = case
    assume(other != seed)
    first = [o.planned_utc for o in run(case) if o.reason != NO_WINDOW]
    second = [o.planned_utc for o in occasions(recurrence, anchor, tz, quiet, other, limit=LIMIT)]
    assume(first and second)
    assert first != second


@settings(max_examples=60, deadline=None)
@given(cases())
def test_a_chain_of_next_occasion_reproduces_occasions(case: Case) -> None:
    expected = run(case, limit=20)
    chained: list[Occasion] = []
    while len(chained) < 20:
        following = next_occasion(*case, chained[-1].index if chained else None)
        if following is None:
            break
        chained.append(following)
    assert chained == expected
