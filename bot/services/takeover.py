"""Takeover: a staff member pauses the bot for one participant, writes to them, hands back.

While a takeover is active the worker leaves the participant's work items pending (the bot's
turns wait); a staff message goes through the same outbox as the bot's, so the dispatcher
applies opt-out and the WhatsApp window to it, and quiet hours are checked here before one is
queued. Each act decides under the participant's lock (`participant_lock.change`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.channel import outbound
from bot.core.localtime import QuietHours
from bot.reporting.transcript import zone
from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.takeover import QuietHoursOverridden, TakeoverEnded, TakeoverStarted
from bot.store.events import EventData
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


def hand_back(store: EventStore, participant_id: str, *, actor: str) -> dict[str, Any]:
    """Give the conversation back to the bot, which takes up its waiting turns."""

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        held = participant_lock.takeover_of(store, tx, participant_id)
        if held is None or held["status"] != "active":
            raise Refused(
                "The bot already has this conversation; nothing to hand back.", kind="conflict"
            )
        return [TakeoverEnded(by=actor)]

    return participant_lock.change(store, participant_id, decide, actor=actor)[0]


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
