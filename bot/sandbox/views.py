"""What `tandem chat` shows: one-line event summaries, /state, /events, /notes, /wait durations."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.store.events import Event

TimerKind = Callable[[str], str]  # timer id -> its kind
UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"(?:\d+[dhms])+")
# Events worth a line in the chat as they happen; messages themselves are shown as you>/bot>.
REMARKED = {
    "state.transitioned",
    "step.entered",
    "judgement.recorded",
    "judgement.failed",
    "note.taken",
    "note.failed",
    "retrieval.done",
    "retrieval.failed",
    "condition.failed",
    "template.failed",
    "measurement.recorded",
    "measurement.rejected",
    "measurement.missed",
    "profile.saved",
    "alert.raised",
    "turn.failed",
    "work.failed",
    "work.parked",
    "timer.scheduled",
    "timer.fired",
    "timer.skipped",
    "timer.deferred",
    "timer.cancelled",
    "message.suppressed",
    "message.deferred",
    "message.failed",
    "form.value_set",
    "form.field_added",
    "form.domain_completed",
    "form.completed",
    "form.rejected",
    "form.failed",
}


def parse_duration(text: str) -> timedelta:
    """ "30s", "15m", "2h", "1d", "1h30m" as a timedelta; ValueError says what is accepted."""
    compact = text.strip().lower().replace(" ", "")
    if not _DURATION.fullmatch(compact):
        raise ValueError(f"{text.strip()!r} is not a duration: write 30s, 15m, 2h, 1d or 1h30m")
    seconds = sum(int(n) * UNITS[unit] for n, unit in re.findall(r"(\d+)([dhms])", compact))
    if not seconds:
        raise ValueError("the duration must be longer than 0")
    return timedelta(seconds=seconds)


def span(delta: timedelta) -> str:
    """A duration as "1d 2h", "45m", "30s"."""
    seconds, parts = int(abs(delta.total_seconds())), list[str]()
    for unit, size in UNITS.items():
        if seconds >= size or (unit == "s" and not parts):
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return " ".join(parts[:2])


def local(instant: datetime | None, zone: ZoneInfo) -> str:
    return f"{instant.astimezone(zone):%a %d %b %H:%M}" if instant else "-"


def _short(value: Any, limit: int = 60) -> str:
    if isinstance(value, datetime):
        value = f"{value:%Y-%m-%d %H:%M} UTC"
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fields(values: Mapping[str, Any], limit: int = 40) -> str:
    shown = {k: v for k, v in values.items() if v not in (None, "", [], {})}
    return ", ".join(f"{k}={_short(v, limit)}" for k, v in shown.items()) or "-"


def describe(event: Event, zone: ZoneInfo, timer_kind: TimerKind) -> str:
    """One line on what an event says (the type is printed beside it)."""
    # Each branch reads the fields of the payload class its event type names: duck-typed on purpose.
    d: Any = event.data
    kind = event.event_type
    if kind == "message.received":
        return f'"{_short(d.body)}"' + (f" (keyword {d.keyword})" if d.keyword else "")
    if kind == "message.queued":
        to = "" if d.to_participant else f" to {d.to_address}"
        return f'{d.kind}{to}: "{_short(d.body or d.content_sid or "")}"'
    if kind == "step.entered":
        how = f"{d.via}: {d.condition}" if d.condition else d.via
        return f"{d.from_step or '-'} → {d.step} ({how})"
    if kind == "step.turn_taken":
        return f"{d.step}, turn {d.turn}"
    if kind == "step.replied":
        return f"{d.step}: " + (f"say #{d.say}" if d.say is not None else f"slots {list(d.slots)}")
    if kind == "state.transitioned":
        return f"{d.from_state} → {d.to_state} ({d.source}" + (
            f": {d.reason})" if d.reason else ")"
        )
    if kind == "timer.scheduled":
        return f"{d.kind} for {local(d.due_at, zone)}"
    if kind.startswith("timer.") and hasattr(d, "timer_id"):
        why = getattr(d, "reason", None)
        when = f" to {local(d.due_at, zone)}" if kind == "timer.deferred" else ""
        return f"{timer_kind(d.timer_id)}{when}" + (f": {why}" if why else "")
    if kind == "llm.called":
        return f"{d.purpose}, {d.model}: " + ("ok" if d.ok else f"failed ({_short(d.error)})")
    if kind in ("judgement.recorded", "note.taken"):
        name, values = (
            (d.judgement, d.result) if kind == "judgement.recorded" else (d.note, d.values)
        )
        return f"{name}: {_fields(values)}"
    if kind == "form.value_set":
        was = f" (was {d.previous!r})" if d.previous is not None else ""
        return f"{d.form}.{d.key} = {d.value!r}{was}"
    if kind == "form.rejected":
        return f"{d.form}: {d.item} {d.key or ''} refused: {_short(d.reason, 90)}"
    if kind == "retrieval.done":
        found = ", ".join(f"{doc.id} ({doc.score:g})" for doc in d.documents) or "no match"
        return f"retrieved.{d.name} from {d.library} ({d.method}): {found}"
    if kind == "turn.failed":
        return f"{_short(d.reason, 90)} (the fallback was sent)"
    if kind == "alert.raised":
        return f"{d.severity}: {_short(d.summary, 90)}"
    dumped = d.model_dump()
    reason = dumped.get("reason") or dumped.get("error") or dumped.get("error_message")
    skip = ("reason", "error", "error_message")
    rest = {k: v for k, v in dumped.items() if not k.endswith("_id") and k not in skip}
    return (f"{_short(reason, 80)}; " if reason else "") + _fields(rest)


def events_view(events: Sequence[Event], zone: ZoneInfo, timer_kind: TimerKind) -> str:
    lines = [
        f"{ev.stream_version:>4}  {local(ev.occurred_at, zone)}  {ev.event_type:<21} "
        f"{describe(ev, zone, timer_kind)}"
        for ev in events
    ]
    return "\n".join(lines) or "(no events)"


def notes_view(row: Mapping[str, Any], failed: Sequence[Event]) -> str:
    notes = row.get("notes") or {}
    lines = [f"notes.{name}: {value}" for name, value in notes.items()]
    lines += [f"note {ev.data.note} failed: {ev.data.reason}" for ev in failed]  # type: ignore[attr-defined]  # `failed` holds note.failed events
    return "\n".join(lines) or "(no notes taken yet)"


def state_view(
    row: Mapping[str, Any],
    timers: Sequence[Mapping[str, Any]],
    now: datetime,
    intervention: str,
    step_title: str | None,
    forms: Mapping[str, str] | None = None,
) -> str:
    """The participant row, readable: where they are, their counters, profile, judgements and
    each form's clock (`forms`: name -> the clock's text)."""
    zone = ZoneInfo(row["timezone"])
    counters = row.get("step_counters") or {}
    flags = [f for f, on in (("opted out", row["opted_out"]), ("debug", row["debug"])) if on]
    lines = [
        f"participant  {row['participant_id']} · {row['phone']} ({row['channel']}) · "
        f"{row['timezone']} · {', '.join([row['status'], *flags])}",
        f"intervention {intervention}",
        f"state        {row['conversation_state']}",
    ]
    if row.get("current_step"):
        entered = counters.get("entered_at")
        since = f" ({span(now - datetime.fromisoformat(entered))} ago)" if entered else ""
        visits = ", ".join(f"{s} {n}" for s, n in (counters.get("visits") or {}).items())
        lines.append(
            f"step         {row['current_step']} ({step_title or '?'}) · turn "
            f"{counters.get('turns', 0)} of this visit · entered "
            f"{local(datetime.fromisoformat(entered), zone) if entered else '-'}{since}"
        )
        lines.append(
            f"counters     visits: {visits or '-'} · turns in all: {counters.get('total_turns', 0)}"
        )
        stack = counters.get("stack") or []
        if stack:
            lines.append("returns to   " + " ← ".join(f"{f['step']}" for f in reversed(stack)))
        asking = counters.get("asking")
        if asking:
            lines.append(f"waiting for  an answer to {asking['measurement']}")
    lines.append(f"profile      {_fields(row.get('profile') or {}, 80)}")
    judged = row.get("judgements") or {}
    lines.append(
        "judgements   " + ("; ".join(f"{j}: {_fields(r, 80)}" for j, r in judged.items()) or "-")
    )
    if counters.get("measurements"):
        lines.append(f"measurements {_fields(counters['measurements'])}")
    for name, text in (forms or {}).items():
        values = ((row.get("forms") or {}).get(name) or {}).get("values") or {}
        lines.append(f"form {name:<7} {_fields(values, 80) or '-'}")
        lines += [f"             {line}" for line in text.splitlines()]
    pending = [
        f"{t['kind']} {local(t['due_at'], zone)} (in {span(t['due_at'] - now)})" for t in timers
    ]
    lines.append("timers       " + (" · ".join(pending) or "none pending"))
    lines.append(f"clock        {now.astimezone(zone):%a %d %b %Y %H:%M} {zone.key}")
    return "\n".join(lines)
