"""Participant-local wall-clock arithmetic for durable timers: pure, DST-safe, results in UTC.

Two DST rules, one for points in time and one for the bounds of intervals:

* Points (`to_utc`, `next_daily`). A local time that does not exist on a date (spring-forward
  gap) is moved forward by the length of the gap: 02:30 on 2026-03-08 in America/Toronto becomes
  03:30 EDT (07:30 UTC). This is the instant PEP 495 gives with fold=0, the offset in force before
  the change. A local time that occurs twice (fall-back overlap) means its first occurrence:
  01:30 on 2026-11-01 in America/Toronto is 01:30 EDT (05:30 UTC).
* Interval bounds (`clock_reaches`: random windows, quiet hours, local days). A bound is the
  first instant at which the local clock reads that time or later, so a bound inside a gap is
  the moment of the change (02:30 -> 03:00 EDT) and a bound inside an overlap is its first
  occurrence. Bounds stay in order, and an interval lasts exactly as long as it really lasts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_HH_MM = re.compile(r"([0-9]{1,2}):([0-9]{2})")
# Names some systems install besides the IANA zones; "right/" zones even count leap seconds.
_MACHINE_DEPENDENT_ZONES = frozenset({"localtime", "posixrules", "Factory"})
_MACHINE_DEPENDENT_PREFIXES = ("right/", "posix/")
_ONE_MICROSECOND = timedelta(microseconds=1)


def parse_local_time(text: str) -> time:
    """Parse a 24-hour "HH:MM" (or "H:MM") wall-clock time such as "09:00"."""
    match = _HH_MM.fullmatch(text) if isinstance(text, str) else None
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"invalid local time {text!r}: expected 24-hour HH:MM such as '09:00'")
    return time(int(match[1]), int(match[2]))


def validate_timezone(name: str) -> ZoneInfo:
    """Return the IANA zone called `name`, or raise ValueError saying why it is not one."""
    problem = f"unknown timezone {name!r}: expected an IANA name such as 'America/Toronto'"
    if (
        not isinstance(name, str)
        or name in _MACHINE_DEPENDENT_ZONES
        or name.startswith(_MACHINE_DEPENDENT_PREFIXES)
    ):
        raise ValueError(problem)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        raise ValueError(problem) from error


def is_nonexistent(local_day: date, local_time: time, tz: ZoneInfo) -> bool:
    """Whether `local_time` falls in a spring-forward gap on `local_day` in `tz`."""
    wall = datetime.combine(local_day, _wall_time(local_time))
    return wall.replace(tzinfo=tz).astimezone(UTC).astimezone(tz).replace(tzinfo=None) != wall


def to_utc(local_day: date, local_time: time, tz: ZoneInfo) -> datetime:
    """UTC instant of `local_time` on `local_day` in `tz`; gap: shift forward, overlap: first."""
    wall = datetime.combine(local_day, _wall_time(local_time))
    if is_nonexistent(local_day, local_time, tz):
        return (wall - _offsets_around(wall, tz)[0]).replace(tzinfo=UTC)
    return wall.replace(tzinfo=tz, fold=0).astimezone(UTC)


def clock_reaches(local_day: date, local_time: time, tz: ZoneInfo) -> datetime:
    """First UTC instant at which the clock in `tz` on `local_day` reads `local_time` or later."""
    if not is_nonexistent(local_day, local_time, tz):
        return to_utc(local_day, local_time, tz)
    wall = datetime.combine(local_day, _wall_time(local_time))
    before, after = _offsets_around(wall, tz)
    # The change happens between these two instants; find it to the microsecond.
    low, high = (wall - after).replace(tzinfo=UTC), (wall - before).replace(tzinfo=UTC)
    while high - low > _ONE_MICROSECOND:
        middle = low + (high - low) // 2
        if middle.astimezone(tz).utcoffset() == before:
            low = middle
        else:
            high = middle
    return high


def next_daily(after: datetime, local_time: time, tz: ZoneInfo) -> datetime:
    """First instant strictly after `after` when it is `local_time` in `tz` (rules: `to_utc`)."""
    _require_aware(after, "after")
    today = local_date(after, tz)
    for offset in range(-1, 4):
        candidate = to_utc(today + timedelta(days=offset), local_time, tz)
        if candidate > after:
            return candidate
    raise ValueError(f"no {local_time} in {tz.key} within three days after {after.isoformat()}")


def random_daily(
    after: datetime, window_start: time, window_end: time, tz: ZoneInfo, draw: float
) -> datetime:
    """The instant at fraction `draw` of the next local window [start, end) ending after `after`.

    The window of local date D runs from `clock_reaches(D, start)` to `clock_reaches(D', end)`,
    where D' is D, or D + 1 when end <= start (the window crosses midnight). The instant is
    start + floor(draw * real duration), to the microsecond, so draw 0 is the start and a draw
    just below 1 is the last microsecond before the end. Windows are tried in order of D, from the
    day before `after`'s local date (a window crossing midnight may still be open); the first
    whose drawn instant is strictly after `after` is used. So if `after` is inside a window and
    the draw lands on a part already past, the next day's window is used with the same draw. A
    window that does not exist on a date (wholly inside a DST gap) is skipped.
    """
    _require_aware(after, "after")
    if not 0 <= draw < 1:
        raise ValueError(f"draw must be in [0, 1), got {draw!r}")
    if _wall_time(window_start) == _wall_time(window_end):
        raise ValueError(f"empty window: start and end are both {window_start}")
    crosses_midnight = window_end < window_start
    today = local_date(after, tz)
    for offset in range(-1, 3):
        day = today + timedelta(days=offset)
        start = clock_reaches(day, window_start, tz)
        end = clock_reaches(day + timedelta(days=int(crosses_midnight)), window_end, tz)
        length = (end - start) // _ONE_MICROSECOND
        if length <= 0:
            continue
        # A float below 1 times an integer below 2**53 floors below that integer: never `end`.
        instant = start + int(draw * length) * _ONE_MICROSECOND
        if instant > after:
            return instant
    raise ValueError(f"no window {window_start}-{window_end} in {tz.key} after {after.isoformat()}")


@dataclass(frozen=True)
class QuietHours:
    """Local hours [start, end) when nothing is sent; may cross midnight; start == end: none."""

    start: time
    end: time

    def __post_init__(self) -> None:
        _wall_time(self.start)
        _wall_time(self.end)

    def contains(self, instant: datetime, tz: ZoneInfo) -> bool:
        """Whether the local clock in `tz` at `instant` reads a time inside quiet hours."""
        _require_aware(instant, "instant")
        wall = instant.astimezone(tz).time()
        if self.start <= self.end:
            return self.start <= wall < self.end
        return wall >= self.start or wall < self.end

    def end_after(self, instant: datetime, tz: ZoneInfo) -> datetime:
        """The UTC instant at which the quiet hours containing `instant` end: the first moment
        after it outside them. Usually the window's end; but when a DST gap swallows the whole
        awake stretch of a day (quiet 00:01-00:00 on a day whose midnight never happens), that
        end reads a quiet time again, and the next one is taken."""
        if not self.contains(instant, tz):
            raise ValueError(f"{instant.isoformat()} is not inside quiet hours in {tz.key}")
        moment = instant
        for _ in range(3):  # two ends always span more than a day's longest gap
            moment = self._end_of(moment, tz)
            if not self.contains(moment, tz):
                return moment
        raise ValueError(f"no time outside quiet hours after {instant.isoformat()} in {tz.key}")

    def _end_of(self, instant: datetime, tz: ZoneInfo) -> datetime:
        """Where the quiet window containing `instant` ends by the clock (UTC)."""
        local = instant.astimezone(tz)
        ends_tomorrow = self.end < self.start and local.time() >= self.start
        day = local.date() + timedelta(days=int(ends_tomorrow))
        first = clock_reaches(day, self.end, tz)
        if first > instant:
            return first
        # `instant` is in the second pass of a fall-back hour; the end it meets is the repeat.
        wall = datetime.combine(day, self.end)
        return wall.replace(tzinfo=tz, fold=1).astimezone(UTC)

    def defer(self, instant: datetime, tz: ZoneInfo) -> datetime:
        """`instant` in UTC if it is outside quiet hours, else the moment they end."""
        if self.contains(instant, tz):
            return self.end_after(instant, tz)
        return instant.astimezone(UTC)


def local_date(instant: datetime, tz: ZoneInfo) -> date:
    """The calendar date in `tz` at `instant`."""
    _require_aware(instant, "instant")
    return instant.astimezone(tz).date()


def local_day_bounds(local_day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants [start, end) of `local_day` in `tz`; 23 or 25 hours long on DST days."""
    midnight = time(0, 0)
    return clock_reaches(local_day, midnight, tz), clock_reaches(
        local_day + timedelta(days=1), midnight, tz
    )


def fmt_local(instant: datetime, tz: ZoneInfo) -> str:
    """`instant` as an ISO 8601 string in `tz`'s local time with its offset, for event payloads."""
    _require_aware(instant, "instant")
    return instant.astimezone(tz).isoformat()


def _offsets_around(wall: datetime, tz: ZoneInfo) -> tuple[timedelta, timedelta]:
    """The UTC offsets (before, after) of the change whose gap holds the naive time `wall`."""
    before, after = (wall.replace(tzinfo=tz, fold=f).utcoffset() for f in (0, 1))
    assert before is not None and after is not None  # a ZoneInfo always has an offset
    return min(before, after), max(before, after)


def _wall_time(value: time) -> time:
    """`value` itself, refusing a time that carries a tzinfo (a wall time has no zone)."""
    if value.tzinfo is not None:
        raise ValueError(f"local time must not carry a tzinfo, got {value!r}")
    return value


def _require_aware(instant: datetime, name: str) -> None:
    """Raise ValueError on a naive datetime: naive datetimes are a bug in Tandem."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got naive {instant!r}")


def parse_quiet_hours(text: str | None) -> QuietHours | None:
    """Parse "HH:MM-HH:MM" (local, may cross midnight); "" or None means no quiet hours."""
    if text is None or not text.strip():
        return None
    start, sep, end = text.strip().partition("-")
    if not sep:
        raise ValueError(f"invalid quiet hours {text!r}: expected HH:MM-HH:MM such as 22:00-08:00")
    window = QuietHours(parse_local_time(start.strip()), parse_local_time(end.strip()))
    if window.start == window.end:
        raise ValueError(f"invalid quiet hours {text!r}: start and end are the same")
    return window
