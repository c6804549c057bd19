"""The `scheduler` tool: create, list and delete the participant's daily habit prompt.

A habit prompt is a daily schedule of `bot.timers.schedules` (`schedule.created`, then one
chained `daily` timer per occurrence, computed in the participant's timezone), marked with
`payload["purpose"] == "habit_prompt"`; the tool never lists or deletes other schedules (those
of the study protocol). The prompt is sent `prep_minutes` (option, default 10) before the habit
time. A random window draws a new time each day, recorded in that occurrence's payload.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.conversation import memory
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.conversation.working import Working
from bot.core.localtime import (
    QuietHours,
    local_date,
    parse_local_time,
    parse_quiet_hours,
    validate_timezone,
)
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event, EventData
from bot.timers.history import as_scheduled
from bot.timers.one_shot import zone_of
from bot.timers.quiet_hours import for_participant
from bot.timers.schedules import (
    ScheduleView,
    create_daily,
    delete_schedule,
    list_schedules,
    schedule_views,
)

PURPOSE = "habit_prompt"
KIND = "daily"
DEFAULT_PREP_MINUTES = 10
DEFAULT_MAX_SCHEDULES = 1
# Sent by the built-in `daily` handler unless the engine generates a fresh prompt instead.
FALLBACK_TEXT = "Daily habit reminder - it's time for your healthy habit!"
_TIME_LIKE = re.compile(r"\s*\d{1,2}([:.h]\d{2})?\s*([ap]\.?m\.?)?\s*", re.IGNORECASE)
_NO_DISCLOSE = "Do not tell the participant the schedule id."


class Scheduler(BaseModel):
    """Create, list or delete the participant's daily habit prompt. create: type "fixed" sends
    it every day at fixed_time; type "random" at a new random time each day between
    random_start_time and random_end_time (same day). Times are 24-hour HH:MM in the
    participant's own timezone; the prompt goes out a few minutes (the study's preparation
    time) before. Creating replaces the existing daily prompt; creating the same one again
    changes nothing. list shows each prompt's id and when it will next really be sent. delete
    needs the schedule_id from list."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "list", "delete"] = Field(description="What to do.")
    type: Literal["fixed", "random"] | None = Field(None, description="For create.")
    fixed_time: str | None = Field(None, description='HH:MM (24-hour), for type fixed: "09:30".')
    random_start_time: str | None = Field(None, description="HH:MM window start, type random.")
    random_end_time: str | None = Field(None, description="HH:MM window end, after the start.")
    timezone: str | None = Field(
        None, description="Leave null: the participant's timezone is used."
    )
    schedule_id: str | None = Field(None, description="For delete: the id shown by list.")

    @field_validator("action", "type", mode="before")
    @classmethod
    def _lowercase(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("fixed_time", "random_start_time", "random_end_time")
    @classmethod
    def _hh_mm(cls, value: str | None, info: Any) -> str | None:
        if value is None:
            return None
        try:
            return f"{parse_local_time(value.strip()):%H:%M}"
        except ValueError:
            raise ValueError(
                f"{info.field_name} {value!r} is not a 24-hour time HH:MM such as '09:30'"
            ) from None

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            return validate_timezone(value.strip()).key
        except ValueError:
            raise ValueError(
                f"timezone {value!r} is not an IANA timezone name such as 'America/Toronto'; "
                "leave it null to use the participant's timezone"
            ) from None

    @model_validator(mode="after")
    def _fits_the_action(self) -> Scheduler:
        if self.action == "delete" and not (self.schedule_id or "").strip():
            raise ValueError(
                "schedule_id is required for action 'delete'; call the scheduler with action "
                "'list' to see the ids"
            )
        if self.action != "create":
            return self
        if self.type is None:
            raise ValueError(
                "type is required for action 'create': 'fixed' (with fixed_time) or 'random' "
                "(with random_start_time and random_end_time)"
            )
        if self.type == "fixed":
            _require(self, ["fixed_time"], ["random_start_time", "random_end_time"])
        else:
            _require(self, ["random_start_time", "random_end_time"], ["fixed_time"])
            start, end = self.random_start_time, self.random_end_time
            if end <= start:  # type: ignore[operator]  # both set: checked just above
                raise ValueError(
                    f"random_end_time ({end}) must be after random_start_time ({start}): a "
                    "window lies within one day (windows across midnight are not supported)"
                )
        return self


def _require(args: Scheduler, needed: list[str], unused: list[str]) -> None:
    missing = [f for f in needed if getattr(args, f) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ValueError(f"{' and '.join(missing)} {verb} required for type '{args.type}'")
    extra = [f for f in unused if getattr(args, f) is not None]
    if extra:
        raise ValueError(f"{', '.join(extra)} must be null for type '{args.type}'")


def run(args: Scheduler, ctx: ToolContext) -> ToolOutcome:
    """Create, list or delete; failures name what was wrong."""
    if args.action == "list":
        return _list(ctx)
    if args.action == "delete":
        return _delete(str(args.schedule_id).strip(), ctx)
    zone = zone_of(ctx.participant).key
    if args.timezone is not None and args.timezone != zone:
        return _failed(
            "create",
            f"timezone {args.timezone} differs from the participant's timezone {zone}: "
            f"schedules follow the participant's timezone. Give the time as {zone} local time "
            "and leave timezone null (the study team can change the participant's timezone).",
        )
    try:
        prep, limit = _options(ctx)
    except ValueError as problem:
        return _failed("create", str(problem))
    return _create(args, ctx, prep, limit)


def _create(args: Scheduler, ctx: ToolContext, prep: int, limit: int) -> ToolOutcome:
    if args.type == "fixed":
        habit, when = str(args.fixed_time), _earlier(str(args.fixed_time), prep)
    else:
        start, end = str(args.random_start_time), str(args.random_end_time)
        habit, when = f"{start}-{end}", f"{_earlier(start, prep)}-{_earlier(end, prep)}"
    existing = _habit_views(ctx)
    wanted = (args.type, habit, prep)
    same = [v for v in existing if _key(v) == wanted]
    if same:
        return ToolOutcome(
            True, f"Already scheduled, nothing changed: {_describe(same[0], ctx)} {_NO_DISCLOSE}"
        )
    replaced = existing[: max(0, len(existing) - limit + 1)]
    events: list[EventData] = []
    for old in replaced:
        events += delete_schedule(old.schedule_id, _pending(ctx), reason="replaced")
    payload = {
        "purpose": PURPOSE,
        "type": args.type,
        "habit_time": habit,
        "prep_minutes": prep,
        "text": FALLBACK_TEXT,
    }
    schedule_id = f"sched_{secrets.token_hex(8)}"
    events += create_daily(ctx.participant, when, KIND, payload, ctx.now, schedule_id=schedule_id)
    view = next(v for v in _habit_views(ctx, events) if v.schedule_id == schedule_id)
    first = next(e for e in events if isinstance(e, TimerScheduled))
    lead = "".join(
        f"Replaced the previous daily prompt {old.schedule_id} ({_what(old, ctx)}). "
        for old in replaced
    )
    return ToolOutcome(
        True,
        f"{lead}Created daily prompt {_describe(view, ctx)} "
        f"The first prompt is {_day_word(first, ctx)}. {_NO_DISCLOSE}",
        events,
    )


def _list(ctx: ToolContext) -> ToolOutcome:
    views = _habit_views(ctx)
    if not views:
        return ToolOutcome(True, "No daily prompt is scheduled. Use action 'create' to set one.")
    lines = [f"{n}. {_describe(view, ctx)}" for n, view in enumerate(views, start=1)]
    return ToolOutcome(True, "\n".join([f"Daily prompts ({len(views)}):", *lines, _NO_DISCLOSE]))


def _delete(schedule_id: str, ctx: ToolContext) -> ToolOutcome:
    live = {v.schedule_id: v for v in _views(ctx)}
    view = live.get(schedule_id)
    if view is None and _TIME_LIKE.fullmatch(schedule_id):
        return _failed(
            "delete",
            f"'{schedule_id}' looks like a time, not a schedule id; call the scheduler with "
            "action 'list' to find the id (it starts with 'sched_')",
        )
    if view is None:
        return _failed(
            "delete",
            f"no schedule with id '{schedule_id}'; call the scheduler with action 'list' to "
            "see the ids",
        )
    if view.payload.get("purpose") != PURPOSE:
        return _failed(
            "delete",
            f"schedule '{schedule_id}' is part of the study protocol, not a daily habit prompt; "
            "it cannot be deleted here",
        )
    return ToolOutcome(
        True,
        f"Deleted daily prompt {view.schedule_id} ({_what(view, ctx)}). No more prompts will "
        "be sent for it.",
        delete_schedule(schedule_id, _pending(ctx)),
    )


def _views(ctx: ToolContext, proposed: Sequence[EventData] = ()) -> list[ScheduleView]:
    """Live schedules as the stream says, with `proposed` events as if already appended."""
    if memory.of(ctx.participant) is not None:  # a turn: its memory and pending timers
        working = Working(ctx.participant, ctx.history, ctx.now, ctx.pending_timers)
        working.add(proposed)
        return schedule_views(
            working.memory.live_schedules(),
            as_scheduled(working.pending_timers()),
            ctx.participant,
            _quiet_hours(ctx),
        )
    events = list(ctx.history)
    base = events[-1].seq if events else 0
    stream_id = events[-1].stream_id if events else ""
    for n, data in enumerate(proposed, start=1):
        events.append(Event(base + n, "", stream_id, base + n, data, {}, None, ctx.now, ctx.now))
    return list_schedules(events, ctx.participant, _quiet_hours(ctx))


def _habit_views(ctx: ToolContext, proposed: Sequence[EventData] = ()) -> list[ScheduleView]:
    return [v for v in _views(ctx, proposed) if v.payload.get("purpose") == PURPOSE]


def _key(view: ScheduleView) -> tuple[Any, ...]:
    """What makes two habit schedules the same: type, habit time and preparation time."""
    return tuple(view.payload.get(k) for k in ("type", "habit_time", "prep_minutes"))


def _what(view: ScheduleView, ctx: ToolContext) -> str:
    """The habit time of a schedule and how early the prompt goes out."""
    zone = zone_of(ctx.participant).key
    prep, habit = view.payload.get("prep_minutes", 0), view.payload.get("habit_time", view.when)
    if view.payload.get("type") == "random":
        start, end = str(habit).split("-")
        what = f"habit time drawn at random each day between {start} and {end} {zone}"
    else:
        what = f"habit time {habit} {zone}"
    return f"{what}, prompt sent {prep} minutes before"


def _describe(view: ScheduleView, ctx: ToolContext) -> str:
    """One schedule, and when its next prompt will really be sent (local and UTC)."""
    text = f"{view.schedule_id}: {_what(view, ctx)}."
    if view.fires_at is None:
        return f"{text} Next prompt: none ({view.note})."
    local = view.fires_at.astimezone(zone_of(ctx.participant))
    nxt = f"{local:%a %Y-%m-%d %H:%M %Z} ({view.fires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
    return f"{text} Next prompt: {nxt}" + (f", {view.note}." if view.note else ".")


def _pending(ctx: ToolContext) -> list[Mapping[str, Any]]:
    return [t for t in ctx.pending_timers if t.get("status", "scheduled") == "scheduled"]


def _day_word(first: TimerScheduled, ctx: ToolContext) -> str:
    zone = zone_of(ctx.participant)
    gap = (local_date(first.due_at, zone) - local_date(ctx.now, zone)).days
    return {0: "today", 1: "tomorrow"}.get(gap, f"on {local_date(first.due_at, zone)}")


def _earlier(hh_mm: str, minutes: int) -> str:
    """The wall-clock time `minutes` before `hh_mm` (wrapping past midnight)."""
    at = datetime.combine(date(2000, 1, 1), parse_local_time(hh_mm))
    return f"{at - timedelta(minutes=minutes):%H:%M}"


def _quiet_hours(ctx: ToolContext) -> QuietHours | None:
    default = ctx.options.get("quiet_hours")
    if isinstance(default, str):
        default = parse_quiet_hours(default)
    return for_participant(ctx.participant, default)


def _options(ctx: ToolContext) -> tuple[int, int]:
    """The study's prep_minutes and max_schedules; ValueError names a bad one."""
    values = []
    for name, default, low, high in (
        ("prep_minutes", DEFAULT_PREP_MINUTES, 0, 720),
        ("max_schedules", DEFAULT_MAX_SCHEDULES, 1, 24),
    ):
        value = ctx.options.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(
                f"the study option {name} must be a whole number from {low} to {high}, "
                f"got {value!r}"
            )
        values.append(value)
    return values[0], values[1]


def _failed(action: str, message: str) -> ToolOutcome:
    return ToolOutcome(False, f"scheduler {action} failed: {message}")


TOOL = ToolSpec(name="scheduler", arguments=Scheduler, run=run)
