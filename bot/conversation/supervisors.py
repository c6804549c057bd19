"""Texts to supervisors about a participant's alerts, at most one batch per window (pure).

An alert text names the participant by id only (never their phone number or their words) and
says where to read the transcript. Every `alert.raised` stays recorded whatever the limit: the
limit only keeps a supervisor's phone from being flooded about one participant.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.channel import outbound
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import MessageQueued
from bot.store.events import Event

DEFAULT_WINDOW = timedelta(minutes=30)
MAX_SUMMARY = 400
_SEVERITY = {"info": 0, "warning": 1, "critical": 2}


def last_texted(history: Sequence[Event]) -> datetime | None:
    """When supervisors were last texted about this participant (their stream's history)."""
    times = [
        ev.occurred_at
        for ev in history
        if isinstance(ev.data, MessageQueued)
        and ev.data.kind == "alert"
        and not ev.data.to_participant
    ]
    return max(times) if times else None


def alert_texts(
    alerts: Sequence[AlertRaised],
    participant_id: str,
    supervisors: Sequence[str],
    history: Sequence[Event],
    now: datetime,
    *,
    window: timedelta = DEFAULT_WINDOW,
    base_url: str | None = None,
) -> list[MessageQueued]:
    """One text per supervisor about the alerts that ask for them, unless supervisors were
    texted about this participant within `window` (then nothing: the alerts stay recorded)."""
    wanted = [a for a in alerts if a.notify_supervisors]
    if not wanted or not supervisors:
        return []
    last = last_texted(history)
    if last is not None and now - last < window:
        return []
    body = alert_body(wanted, participant_id, base_url)
    return [
        message
        for phone in supervisors
        for message in outbound.to_address(phone, "sms", body, kind="alert")
    ]


def alert_body(alerts: Sequence[AlertRaised], participant_id: str, base_url: str | None) -> str:
    """The text: the most severe first, each alert's kind and summary, where to look."""
    ordered = sorted(alerts, key=lambda a: -_SEVERITY.get(a.severity, 0))
    lines = [f"Tandem alert about participant {participant_id}:"]
    for alert in ordered:
        summary = alert.summary[:MAX_SUMMARY]
        lines.append(f"- {alert.kind} ({alert.severity}): {summary}")
    path = f"/conversation/participants/{participant_id}/messages"
    lines.append(f"Transcript: tandem events --participant {participant_id}")
    lines.append(f"API: GET {(base_url or '').rstrip('/')}{path}")
    return "\n".join(lines)
