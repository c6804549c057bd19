"""Daily schedules as chained one-shot timers: create, delete, list, chain and re-arm (pure).

A schedule ("09:00", or a window "09:00-12:00") lives in `schedule.created`/`schedule.deleted`
events; each occurrence is a `timer.scheduled` whose payload carries the schedule (so the next
occurrence can be computed from the timer alone), the local date it belongs to and, for a
window, the draw in [0, 1) that placed it. Times follow `bot.core.localtime`'s DST rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.localtime import QuietHours, clock_reaches, local_date, to_utc
from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted, When, parse_when
from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.store.events import EventData, new_id
from bot.timers import history
from bot.timers.kinds import policy_for
from bot.timers.one_shot import scheduled, zone_of

_OCCURRENCE_KEYS = ("schedule_id", "when", "local_date", "draw")
_MICROSECOND = timedelta(microseconds=1)


def draw_for(schedule_id: str, day: date) -> float:
    """A uniform draw in [0, 1) for one schedule on one local date: unpredictable without the
    schedule's random id, yet the same on every computation (so re-arming is idempotent)."""
    digest = hashlib.sha256(f"{schedule_id}:{day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def occurrence(when: When, day: date, tz: ZoneInfo, draw: float) -> datetime | None:
    """The UTC instant of the occurrence on local date `day` (None: its window does not exist).

    A fixed time uses `to_utc` (a time in a DST gap moves forward, an ambiguous one is its first
    occurrence). A window runs from `clock_reaches(day, start)` to `clock_reaches(end)` on `day`
    or the next day if it crosses midnight, and the instant is start + floor(draw x length), as
    in `bot.core.localtime.random_daily`.
    """
    if when.at is not None:
        return to_utc(day, when.at, tz)
    assert when.window is not None
    start_time, end_time = when.window
    start = clock_reaches(day, start_time, tz)
    end = clock_reaches(day + timedelta(days=int(end_time < start_time)), end_time, tz)
    length = (end - start) // _MICROSECOND
    if length <= 0:
        return None
    return start + int(draw * length) * _MICROSECOND


def first_after(
    schedule_id: str,
    when: When,
    tz: ZoneInfo,
    after: datetime,
    from_day: date | None = None,
    draw: float | None = None,
) -> tuple[date, datetime, float]:
    """The earliest occurrence strictly after `after`, on `from_day` or later."""
    day = local_date(after, tz) - timedelta(days=1)
    if from_day is not None and from_day > day:
        day = from_day
    for _ in range(8):
        chosen = draw if draw is not None else draw_for(schedule_id, day)
        instant = occurrence(when, day, tz, chosen)
        if instant is not None and instant > after:
            return day, instant, chosen
        day += timedelta(days=1)
    raise ValueError(f"no occurrence of {when} in {tz.key} within a week after {after}")


def occurrence_timer(
    participant: Mapping[str, Any],
    schedule: ScheduleCreated,
    after: datetime,
    from_day: date | None = None,
    draw: float | None = None,
) -> TimerScheduled:
    """The `timer.scheduled` of the schedule's first occurrence after `after`."""
    when = parse_when(schedule.when)
    day, instant, chosen = first_after(
        schedule.schedule_id, when, zone_of(participant), after, from_day, draw
    )
    payload = {
        **schedule.payload,
        "schedule_id": schedule.schedule_id,
        "when": schedule.when,
        "local_date": day.isoformat(),
        "draw": chosen if when.window is not None else None,
    }
    return scheduled(
        participant, schedule.kind, instant, scope=schedule.schedule_id, payload=payload
    )


def create_daily(
    participant: Mapping[str, Any],
    when: str,
    kind: str,
    payload: Mapping[str, Any],
    now: datetime,
    draw: float | None = None,
    *,
    schedule_id: str | None = None,
) -> list[EventData]:
    """A new schedule and its first occurrence. `when` is "HH:MM" or "HH:MM-HH:MM"; `kind` is
    "daily" (payload: text, optional reminder {after_minutes, text}) or "measurement" (payload:
    measurement, text, answer_minutes). `draw` fixes the first window draw (tests)."""
    schedule = ScheduleCreated(
        schedule_id=schedule_id or new_id(),
        kind=kind,
        when=when,
        payload=dict(payload),
    )
    return [schedule, occurrence_timer(participant, schedule, now, draw=draw)]


def delete_schedule(
    schedule_id: str, pending_timers: Sequence[Mapping[str, Any]], reason: str = "deleted"
) -> list[EventData]:
    """`schedule.deleted` and the cancellation of its pending occurrence."""
    cancelled: list[EventData] = [
        TimerCancelled(timer_id=t["timer_id"], reason=f"schedule {reason}")
        for t in pending_timers
        if (t.get("payload") or {}).get("schedule_id") == schedule_id
    ]
    return [ScheduleDeleted(schedule_id=schedule_id, reason=reason), *cancelled]


def schedule_of(timer: Mapping[str, Any]) -> ScheduleCreated | None:
    """The schedule an occurrence timer (a timers row) belongs to, rebuilt from its payload."""
    payload = timer.get("payload") or {}
    if not payload.get("schedule_id"):
        return None
    return ScheduleCreated(
        schedule_id=payload["schedule_id"],
        kind=timer["kind"],
        when=payload["when"],
        payload={k: v for k, v in payload.items() if k not in _OCCURRENCE_KEYS},
    )


def next_occurrence(
    timer: Mapping[str, Any], participant: Mapping[str, Any], now: datetime
) -> TimerScheduled | None:
    """The occurrence after this one (a timers row), in the participant's current timezone;
    days wholly in the past are not scheduled (a long outage resumes at the next one)."""
    schedule = schedule_of(timer)
    if schedule is None:
        return None
    last_day = date.fromisoformat(timer["payload"]["local_date"])
    after = max(now, timer["due_at"])
    return occurrence_timer(participant, schedule, after, from_day=last_day + timedelta(days=1))


def rearm(
    participant: Mapping[str, Any],
    events: Sequence[Any],
    pending_timers: Sequence[Mapping[str, Any]],
    now: datetime,
) -> list[EventData]:
    """The next occurrence of every live schedule that has no pending occurrence."""
    armed = {(t.get("payload") or {}).get("schedule_id") for t in pending_timers}
    return [
        occurrence_timer(participant, schedule, now)
        for schedule_id, schedule in history.live_schedules(events).items()
        if schedule_id not in armed
    ]


@dataclass(frozen=True)
class ScheduleView:
    """A live schedule and what will really happen next."""

    schedule_id: str
    kind: str
    when: str
    payload: dict[str, Any]
    next_timer_id: str | None
    next_due_at: datetime | None
    fires_at: datetime | None
    note: str | None


def list_schedules(
    events: Sequence[Any],
    participant: Mapping[str, Any] | None = None,
    quiet_hours: QuietHours | None = None,
) -> list[ScheduleView]:
    """The live schedules, each with its pending occurrence and when it will really act: moved
    by quiet hours, or not at all while the participant is paused or opted out."""
    return schedule_views(
        history.live_schedules(events), history.pending_timers(events), participant, quiet_hours
    )


def schedule_views(
    live: Mapping[str, ScheduleCreated],
    pending: Mapping[str, TimerScheduled],
    participant: Mapping[str, Any] | None = None,
    quiet_hours: QuietHours | None = None,
) -> list[ScheduleView]:
    """`list_schedules` from the live schedules and pending timers already at hand (a turn's
    memory and the timers table)."""
    views = []
    for schedule_id, schedule in live.items():
        nxt = min(
            (t for t in pending.values() if t.payload.get("schedule_id") == schedule_id),
            key=lambda t: t.due_at,
            default=None,
        )
        fires_at, note = _what_happens(nxt, schedule.kind, participant, quiet_hours)
        views.append(
            ScheduleView(
                schedule_id=schedule_id,
                kind=schedule.kind,
                when=schedule.when,
                payload=dict(schedule.payload),
                next_timer_id=nxt.timer_id if nxt else None,
                next_due_at=nxt.due_at if nxt else None,
                fires_at=fires_at,
                note=note,
            )
        )
    return views


def _what_happens(
    nxt: TimerScheduled | None,
    kind: str,
    participant: Mapping[str, Any] | None,
    quiet_hours: QuietHours | None,
) -> tuple[datetime | None, str | None]:
    if nxt is None:
        return None, "no occurrence pending (re-armed when the participant resumes)"
    if participant is not None:
        if participant.get("status") != "active":
            return None, f"suppressed while the participant is {participant.get('status')}"
        if participant.get("opted_out"):
            return None, "suppressed while the participant is opted out"
    tz = zone_of(participant or {"timezone": nxt.timezone})
    if quiet_hours is not None and quiet_hours.contains(nxt.due_at, tz):
        if policy_for(kind).quiet_hours == "defer":
            return quiet_hours.end_after(nxt.due_at, tz), "deferred to the end of quiet hours"
        if policy_for(kind).quiet_hours == "skip":
            return None, "will be skipped: due in quiet hours"
    return nxt.due_at, None
