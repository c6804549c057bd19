"""Texts to supervisors about a participant's alerts, at most one batch per window and
severity (pure).

An alert text names the participant by id only (never their phone number or their words) and
says where to read the transcript. Every `alert.raised` stays recorded whatever the limit: the
limit only keeps a supervisor's phone from being flooded about one participant, and it
applies within a severity: a text about warnings never holds back a later crisis (critical).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.channel import outbound
from bot.conversation.memory import Memory
from bot.core.config import ConfigError, Settings
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import MessageQueued
from bot.store.events import Event

log = logging.getLogger(__name__)

DEFAULT_WINDOW = timedelta(minutes=30)


def check_supervisor_route(settings: Settings) -> None:
    """Refuse a production start (MESSENGER=twilio) with nobody to text about a crisis, unless
    SUPERVISOR_PHONES=none says so explicitly; then warn at every start."""
    if settings.supervisor_phones or settings.messenger != "twilio":
        return
    if settings.supervisors_declined:
        log.warning(
            "SUPERVISOR_PHONES=none: crisis alerts are recorded but texted to nobody, and the "
            "safety reply does not say the study team was alerted"
        )
        return
    raise ConfigError(
        [
            "SUPERVISOR_PHONES: MESSENGER=twilio needs at least one supervisor phone to text "
            "about crisis alerts (or SUPERVISOR_PHONES=none to run without, knowingly)"
        ]
    )


MAX_SUMMARY = 400
_SEVERITY = {"info": 0, "warning": 1, "critical": 2}


def short_code(alert_id: str) -> str:
    """The 4-digit code a supervisor replies with ("ACK 4821"), derived from the alert's id so
    that nothing new is stored; two open alerts sharing one is answered as ambiguous."""
    return str(1000 + int(hashlib.sha256(alert_id.encode()).hexdigest(), 16) % 9000)


def last_texted(history: Sequence[Event]) -> dict[str, datetime]:
    """Severity -> when supervisors were last texted about this participant about an alert of
    that severity (the most severe the text was about), from their stream's history."""
    times: dict[str, datetime] = {}
    for ev in history:
        data = ev.data
        if isinstance(data, MessageQueued) and data.kind == "alert" and not data.to_participant:
            severity = data.alert_severity or "info"
            times[severity] = max(times.get(severity, ev.occurred_at), ev.occurred_at)
    return times


def alert_texts(
    alerts: Sequence[AlertRaised],
    participant_id: str,
    supervisors: Sequence[str],
    history: Sequence[Event],
    now: datetime,
    *,
    window: timedelta = DEFAULT_WINDOW,
    base_url: str | None = None,
    memory: Memory | None = None,
) -> list[MessageQueued]:
    """One text per supervisor about the alerts that ask for them, unless supervisors were
    texted about this participant within `window` about an alert at least as severe as the
    most severe of these (then nothing: the alerts stay recorded)."""
    wanted = [a for a in alerts if a.notify_supervisors]
    if not wanted or not supervisors:
        return []
    severity = max((a.severity for a in wanted), key=lambda s: _SEVERITY.get(s, 0))
    if severity == "review":
        return []  # a review item is read in the console's queue, never texted
    texted = memory.texted_by_severity() if memory is not None else last_texted(history)
    if any(
        _SEVERITY.get(s, 0) >= _SEVERITY[severity] and now - at < window for s, at in texted.items()
    ):
        return []
    body = alert_body(wanted, participant_id, base_url)
    return [
        message
        for phone in supervisors
        for message in outbound.to_address(
            phone, "sms", body, kind="alert", alert_severity=severity
        )
    ]


def alert_body(alerts: Sequence[AlertRaised], participant_id: str, base_url: str | None) -> str:
    """The text: the most severe first, each alert's kind and summary, where to look."""
    ordered = sorted(alerts, key=lambda a: -_SEVERITY.get(a.severity, 0))
    lines = [f"Tandem alert about participant {participant_id}:"]
    for alert in ordered:
        summary = alert.summary[:MAX_SUMMARY]
        lines.append(f"- {alert.kind} ({alert.severity}): {summary}")
        lines.append(f"  Reply ACK {short_code(alert.alert_id)} to take it on.")
    path = f"/conversation/participants/{participant_id}/messages"
    lines.append(f"Transcript: tandem events --participant {participant_id}")
    lines.append(f"API: GET {(base_url or '').rstrip('/')}{path}")
    return "\n".join(lines)
