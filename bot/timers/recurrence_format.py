"""The author's shape of a recurring schedule (`Recurrence`), its parsers and its checks."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import time, timedelta
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from bot.core.author_errors import worded
from bot.core.localtime import QuietHours, parse_local_time

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: tuple[str, ...] = get_args(Weekday)
_EVERY = re.compile(r"^(\d+)\s*(d|days?|w|weeks?)$")
_OFFSET = re.compile(r"^(\d+)\s*(m|min|minutes?|h|hours?|d|days?|w|weeks?)$")
_MINUTES_A_DAY = 24 * 60
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Every:
    """The period: every `count` days or weeks (local calendar days, so DST never shifts it)."""

    count: int
    unit: Literal["day", "week"]

    @property
    def days(self) -> int:
        return self.count * (7 if self.unit == "week" else 1)

    def __str__(self) -> str:
        return f"{self.count} {self.unit}{'s' if self.count != 1 else ''}"


@dataclass(frozen=True)
class Offset:
    """How long after `from` the schedule starts: whole local days (kept wall time), or elapsed
    hours and minutes."""

    days: int = 0
    elapsed: timedelta = timedelta(0)


@dataclass(frozen=True)
class Window:
    """A local window [start, end) to draw random times in; it may cross midnight."""

    start: time
    end: time

    @property
    def crosses_midnight(self) -> bool:
        return self.end < self.start

    def minutes(self) -> tuple[int, int]:
        """Start and end in minutes after midnight; end > start (+1440 when crossing)."""
        start, end = _minute(self.start), _minute(self.end)
        return start, end + _MINUTES_A_DAY * int(end <= start)

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"


def parse_every(value: Any) -> Every:
    """ "1 day", "14 days", "14d", "2 weeks", "2w", "daily", "weekly" -> Every."""
    if isinstance(value, Every):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        raise ValueError(f"{value} needs a unit: '{value} days' or '{value} weeks'")
    text = value.strip().lower() if isinstance(value, str) else ""
    if text in ("daily", "weekly"):
        return Every(1, "day" if text == "daily" else "week")
    match = _EVERY.match(text)
    if match is None or int(match[1]) < 1:
        raise ValueError(f"{value!r} is not a period such as '1 day', '14 days' or '2 weeks'")
    return Every(int(match[1]), "week" if match[2].startswith("w") else "day")


def parse_offset(value: Any) -> Offset:
    """ "3d", "2 weeks" (local days, same wall time), "2h", "30m" (elapsed), "0d" -> Offset."""
    if isinstance(value, Offset):
        return value
    text = value.strip().lower() if isinstance(value, str) else str(value)
    match = _OFFSET.match(text)
    if match is None:
        raise ValueError(f"{value!r} is not an offset such as '3d', '2 weeks', '2h' or '30m'")
    amount, unit = int(match[1]), match[2][0]
    if unit in "dw":
        return Offset(days=amount * (7 if unit == "w" else 1))
    return Offset(elapsed=timedelta(hours=amount) if unit == "h" else timedelta(minutes=amount))


def parse_at(value: Any) -> time:
    """ "09:00" -> time. An unquoted 21:00 reaches us as 1260 (YAML 1.1 reads it as base 60)."""
    if isinstance(value, time):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MINUTES_A_DAY:
        return time(value // 60, value % 60)
    return parse_local_time(value.strip() if isinstance(value, str) else value)


def parse_window(value: Any) -> Window:
    """ "08:00-12:00" (local; "22:00-01:00" crosses midnight) -> Window."""
    if isinstance(value, Window):
        return value
    start, sep, end = value.partition("-") if isinstance(value, str) else ("", "", "")
    if not sep:
        raise ValueError(f"{value!r} is not a window such as '08:00-12:00'")
    window = Window(parse_local_time(start.strip()), parse_local_time(end.strip()))
    if window.start == window.end:
        raise ValueError(f"the window {value!r} is empty: it starts and ends at the same time")
    return window


def _listed(value: Any) -> Any:
    """One item written without brackets counts as a list of one."""
    return [value] if isinstance(value, str | int | time | Window) else value


EveryField = Annotated[
    Every,
    BeforeValidator(parse_every),
    WithJsonSchema({"type": "string", "examples": ["1 day", "14 days", "2 weeks"]}),
]
OffsetField = Annotated[
    Offset,
    BeforeValidator(parse_offset),
    WithJsonSchema({"type": "string", "examples": ["3d", "2 weeks", "2h"]}),
]
AtField = Annotated[time, BeforeValidator(parse_at), WithJsonSchema({"type": "string"})]
WindowField = Annotated[Window, BeforeValidator(parse_window), WithJsonSchema({"type": "string"})]


class Until(BaseModel):
    """The declared end: after `count` occasions given (deferred ones count, skipped ones do
    not), after local `date` (inclusive), or after `days` local days from the start."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int | None = Field(None, ge=1)
    date: dt.date | None = None
    days: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _one_end(self) -> Until:
        given = [key for key in ("count", "date", "days") if getattr(self, key) is not None]
        if len(given) != 1:
            raise ValueError(f"`until` takes exactly one of count, date, days (found: {given})")
        return self


class Recurrence(BaseModel):
    """A schedule that keeps going, as an author writes it (docs/schedules.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    every: EveryField
    on: tuple[Weekday, ...] | None = None
    at: Annotated[tuple[AtField, ...], BeforeValidator(_listed)] | None = None
    windows: Annotated[tuple[WindowField, ...], BeforeValidator(_listed)] | None = None
    times: int | None = Field(None, ge=1, le=24)
    start_from: str = Field("enrollment", alias="from", min_length=1)
    offset: OffsetField = Offset()
    until: Until | None = None
    quiet_hours: Literal["defer", "skip"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _yaml_on(cls, data: Any) -> Any:
        # YAML 1.1 (PyYAML) reads the key `on` as the boolean true.
        if isinstance(data, dict) and True in data and "on" not in data:
            data = {("on" if key is True else key): value for key, value in data.items()}
        return data

    @field_validator("on", mode="before")
    @classmethod
    def _weekdays(cls, value: Any) -> Any:
        items = _listed(value)
        if isinstance(items, list | tuple):
            return tuple(str(item).strip().lower() for item in items)
        return items

    @model_validator(mode="after")
    def _coherent(self) -> Recurrence:
        if self.at is not None and self.windows is not None:
            raise ValueError("give `at` (fixed times) or `windows` (random times), not both")
        if self.on is not None and self.every.unit != "week":
            raise ValueError("`on` (weekdays) goes with `every: N weeks`, e.g. `every: 1 week`")
        if self.on is not None and (not self.on or len(set(self.on)) != len(self.on)):
            raise ValueError("`on` lists each weekday once, at least one")
        if self.times is not None and self.windows is None:
            raise ValueError("`times` (random times per window) goes with `windows` only")
        if self.at is not None and (not self.at or len(set(self.at)) != len(self.at)):
            raise ValueError("`at` lists each time once, at least one")
        if self.windows is not None:
            if not self.windows:
                raise ValueError("`windows` lists at least one window")
            clash = _overlap(self.windows)
            if clash:
                raise ValueError(f"`windows`: {clash[0]} and {clash[1]} overlap")
        return self

    @property
    def policy(self) -> Literal["defer", "skip"]:
        """What quiet hours do to an occasion due inside them: defer unless the author says skip."""
        return self.quiet_hours or "defer"

    @property
    def draws_per_window(self) -> int:
        return self.times or 1


def _minute(value: time) -> int:
    return value.hour * 60 + value.minute


def _arcs(window: Window) -> list[tuple[int, int]]:
    """`window` as half-open minute ranges within one day [0, 1440)."""
    start, end = window.minutes()
    if end <= _MINUTES_A_DAY:
        return [(start, end)]
    return [(start, _MINUTES_A_DAY), (0, end - _MINUTES_A_DAY)]


def _meets(first: Iterable[tuple[int, int]], second: Iterable[tuple[int, int]]) -> bool:
    return any(a < d and c < b for a, b in first for c, d in second)


def _overlap(windows: tuple[Window, ...]) -> tuple[Window, Window] | None:
    for i, first in enumerate(windows):
        for second in windows[i + 1 :]:
            if _meets(_arcs(first), _arcs(second)):
                return first, second
    return None


def window_quiet_problems(recurrence: Recurrence, quiet: QuietHours | None) -> list[str]:
    """Problems of a schedule against the quiet hours its participants have.

    The rule, as the issue states it: a window inside quiet hours is refused unless deferral is
    declared. Here: a window or a fixed time wholly or partly inside quiet hours is an error
    unless the schedule says `quiet_hours: defer` explicitly (then its prompts due in quiet
    hours are sent when the quiet hours end). `quiet_hours: skip`, or saying nothing, is refused:
    the author would lose prompts without having said so. Clock times are compared on the wall
    clock; a schedule that takes its time from `from` has no fixed time to check.
    """
    if quiet is None or quiet.start == quiet.end or recurrence.quiet_hours == "defer":
        return []
    span = Window(quiet.start, quiet.end)
    quiet_arcs = _arcs(span)
    said = "says `quiet_hours: skip`" if recurrence.quiet_hours == "skip" else "says nothing"
    remedy = (
        f"move it, or declare `quiet_hours: defer` (the schedule {said}: prompts would be lost)"
    )
    problems = []
    for at in recurrence.at or ():
        if _meets(quiet_arcs, [(_minute(at), _minute(at) + 1)]):
            problems.append(f"`at` {at:%H:%M} is inside quiet hours {span}; {remedy}")
    for window in recurrence.windows or ():
        if _meets(quiet_arcs, _arcs(window)):
            problems.append(f"the window {window} overlaps quiet hours {span}; {remedy}")
    return problems


def recurrence_problems(data: Any) -> tuple[Recurrence | None, list[tuple[KeyPath, str]]]:
    """`data` (a YAML mapping) as a Recurrence, or the key path and message of each problem,
    worded as the intervention loader words them (it maps the key paths to file lines)."""
    try:
        return Recurrence.model_validate(data), []
    except ValidationError as exc:
        problems: list[tuple[KeyPath, str]] = []
        for error in exc.errors(include_url=False, include_input=False):
            loc, message = worded(error)
            if not loc:
                loc = _key_of(message)
            problems.append((loc, message))
        return None, problems


def _key_of(message: str) -> KeyPath:
    """The key a whole-schedule problem is about: the first key its message names, if any."""
    match = _NAMED_KEY.match(message)
    return (match[1],) if match and match[1] in _KEYS else ()


_NAMED_KEY = re.compile(r"^[^`]*`(\w+)")
_KEYS = frozenset({"from", *Recurrence.model_fields}) - {"start_from"}
