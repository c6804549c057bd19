"""Building `timer.scheduled` events: the generic builder and one per one-shot kind.

Pure: time comes in as `now`, ids are new uuids, nothing is written. The conversation engine
uses these to set timers; the scope each records is what the handler later compares with the
participant's current situation to recognise a stale timer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.core.localtime import fmt_local, validate_timezone
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import new_id


def zone_of(participant: Mapping[str, Any]) -> ZoneInfo:
    """The participant's IANA zone; UTC if the stored name is not a zone (never raises)."""
    try:
        return validate_timezone(participant.get("timezone") or "UTC")
    except ValueError:
        return ZoneInfo("UTC")


def scheduled(
    participant: Mapping[str, Any],
    kind: str,
    due_at: datetime,
    *,
    scope: str = "",
    payload: Mapping[str, Any] | None = None,
    timer_id: str | None = None,
) -> TimerScheduled:
    """A timer of `kind` due at `due_at`, recording the local time it means for the participant."""
    if due_at.tzinfo is None:
        raise ValueError("due_at must be timezone-aware")
    tz = zone_of(participant)
    return TimerScheduled(
        timer_id=timer_id or new_id(),
        kind=kind,
        due_at=due_at.astimezone(UTC),
        scope=scope,
        payload=dict(payload or {}),
        local_time=fmt_local(due_at, tz),
        timezone=tz.key,
    )


def at(
    participant: Mapping[str, Any],
    due_at: datetime,
    text: str,
    *,
    message_kind: str = "notice",
) -> TimerScheduled:
    """Send `text` once at `due_at`."""
    return scheduled(
        participant, "at", due_at, payload={"text": text, "message_kind": message_kind}
    )


def reminder(
    participant: Mapping[str, Any], about: str, after: timedelta, text: str, now: datetime
) -> TimerScheduled:
    """Remind with `text` after `after` unless the participant replies to the message `about`
    (its outbox id: the last part, if the message was split). A newer message of the same kind
    supersedes it."""
    return scheduled(
        participant, "reminder", now + after, scope=about, payload={"about": about, "text": text}
    )


def transition_scope(participant: Mapping[str, Any]) -> str:
    """Where the participant is in the conversation; a transition set elsewhere is stale."""
    return f"{participant.get('conversation_state') or ''}/{participant.get('current_step') or ''}"


def transition(
    participant: Mapping[str, Any],
    to_state: str,
    after: timedelta,
    now: datetime,
    reason: str | None = None,
) -> TimerScheduled:
    """Move the conversation to `to_state` after `after`, if it is still where it is now."""
    return scheduled(
        participant,
        "transition",
        now + after,
        scope=transition_scope(participant),
        payload={"to_state": to_state, "reason": reason},
    )


def measurement(
    participant: Mapping[str, Any],
    due_at: datetime,
    name: str,
    question: str,
    answer_window: timedelta,
) -> TimerScheduled:
    """Ask `question` at `due_at`; without a reply within `answer_window` it is recorded missed."""
    return scheduled(
        participant,
        "measurement",
        due_at,
        scope=name,
        payload={
            "measurement": name,
            "text": question,
            "answer_minutes": answer_window / timedelta(minutes=1),
        },
    )


def instrument(participant: Mapping[str, Any], due_at: datetime, opening: Any) -> TimerScheduled:
    """Start an administration of an instrument at `due_at` (`opening`:
    bot.interventions.language.instrument_port.Opening, its first message)."""
    return scheduled(
        participant,
        "instrument",
        due_at,
        scope=opening.instrument,
        payload={
            "instrument": opening.instrument,
            "text": opening.text,
            "item": opening.item,
            "mode": opening.mode,
            "abandon_minutes": opening.abandon_minutes,
        },
    )


def instrument_abandon(
    participant: Mapping[str, Any], administration_id: str, name: str, due_at: datetime
) -> TimerScheduled:
    """Abandon administration `administration_id` of instrument `name` at `due_at` if nothing
    was answered since (the handler re-arms itself from the last answer otherwise)."""
    return scheduled(
        participant,
        "instrument_abandon",
        due_at,
        scope=administration_id,
        payload={"administration_id": administration_id, "instrument": name},
    )


def asks(timer_kind: str, payload: Mapping[str, Any], name: str) -> bool:
    """Whether a timer is a one-off ask of question `name` (a `measurement` timer of it: an
    occurrence of a daily schedule of the question carries its schedule's id, one of a
    recurring schedule its `series`, and neither is; nor is a decision point's outcome
    question, which carries its point's `decision`: each point asks its own)."""
    return (
        timer_kind == "measurement"
        and payload.get("measurement") == name
        and not payload.get("schedule_id")
        and not payload.get("series")
        and not payload.get("decision")
    )


def measurement_timeout(
    participant: Mapping[str, Any], name: str, about: str, after: timedelta, now: datetime
) -> TimerScheduled:
    """The end of the answer window of measurement `name` asked in message `about`."""
    return scheduled(
        participant,
        "measurement_timeout",
        now + after,
        scope=about,
        payload={"measurement": name, "about": about},
    )
