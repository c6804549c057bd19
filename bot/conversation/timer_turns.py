"""What a fired timer does, per kind: the handlers the worker runs for a `timer` work item.

The worker calls `handle_fired(participant, timer, stream_events, now)` and appends what it
returns (with `work.completed`) in one transaction. A handler only returns events. A fired timer
that turns out not to apply — its prompt was answered, or it is stale (a newer prompt, a deleted
schedule, a conversation that moved on) — ends as `timer.skipped` with the reason, so the timers
row reads "fired at ..., skipped: answered". The conversation engine registers or overrides
kinds with `register`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, get_args

from bot.channel import outbound
from bot.conversation.memory import Memory, remembered
from bot.store.event_types.instruments import InstrumentAbandoned, InstrumentStarted
from bot.store.event_types.messages import MessageKind
from bot.store.event_types.timers import (
    MeasurementAsked,
    MeasurementMissed,
    TimerCancelled,
    TimerScheduled,
    TimerSkipped,
    TransitionRequested,
)
from bot.store.events import Event, EventData
from bot.timers import history, one_shot


@dataclass(frozen=True)
class FiredTimer:
    """What a handler is given: the participant (their row, whose `memory` says what their
    stream holds, bot.conversation.memory), the fired timer (a timers row), the events the turn
    loaded (the last messages) and the participant's pending timers rows (None: folded from
    `events`, for a stream given whole)."""

    participant: Mapping[str, Any]
    timer: Mapping[str, Any]
    events: Sequence[Event]
    now: datetime
    pending: Sequence[Mapping[str, Any]] | None = None

    @property
    def memory(self) -> Memory:
        return remembered(self.participant, self.events)

    def pending_timers(self) -> dict[str, TimerScheduled]:
        """The participant's pending timers, by id."""
        if self.pending is None:
            return history.pending_timers(self.events)
        return history.as_scheduled(self.pending)

    @property
    def timer_id(self) -> str:
        return str(self.timer["timer_id"])

    @property
    def payload(self) -> Mapping[str, Any]:
        return self.timer.get("payload") or {}

    def skipped(self, reason: str) -> TimerSkipped:
        return TimerSkipped(timer_id=self.timer_id, reason=reason)


Handler = Callable[[FiredTimer], list[EventData]]
HANDLERS: dict[str, Handler] = {}
# Kinds whose handler runs whatever the participant's status (decision points record that a
# withdrawn, paused or opted-out participant was unavailable); `register(..., always=True)`.
ALWAYS: set[str] = set()


def register(kind: str, handler: Handler, *, always: bool = False) -> Handler:
    """Make `handler` handle timers of `kind` (replacing the built-in one, if any); with
    `always`, for participants who are not active too."""
    HANDLERS[kind] = handler
    if always:
        ALWAYS.add(kind)
    return handler


def handles(kind: str) -> Callable[[Handler], Handler]:
    def add(handler: Handler) -> Handler:
        return register(kind, handler)

    return add


def handle_fired(
    participant: Mapping[str, Any],
    timer: Mapping[str, Any] | None,
    stream_events: Sequence[Event],
    now: datetime,
    *,
    pending: Sequence[Mapping[str, Any]] | None = None,
) -> list[EventData]:
    """The events a fired timer produces; nothing if the timer is not (or no longer) fired."""
    if timer is None or timer.get("status") != "fired":
        return []
    fired = FiredTimer(participant, timer, stream_events, now, pending)
    if str(timer["kind"]) in ALWAYS and participant.get("status") in (
        "active",
        "paused",
        "withdrawn",
    ):
        return HANDLERS[str(timer["kind"])](fired)
    if participant.get("status") != "active":
        return [fired.skipped(str(participant.get("status")))]
    if participant.get("opted_out"):
        return [fired.skipped("opted_out")]
    handler = HANDLERS.get(str(timer["kind"]))
    if handler is None:
        return [fired.skipped(f"no handler for kind {timer['kind']!r}")]
    return handler(fired)


def _send(fired: FiredTimer, default_kind: str) -> list[EventData]:
    text = fired.payload.get("text")
    if not text:
        return []
    kind = fired.payload.get("message_kind", default_kind)
    if kind not in get_args(MessageKind):
        kind = default_kind
    return list(outbound.to_participant(fired.participant, str(text), kind=kind))


def schedule_gone(fired: FiredTimer) -> list[EventData] | None:
    """For an occurrence of a deleted schedule: skip it and end its chain; else None. Public:
    a handler registered over a built-in kind (the daily habit cycle) checks it too."""
    schedule_id = fired.payload.get("schedule_id")
    if not schedule_id or schedule_id in fired.memory.live_schedules():
        return None
    chain: list[EventData] = [
        TimerCancelled(timer_id=t.timer_id, reason="schedule deleted")
        for t in fired.pending_timers().values()
        if t.payload.get("schedule_id") == schedule_id and t.timer_id != fired.timer_id
    ]
    return [fired.skipped("stale"), *chain]


@handles("at")
def at(fired: FiredTimer) -> list[EventData]:
    """Send the timer's text (if any); a kind for engines that only want a wake-up."""
    return _send(fired, "notice")


@handles("daily")
def daily(fired: FiredTimer) -> list[EventData]:
    """Queue the day's prompt and, if the schedule asks for one, its reminder."""
    gone = schedule_gone(fired)
    if gone is not None:
        return gone
    sent = _send(fired, "prompt")
    rule = fired.payload.get("reminder") or {}
    if sent and rule.get("text"):
        after = timedelta(minutes=float(rule.get("after_minutes", 30)))
        about = sent[-1].outbox_id  # type: ignore[attr-defined]  # _send returns to_participant's MessageQueued events
        sent.append(one_shot.reminder(fired.participant, about, after, rule["text"], fired.now))
    return sent


@handles("reminder")
def reminder(fired: FiredTimer) -> list[EventData]:
    """Queue the reminder unless a newer message of the same kind superseded the one it is
    about ("stale") or the participant replied after it ("answered")."""
    memory = fired.memory
    about = memory.queued(str(fired.payload.get("about", "")))
    version = about[0] if about else memory.scheduled_version(fired.timer_id)
    if about is not None and memory.superseded(version, about[1]):
        return [fired.skipped("stale")]
    if memory.replied_after(version):
        return [fired.skipped("answered")]
    return _send(fired, "reminder")


@handles("transition")
def transition(fired: FiredTimer) -> list[EventData]:
    """Ask the conversation to move on, unless it already moved since the timer was set."""
    if fired.timer.get("scope") != one_shot.transition_scope(fired.participant):
        return [fired.skipped("stale")]
    return [
        TransitionRequested(
            timer_id=fired.timer_id,
            to_state=str(fired.payload["to_state"]),
            reason=fired.payload.get("reason"),
        )
    ]


@handles("measurement")
def measurement(fired: FiredTimer) -> list[EventData]:
    """Ask the question, record that it was asked, and time its answer window."""
    gone = schedule_gone(fired)
    if gone is not None:
        return gone
    name = str(fired.payload.get("measurement") or fired.timer.get("scope") or "measurement")
    if _asked_again(fired, name):
        return [fired.skipped("superseded: asked again")]
    sent = _send(fired, "question")
    if not sent:
        return []
    window = timedelta(minutes=float(fired.payload.get("answer_minutes", 60)))
    outbox_id = sent[-1].outbox_id  # type: ignore[attr-defined]  # _send returns to_participant's MessageQueued events
    return [
        *sent,
        MeasurementAsked(
            measurement=name,
            timer_id=fired.timer_id,
            outbox_id=outbox_id,
            answer_by=fired.now + window,
            decision=fired.payload.get("decision"),
            index=fired.payload.get("index"),
        ),
        one_shot.measurement_timeout(fired.participant, name, outbox_id, window, fired.now),
    ]


def _asked_again(fired: FiredTimer, name: str) -> bool:
    """Whether this one-off ask of question `name` was superseded: another ask of it is
    pending. A step entered again cancels its earlier ask not yet sent
    (bot.interventions.interpreter.actions), but one the scheduler fired while that turn was
    decided is past cancelling (`timer.fired` leaves a turn's decision standing): the newer ask
    sends the question, not both."""
    if not one_shot.asks(str(fired.timer.get("kind")), fired.payload, name):
        return False
    return any(
        one_shot.asks(timer.kind, timer.payload, name)
        for timer_id, timer in fired.pending_timers().items()
        if timer_id != fired.timer_id
    )


@handles("measurement_timeout")
def measurement_timeout(fired: FiredTimer) -> list[EventData]:
    """Record the measurement as missed, unless it was answered after the question.

    Where the answer is checked (a question of an intervention), answered means a
    `measurement.recorded`; replies that were only ever rejected leave it missed. Where
    nothing checks answers, any reply after the question was sent counts; a question never
    sent (held, undelivered) is missed.
    """
    about = str(fired.payload.get("about", ""))
    name = str(fired.payload.get("measurement", ""))
    memory = fired.memory
    asked = memory.queued(about)
    version = asked[0] if asked else memory.scheduled_version(fired.timer_id)
    if asked:
        # Only what came after the question reached the participant can answer it.
        sent = memory.sent_version(about)
        version = sent if sent is not None else int(fired.participant.get("version") or 0) + 1
    verdicts = memory.verdicts_after(name, version)
    if "measurement.recorded" in verdicts:
        return [fired.skipped("answered")]
    if not verdicts and memory.replied_after(version):
        return [fired.skipped("answered")]
    return [
        MeasurementMissed(
            measurement=str(fired.payload.get("measurement", "")),
            timer_id=fired.timer_id,
            outbox_id=about,
        )
    ]


def abandoned(current: Mapping[str, Any], reason: str) -> InstrumentAbandoned:
    """`instrument.abandoned` of the administration in progress (`step_counters.administering`)."""
    return InstrumentAbandoned(
        administration_id=str(current["administration_id"]),
        instrument=str(current["instrument"]),
        number=int(current.get("number") or 1),
        mode=current.get("mode") or "one-per-message",
        started_at=datetime.fromisoformat(str(current["started_at"])),
        reason=reason,
        answers=dict(current.get("answers") or {}),
    )


@handles("instrument")
def instrument(fired: FiredTimer) -> list[EventData]:
    """Send an administration's first message, record that it started (its id is the
    timer's) and time its abandonment on silence; an administration still in progress is
    abandoned ("superseded") first."""
    gone = schedule_gone(fired)
    if gone is not None:
        return gone
    payload = fired.payload
    name = str(payload.get("instrument") or fired.timer.get("scope") or "")
    counters = fired.participant.get("step_counters") or {}
    events: list[EventData] = []
    current = counters.get("administering")
    if current:
        events.append(abandoned(current, "superseded"))
    sent = _send(fired, "question")
    if not sent:
        return [*events, fired.skipped("nothing to send")]
    known = (counters.get("instruments") or {}).get(name) or {}
    minutes = float(payload.get("abandon_minutes") or 120)
    started = InstrumentStarted(
        administration_id=fired.timer_id,
        instrument=name,
        number=int(known.get("number") or 0) + 1,
        mode=payload.get("mode") or "one-per-message",
        item=payload.get("item"),
        outbox_id=sent[-1].outbox_id,  # type: ignore[attr-defined]  # _send returns to_participant's MessageQueued events
        timer_id=fired.timer_id,
        abandon_minutes=minutes,
    )
    due = fired.now + timedelta(minutes=minutes)
    silence = one_shot.instrument_abandon(fired.participant, fired.timer_id, name, due)
    return [*events, *sent, started, silence]


@handles("instrument_abandon")
def instrument_abandon(fired: FiredTimer) -> list[EventData]:
    """Abandon the administration ("silence") if nothing was answered for its
    `abandon_minutes`; one that ended already is "finished", and one answered since is timed
    again from its last answer. The conversation engine then runs the step's transitions
    (`abandoned.<instrument>`), bot.conversation.flow."""
    counters = fired.participant.get("step_counters") or {}
    current = counters.get("administering")
    wanted = str(fired.payload.get("administration_id") or "")
    if not current or str(current.get("administration_id")) != wanted:
        return [fired.skipped("finished")]
    last = datetime.fromisoformat(str(current.get("last_at") or current["started_at"]))
    due = last + timedelta(minutes=float(current.get("abandon_minutes") or 120))
    if fired.now < due:
        name = str(current["instrument"])
        again = one_shot.instrument_abandon(fired.participant, wanted, name, due)
        return [fired.skipped("answered since"), again]
    return [abandoned(current, "silence")]
