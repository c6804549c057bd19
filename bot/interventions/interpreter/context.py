"""What conditions and templates see (pure): where the participant is, what was judged, noted
and measured, their profile and local time, and `turns()`, the transcript.

Every judgement field, note and question the intervention declares is present from the start
(None, or "" for notes), so a template may print one before it has a value and a misspelt
name is still an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.conversation.memory import remembered
from bot.conversation.transcript_llm import PREFIXES, inbound_text, shown
from bot.interventions.interpreter.forms import forms_data
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.instruments import InstrumentAbandoned, InstrumentCompleted
from bot.store.event_types.interventions import MeasurementRecorded, StepEntered, StepReplied
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.event_types.timers import TimerFired
from bot.store.events import Event
from bot.timers.one_shot import zone_of

ROOTS = (
    "judgements",
    "notes",
    "profile",
    "step",
    "participant",
    "measurements",
    "forms",
    "instruments",
    "answered",
    "abandoned",
    "arm",
)
STEP_KEYS = ("name", "title", "turns", "minutes", "visits")
PARTICIPANT_KEYS: tuple[str, ...]
PARTICIPANT_KEYS = ("name", "local_time", "local_date", "weekday", "hour", "timezone")
PARTICIPANT_KEYS += ("days_enrolled", "turns", "flagged", "minutes_since_prompt", "arm")
NO_MESSAGES = "(no messages yet)"


@dataclass(frozen=True)
class Progress:
    """Where the participant is in the intervention (the participants row's step columns)."""

    step: str | None = None
    turns: int = 0
    entered_at: datetime | None = None
    visits: Mapping[str, int] = field(default_factory=dict)
    stack: Sequence[Mapping[str, Any]] = ()
    total_turns: int = 0
    interrupted_at: Mapping[str, int] = field(default_factory=dict)
    measurements: Mapping[str, Any] = field(default_factory=dict)
    asking: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Progress:
        counters = row.get("step_counters") or {}
        entered = counters.get("entered_at")
        return cls(
            step=row.get("current_step"),
            turns=int(counters.get("turns") or 0),
            entered_at=datetime.fromisoformat(entered) if entered else None,
            visits=dict(counters.get("visits") or {}),
            stack=list(counters.get("stack") or []),
            total_turns=int(counters.get("total_turns") or 0),
            interrupted_at=dict(counters.get("interrupted_at") or {}),
            measurements=dict(counters.get("measurements") or {}),
            asking=counters.get("asking"),
        )

    def minutes(self, now: datetime) -> float:
        if self.entered_at is None:
            return 0.0
        return round((now - self.entered_at).total_seconds() / 60, 2)


def data(
    intervention: Intervention,
    row: Mapping[str, Any],
    now: datetime,
    history: Sequence[Event] = (),
) -> dict[str, Any]:
    """The plain data conditions are evaluated over (and templates see); `participant.flagged`
    comes from the row's memory (bot.conversation.memory), or from `history` (the whole stream)
    for a row without one."""
    progress = Progress.of(row)
    judged = row.get("judgements") or {}
    judgements = {
        slug: {**{name: None for name in judgement.result or {}}, **(judged.get(slug) or {})}
        for slug, judgement in intervention.judgements.items()
    }
    notes = {name: "" for name in intervention.note_names()} | dict(row.get("notes") or {})
    profile = {name: None for name in intervention.profile_fields()}
    profile |= dict(row.get("profile") or {})
    step = intervention.steps.get(progress.step or "")
    measured = {slug: None for slug in intervention.questions} | dict(progress.measurements)
    return {
        "judgements": judgements,
        "notes": notes,
        "profile": profile,
        "step": {
            "name": progress.step,
            "title": step.title if step else None,
            "turns": progress.turns,
            "minutes": progress.minutes(now),
            "visits": progress.visits.get(progress.step or "", 0),
        },
        "participant": {
            **participant(row, now),
            "flagged": remembered(row, history).flagged,
            "minutes_since_prompt": minutes_since_prompt(history, now),
        },
        "measurements": measured,
        "forms": forms_data(intervention, row),
        # the study arm's variables (docs/studies.md), None outside a study
        "arm": intervention.arms.of(row.get("study"), row.get("arm")),
        "instruments": instruments_data(intervention, row, now),
        "answered": answered(intervention, history),
        "abandoned": abandoned(intervention, history),
    }


def instruments_data(
    intervention: Intervention, row: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """`instruments.<name>.last.*` and `.week.*` from the row (each declared name is
    present, none until its first administration but the counts, 0)."""
    if intervention.instruments is None:
        return {}
    stored = (row.get("step_counters") or {}).get("instruments") or {}
    return intervention.instruments.data(stored, now)


def this_turn(history: Sequence[Event]) -> list[Event]:
    """The events since what set off this turn: the last message received or timer fired."""
    start = len(history)
    while start and not isinstance(history[start - 1].data, MessageReceived | TimerFired):
        start -= 1
    return list(history[start:])


def answered(intervention: Intervention, history: Sequence[Event]) -> dict[str, bool]:
    """`answered.<question>`, `answered.<instrument>` and `answered.instrument`: true only
    for what was answered (a measurement recorded, an administration completed) in the turn
    that reads it (after the last message received or timer fired)."""
    found = {slug: False for slug in intervention.questions}
    found |= {name: False for name in intervention.config.instruments}
    found["instrument"] = False
    for event in this_turn(history):
        if isinstance(event.data, MeasurementRecorded) and event.data.measurement in found:
            found[event.data.measurement] = True
        if isinstance(event.data, InstrumentCompleted):
            found[event.data.instrument] = found["instrument"] = True
    return found


def abandoned(intervention: Intervention, history: Sequence[Event]) -> dict[str, bool]:
    """`abandoned.<instrument>` and `abandoned.instrument`: true only in the turn in which an
    administration of it was abandoned on silence (its timer) or after its re-asks; one
    superseded by the next administration is not (that turn runs no transitions)."""
    found = dict.fromkeys((*intervention.config.instruments, "instrument"), False)
    for event in this_turn(history):
        data = event.data
        if isinstance(data, InstrumentAbandoned) and data.reason != "superseded":
            found[data.instrument] = found["instrument"] = True
    return found


def participant(row: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    zone = zone_of(row)
    local = now.astimezone(zone)
    enrolled = row.get("enrolled_at")
    days = (local.date() - enrolled.astimezone(zone).date()).days if enrolled else 0
    counters = row.get("step_counters") or {}
    return {
        "name": row.get("name"),
        "local_time": f"{local:%H:%M}",
        "local_date": f"{local:%A} {local.day} {local:%B %Y}",
        "weekday": f"{local:%A}",
        "hour": local.hour,
        "timezone": zone.key,
        "days_enrolled": days,
        "turns": int(counters.get("total_turns") or 0),  # every step, every visit
        "arm": row.get("arm"),  # the study arm (None outside a study)
    }


NEVER_PROMPTED = (
    10**6
)  # minutes: "long ago", for a participant never prompted (in the loaded events)


def minutes_since_prompt(history: Sequence[Event], now: datetime) -> int:
    """Whole minutes since the last prompt (a message of kind `prompt`: a decision point's
    or a daily prompt's) queued for the participant among `history` (the events a turn
    loads: the recent ones), NEVER_PROMPTED if none."""
    times = [
        ev.occurred_at
        for ev in history
        if isinstance(ev.data, MessageQueued)
        and ev.data.to_participant
        and ev.data.kind == "prompt"
    ]
    return int((now - max(times)).total_seconds() // 60) if times else NEVER_PROMPTED


def flagged(history: Sequence[Event]) -> bool:
    """Whether the crisis screen flagged a message since the intervention last replied: the
    safety message is the last thing the conversation sent."""
    found = False
    for ev in history:
        if isinstance(ev.data, AlertRaised) and ev.data.kind == "crisis":
            found = True
        elif isinstance(ev.data, StepReplied):
            found = False
    return found


@dataclass(frozen=True)
class Line:
    step: str | None
    visit: int
    speaker: str
    text: str


@dataclass(frozen=True)
class Transcript:
    lines: tuple[Line, ...]
    visit: int  # the number of the current visit (step entries so far)


def transcript(
    history: Sequence[Event],
    inbound: Event | None,
    speakers: tuple[str, str],
    *,
    step: str | None = None,
    visit: int = 0,
) -> Transcript:
    """Messages in order, each with the step (and visit) it was said in. Messages received
    after the one being answered are left out; that one belongs to the step answering it.
    `history` may be the last messages only (a turn's window, bot.store.recent): `step` and
    `visit` are then where the window begins."""
    lines: list[Line] = []
    previous, answered = None, None
    for ev in history:
        data = ev.data
        if isinstance(data, StepEntered):
            step, visit = data.step, visit + 1
        elif isinstance(data, MessageReceived):
            if inbound is not None and ev.stream_version > inbound.stream_version:
                continue
            if inbound is not None and ev.event_id == inbound.event_id:
                answered = len(lines)
            lines.append(Line(step, visit, speakers[0], inbound_text(data)))
        elif isinstance(data, MessageQueued) and shown(data):
            body = data.body or ""
            if _continues(previous, ev):
                last = lines[-1]
                lines[-1] = Line(last.step, last.visit, last.speaker, f"{last.text} {body}")
            else:
                lines.append(Line(step, visit, speakers[1], PREFIXES.get(data.kind, "") + body))
        previous = ev
    if answered is not None:
        lines[answered] = Line(step, visit, speakers[0], lines[answered].text)
    return Transcript(tuple(lines), visit)


def _continues(previous: Event | None, ev: Event) -> bool:
    """A later part of one long message split for sending (same kind, same append)."""
    if previous is None or not isinstance(previous.data, MessageQueued):
        return False
    return (
        previous.data.kind == ev.data.kind  # type: ignore[attr-defined]  # callers pass message.queued events
        and previous.recorded_at == ev.recorded_at
        and ev.seq == previous.seq + 1
        and ev.seq > 0
    )


def turns_function(said: Transcript, steps: Sequence[str]) -> Callable[..., str]:
    """`turns(n=None, step=None)`: the last `n` messages, of the current visit (step="current"),
    of one step (by slug), or all; one "SPEAKER: text" line each."""
    lines, visit = said.lines, said.visit

    def turns(n: int | None = None, step: str | None = None) -> str:
        if step not in (None, "current", *steps):
            raise ValueError(f"turns(step={step!r}): no such step; use 'current' or a step slug")
        chosen = [
            line
            for line in lines
            if step is None or (line.visit == visit if step == "current" else line.step == step)
        ]
        if n is not None:
            chosen = chosen[-int(n) :] if int(n) > 0 else []
        return "\n".join(f"{line.speaker}: {line.text}" for line in chosen) or NO_MESSAGES

    return turns
