"""The occasions of a recurring schedule: when each is planned, when it is due once quiet hours
are respected, and which are skipped and why (pure, deterministic, DST-correct).

A schedule starts at `from` + `offset` ("the start", see `start_of`) and runs period after
period: every N local days, or every N calendar weeks (Monday to Sunday) on the weekdays in
`on`. On each of its local dates it has slots: one per `at` time, `times` random times per
window, or, with neither, one at the start's own wall time (a PHQ-9 answered at 21:13 comes
back at 21:13). A slot planned before the start is not part of the series. Fixed times follow
`bot.core.localtime.to_utc` (a time in a spring-forward gap moves forward, an ambiguous one is
its first occurrence); windows are bounded by `clock_reaches`, as daily schedules' windows are.

Quiet hours. An occasion planned inside quiet hours is deferred to their end (`due_utc`, the
first instant after them; `planned_utc` stays) unless the schedule says `quiet_hours: skip`,
when it is returned skipped with the reason "quiet hours" so that the caller records it.

Merging. Several occasions deferred into one quiet period would all be due at its end: the
participant would get the same question several times at 08:00. The first of them is sent
there; each later one is returned skipped, reason "deferred into an occasion already due" (and
an on-time occasion at the very instant a deferred one became due is skipped as "due at the same
moment as an earlier occasion"). So the occasions given are due at strictly increasing instants,
and every slot still has its own record.

Ends. `until: count` counts the occasions given (deferred ones count, skipped ones do not), so
quiet hours never cut a series short; `date` and `days` end it by local date. A series ends
only there: `next_occasion` returns None for nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import count
from zoneinfo import ZoneInfo

from bot.core.localtime import QuietHours, clock_reaches, local_date, to_utc
from bot.timers.recurrence_format import WEEKDAYS, Recurrence, Window

QUIET_HOURS = "quiet hours"
MERGED = "deferred into an occasion already due"
SAME_MOMENT = "due at the same moment as an earlier occasion"
NO_WINDOW = "the window does not exist on this date (the clocks change inside it)"
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Occasion:
    """One slot of a schedule: `index` counts every slot from 0 (given or skipped); `slot` is
    its place among its local date's slots; `draw` placed it in its window (None: fixed)."""

    index: int
    local_date: date
    slot: int
    planned_utc: datetime
    due_utc: datetime
    deferred: bool
    skipped: bool
    reason: str | None
    draw: float | None = None


@dataclass(frozen=True)
class _Slot:
    planned: datetime
    draw: float | None
    exists: bool = True


def start_of(recurrence: Recurrence, anchor_utc: datetime, tz: ZoneInfo) -> datetime:
    """The start: `anchor_utc` + `offset`. Hours and minutes are elapsed time. Days count local
    dates (DST never shifts them): with `at` or `windows` the start is the beginning of that
    date (`offset: 1d` is "from the day after", all of it); without, the anchor's wall time on
    it (`to_utc` rules), so "14d" after 21:13 is 21:13 fourteen days later."""
    start = anchor_utc.astimezone(UTC)
    if recurrence.offset.days:
        local = anchor_utc.astimezone(tz)
        day = local.date() + timedelta(days=recurrence.offset.days)
        if recurrence.at is not None or recurrence.windows is not None:
            start = clock_reaches(day, time(0, 0), tz)
        else:
            start = to_utc(day, local.time().replace(tzinfo=None), tz)
    return start + recurrence.offset.elapsed  # elapsed: added in UTC, not on the wall clock


def draw_in_window(seed: str, day: date, window: int, number: int) -> float:
    """A uniform draw in [0, 1) for one random time of one window on one local date: fixed by
    the schedule's seed (so recomputing never draws twice), unpredictable without it."""
    digest = hashlib.sha256(f"{seed}:{day.isoformat()}:{window}:{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def occasions(
    recurrence: Recurrence,
    anchor_utc: datetime,
    tz: ZoneInfo,
    quiet: QuietHours | None,
    seed: str,
    after: datetime | None = None,
    limit: int = 500,
) -> list[Occasion]:
    """The schedule's occasions in order, at most `limit`, only those due strictly after
    `after` if given (indices still count from the start)."""
    found: list[Occasion] = []
    if limit <= 0:
        return found
    for occasion in _series(recurrence, anchor_utc, tz, quiet, seed):
        if after is None or occasion.due_utc > after:
            found.append(occasion)
            if len(found) == limit:
                break
    return found


def next_occasion(
    recurrence: Recurrence,
    anchor_utc: datetime,
    tz: ZoneInfo,
    quiet: QuietHours | None,
    seed: str,
    last_index: int | None,
) -> Occasion | None:
    """The occasion after the one numbered `last_index` (None: the first), as `occasions` has
    it; None only when the schedule's `until` has been reached. It walks the series from the
    start (cost grows with the index), so a chain of timers needs to remember only the index."""
    wanted = 0 if last_index is None else last_index + 1
    for occasion in _series(recurrence, anchor_utc, tz, quiet, seed):
        if occasion.index == wanted:
            return occasion
    return None


def _series(
    recurrence: Recurrence, anchor_utc: datetime, tz: ZoneInfo, quiet: QuietHours | None, seed: str
) -> Iterator[Occasion]:
    start = start_of(recurrence, anchor_utc, tz)
    start_day = local_date(start, tz)
    until = recurrence.until
    last_day = until.date if until is not None else None
    if until is not None and until.days is not None:
        last_day = start_day + timedelta(days=until.days - 1)
    index, given, last_due = 0, 0, None
    for day in _dates(recurrence, start_day):
        if last_day is not None and day > last_day:
            return
        for number, slot in enumerate(_slots(recurrence, day, tz, seed, start)):
            if slot.planned < start:
                continue
            occasion = _decide(recurrence, quiet, tz, index, day, number, slot, last_due)
            yield occasion
            index += 1
            if not occasion.skipped:
                given, last_due = given + 1, occasion.due_utc
                if until is not None and until.count is not None and given >= until.count:
                    return


def _dates(recurrence: Recurrence, start_day: date) -> Iterator[date]:
    """The local dates with slots, from the start's date on, forever."""
    step = recurrence.every.days
    if recurrence.on is None:
        for period in count():
            yield start_day + timedelta(days=period * step)
    weekdays = sorted(WEEKDAYS.index(name) for name in recurrence.on or ())
    monday = start_day - timedelta(days=start_day.weekday())
    for period in count():
        for weekday in weekdays:
            day = monday + timedelta(days=period * step + weekday)
            if day >= start_day:
                yield day


def _slots(
    recurrence: Recurrence, day: date, tz: ZoneInfo, seed: str, start: datetime
) -> list[_Slot]:
    """The slots of one local date, in order of their planned instants."""
    if recurrence.windows is not None:
        slots = [
            _in_window(opens, closes, draw_in_window(seed, day, place, number))
            for place, window in enumerate(recurrence.windows)
            for opens, closes in [_bounds(window, day, tz)]
            for number in range(recurrence.draws_per_window)
        ]
    elif recurrence.at is not None:
        slots = [_Slot(to_utc(day, at, tz), None) for at in recurrence.at]
    elif day == local_date(start, tz):
        slots = [_Slot(start, None)]
    else:
        slots = [_Slot(to_utc(day, _wall(start, tz), tz), None)]
    return sorted(slots, key=lambda slot: slot.planned)


def _wall(instant: datetime, tz: ZoneInfo) -> time:
    return instant.astimezone(tz).time().replace(tzinfo=None)


def _bounds(window: Window, day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The instants the window opening on `day` opens and closes (`clock_reaches` rules)."""
    opens = clock_reaches(day, window.start, tz)
    return opens, clock_reaches(day + timedelta(days=int(window.crosses_midnight)), window.end, tz)


def _in_window(opens: datetime, closes: datetime, draw: float) -> _Slot:
    """opens + floor(draw x real length), as daily schedules draw; a window wholly inside a DST
    gap does not exist on that date (its slot is kept, to be recorded as skipped)."""
    length = (closes - opens) // _MICROSECOND
    if length <= 0:
        return _Slot(opens, draw, exists=False)
    return _Slot(opens + int(draw * length) * _MICROSECOND, draw)


def _decide(
    recurrence: Recurrence,
    quiet: QuietHours | None,
    tz: ZoneInfo,
    index: int,
    day: date,
    number: int,
    slot: _Slot,
    last_due: datetime | None,
) -> Occasion:
    """What happens to one slot: given on time, deferred, skipped in quiet hours, or merged."""
    due, deferred, reason = slot.planned, False, None
    if not slot.exists:
        reason = NO_WINDOW
    elif quiet is not None and quiet.contains(slot.planned, tz):
        if recurrence.policy == "skip":
            reason = QUIET_HOURS
        else:
            due, deferred = quiet.end_after(slot.planned, tz), True
    if reason is None and last_due is not None and due <= last_due:
        reason = MERGED if deferred else SAME_MOMENT
    return Occasion(
        index=index,
        local_date=day,
        slot=number,
        planned_utc=slot.planned,
        due_utc=due,
        deferred=deferred,
        skipped=reason is not None,
        reason=reason,
        draw=slot.draw,
    )
