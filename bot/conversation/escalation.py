"""Escalation of an alert nobody acknowledged: the durable timer set when supervisors are
alerted, and what it does when it fires (pure).

The timer is an ordinary durable timer (`alert_escalation`), so it survives restarts and
fires however late. When it fires, an alert acknowledged or resolved meanwhile is left alone;
otherwise its text goes again to the supervisors and to ESCALATION_PHONES, marked as escalated,
with no phone number or message text in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from bot.channel import outbound
from bot.conversation.supervisors import alert_body
from bot.conversation.timer_turns import FiredTimer, Handler
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import EventData
from bot.timers import one_shot

KIND = "alert_escalation"


def escalation_timers(
    participant: Mapping[str, Any], alerts: Sequence[AlertRaised], after: timedelta, now: datetime
) -> list[TimerScheduled]:
    """One timer per alert that asks for supervisors; none when escalation is off."""
    if after <= timedelta(0):
        return []
    return [
        one_shot.scheduled(
            participant, KIND, now + after, scope="alert", payload={"alert_id": a.alert_id}
        )
        for a in alerts
        if a.notify_supervisors
    ]


def escalation_handler(
    supervisors_of: Callable[[Mapping[str, Any]], Sequence[str]],
    escalation: Sequence[str],
    minutes: float,
    base_url: str | None,
) -> Handler:
    """The handler of fired `alert_escalation` timers, wired by the composition root."""

    def escalate(fired: FiredTimer) -> list[EventData]:
        alert_id = str(fired.payload.get("alert_id") or "")
        found = fired.memory.alert(alert_id)
        raised, closed = found if found is not None else (None, False)
        if raised is None:
            return [fired.skipped("no such alert")]
        if closed:
            return [fired.skipped("acknowledged")]
        phones = list(dict.fromkeys([*supervisors_of(fired.participant), *escalation]))
        if not phones:
            return [fired.skipped("no supervisor or escalation phone")]
        pid = str(fired.participant["participant_id"])
        body = f"ESCALATED: not acknowledged within {minutes:g} minutes.\n" + alert_body(
            [raised], pid, base_url
        )
        return [m for phone in phones for m in outbound.to_address(phone, "sms", body, "alert")]

    return escalate
