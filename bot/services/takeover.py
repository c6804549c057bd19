"""Takeover: a staff member pauses the bot for one participant, writes to them, hands back.

While a takeover is active the worker leaves the participant's work items pending (the bot's
turns wait); a staff message goes through the same outbox as the bot's, so the dispatcher
applies opt-out and the WhatsApp window to it, and quiet hours are checked here before one is
queued. Each act decides under the participant's lock (`participant_lock.change`).

The hand-back never lets the bot consume a waiting message silently: messages the participant
sent during the takeover that staff did not answer (`waiting_messages`) need a choice —
answer them first (the takeover stays), hand them to the bot (it takes the oldest as its next
turn's input), or mark them handled (the bot resumes without them). Messages staff answered
are settled as `answered`. Each choice is recorded on `takeover.ended` and `message.handled`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from bot.channel import outbound
from bot.core.localtime import QuietHours
from bot.reporting.transcript import zone
from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.event_types.takeover import (
    MessageHandled,
    QuietHoursOverridden,
    TakeoverEnded,
    TakeoverStarted,
)
from bot.store.event_types.work import WorkCompleted
from bot.store.events import Event, EventData, participant_stream
from bot.timers import quiet_hours

MESSAGE_LIMIT = 1600
REASON_LIMIT = 500
ENDED_STATUSES = ("unenrolled", "withdrawn", "erased")


def take_over(
    store: EventStore, participant_id: str, *, actor: str, reason: str | None = None
) -> dict[str, Any]:
    """Pause the bot for the participant, recording who (`actor`) and why; refused while
    someone holds it already or when the participant has left."""

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        held = participant_lock.takeover_of(store, tx, participant_id)
        if held is not None and held["status"] == "active":
            raise Refused(f"Already taken over by {held['started_by']}.", kind="conflict")
        if row["status"] in ENDED_STATUSES:
            raise Refused(
                f"This participant is {row['status']}; there is nothing to take over.",
                kind="conflict",
            )
        given = (reason or "").strip()[:REASON_LIMIT] or None
        return [TakeoverStarted(by=actor, reason=given)]

    return participant_lock.change(store, participant_id, decide, actor=actor)[0]


Choice = Literal["answer", "bot", "handled"]
CHOICES: tuple[Choice, ...] = ("answer", "bot", "handled")


@dataclass(frozen=True)
class Waiting:
    """The current takeover's inbound messages whose turns still wait, oldest first:
    `unanswered` (no staff message after them) and `answered`."""

    unanswered: list[Event]
    answered: list[Event]


@dataclass(frozen=True)
class HandBack:
    """What a hand-back did: whether the bot has the conversation again, the choice taken
    for the unanswered messages, and their ids."""

    handed_back: bool
    waiting: str
    messages: list[str]


def waiting_messages(history: Sequence[Event]) -> Waiting:
    """From the participant's stream: the messages of the takeover in force (none when the
    bot holds the conversation) whose work items are still pending."""
    unanswered: list[Event] = []
    answered: list[Event] = []
    active = False
    for ev in history:
        data = ev.data
        if isinstance(data, TakeoverStarted):
            active, unanswered, answered = True, [], []
        elif isinstance(data, TakeoverEnded):
            active, unanswered, answered = False, [], []
        elif not active:
            continue
        elif isinstance(data, MessageReceived) and not data.keyword:
            unanswered.append(ev)
        elif isinstance(data, MessageQueued) and data.kind == "staff":
            answered, unanswered = answered + unanswered, []
        elif isinstance(data, WorkCompleted | MessageHandled):
            settled = data.work_id if isinstance(data, WorkCompleted) else data.message_id
            unanswered = [e for e in unanswered if e.event_id != settled]
            answered = [e for e in answered if e.event_id != settled]
    return Waiting(unanswered, answered)


def waiting_now(store: EventStore, participant_id: str) -> Waiting:
    """The waiting messages of the participant's takeover in force (none without one)."""
    held = store.projection_row("takeovers", participant_id)
    if held is None or held["status"] != "active":
        return Waiting([], [])
    return waiting_messages(store.load(participant_stream(participant_id)))


def hand_back(
    store: EventStore, participant_id: str, *, actor: str, waiting: str | None = None
) -> HandBack:
    """Give the conversation back to the bot, with the staff member's choice (`waiting`) for
    the messages that wait unanswered: refused without one when there are any; `answer`
    keeps the takeover (nothing recorded); `bot` hands them to the bot in order; `handled`
    settles them so the bot resumes without them. Answered ones are settled either way."""
    if waiting is not None and waiting not in CHOICES:
        raise Refused(
            f"Unknown choice {waiting!r} for the waiting messages; choose one of "
            + ", ".join(CHOICES)
            + ".",
            "waiting",
        )
    outcome: list[HandBack] = []

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        held = participant_lock.takeover_of(store, tx, participant_id)
        if held is None or held["status"] != "active":
            raise Refused(
                "The bot already has this conversation; nothing to hand back.", kind="conflict"
            )
        found = waiting_messages(tx.load(participant_stream(participant_id)))
        ids = [e.event_id for e in found.unanswered]
        if ids and waiting is None:
            n = len(ids)
            raise Refused(
                f"{n} message{'s' if n != 1 else ''} from the participant "
                f"{'wait' if n != 1 else 'waits'} unanswered: answer them yourself first, "
                "hand them to the bot, or mark them handled.",
                "waiting",
                kind="conflict",
            )
        if waiting == "answer":
            outcome.append(HandBack(False, "answer", ids))
            return []
        choice: Literal["none", "bot", "handled"] = (
            "none" if not ids else "bot" if waiting == "bot" else "handled"
        )
        settled: list[EventData] = []
        for ev in found.answered:
            settled += _settle(ev.event_id, actor, "answered")
        for message_id in ids:
            if choice == "handled":
                settled += _settle(message_id, actor, "marked")
            else:
                settled.append(MessageHandled(message_id=message_id, by=actor, how="bot"))
        outcome.append(HandBack(True, choice, ids))
        return [TakeoverEnded(by=actor, waiting=choice, messages=ids), *settled]

    participant_lock.change(store, participant_id, decide, actor=actor)
    return outcome[0]


def _settle(message_id: str, actor: str, how: Literal["marked", "answered"]) -> list[EventData]:
    """The message's waiting turn done without the bot, and the message handled."""
    return [
        WorkCompleted(work_id=message_id, skipped=f"handled by staff ({how})"),
        MessageHandled(message_id=message_id, by=actor, how=how),
    ]


def send_as_staff(
    store: EventStore,
    participant_id: str,
    text: str,
    *,
    actor: str,
    form_token: str,
    now: datetime,
    default_quiet_hours: QuietHours | None,
    quiet_hours_by_intervention: Mapping[str, QuietHours | None],
    crisis_alert_id: str | None = None,
) -> dict[str, Any]:
    """Queue `text` to the participant from the staff member holding the takeover; refused
    outside a takeover, to a participant who left or opted out, and inside their quiet hours
    (their profile's, else their intervention's, else `default_quiet_hours`), except in answer
    to a crisis alert about them (`crisis_alert_id`): a person replying to a crisis is never
    held back by quiet hours, and the override is recorded (`takeover.quiet_hours_overridden`).
    `form_token` makes a resent form a no-op."""
    text = text.strip()
    if not text or len(text) > MESSAGE_LIMIT:
        raise Refused(f"Write a message of 1 to {MESSAGE_LIMIT} characters.", "text")
    if not form_token:
        raise Refused("The form is incomplete; reload the page.")

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        held = participant_lock.takeover_of(store, tx, participant_id)
        if held is None or held["status"] != "active":
            raise Refused(
                "Take the conversation over before writing to the participant.", kind="conflict"
            )
        _check_reachable(row)
        quiet = quiet_hours.for_participant(row, default_quiet_hours, quiet_hours_by_intervention)
        message: list[EventData] = list(outbound.to_participant(row, text, kind="staff"))
        if quiet is None or not quiet.contains(now, zone(row["timezone"])):
            return message
        local = now.astimezone(zone(row["timezone"]))
        if _answers_a_crisis(store, tx, participant_id, crisis_alert_id):
            assert crisis_alert_id is not None and isinstance(message[-1], MessageQueued)
            override = QuietHoursOverridden(
                alert_id=crisis_alert_id,
                outbox_id=message[-1].outbox_id,
                by=actor,
                local_time=f"{local:%H:%M}",
                quiet_hours=f"{quiet.start:%H:%M}-{quiet.end:%H:%M}",
            )
            return [*message, override]
        raise Refused(
            f"It is {local:%H:%M} for the participant, inside their quiet hours "
            f"({quiet.start:%H:%M}-{quiet.end:%H:%M}); the message was not "
            "queued.",
            kind="conflict",
        )

    key = f"staff-message:{form_token}"
    after, _ = participant_lock.change(
        store, participant_id, decide, actor=actor, idempotency_key=key
    )
    return after


def _answers_a_crisis(
    store: EventStore, tx: Transaction, participant_id: str, alert_id: str | None
) -> bool:
    """Whether `alert_id` is a crisis alert about this participant (open or not: a supervisor
    may still be talking the participant through it after acknowledging it)."""
    if alert_id is None:
        return False
    projection = next(p for p in store.projections if p.name == "alerts")
    alert = tx.row(projection, alert_id)
    return (
        alert is not None
        and alert["kind"] == "crisis"
        and (alert["participant_id"] == participant_id)
    )


def _check_reachable(row: Mapping[str, Any]) -> None:
    if row["status"] in ENDED_STATUSES:
        raise Refused(
            f"The participant is {row['status']}; nothing can be sent to them.", kind="conflict"
        )
    if row["opted_out"]:
        raise Refused(
            "The participant has opted out (STOP); nothing can be sent to them.", kind="conflict"
        )
