"""What a message flagged by the crisis screen produces (pure): the alert and the safety reply.

The alert says which rule matched, never the message: supervisors read the transcript where
access is controlled, not in a text message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.channel.outbound import to_participant
from bot.conversation.safety import ScreenResult
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import EventData, new_id

HELPLINE = "{helpline}"


def safety_text(message: str, helpline: str) -> str:
    """SAFETY_MESSAGE with its {helpline} replaced by HELPLINE_TEXT (no other formatting)."""
    return " ".join(message.replace(HELPLINE, helpline.strip()).split())


def crisis_events(
    participant: Mapping[str, Any], screened: ScreenResult, safety_message: str
) -> list[EventData]:
    """`alert.raised` (kind crisis, texts the supervisors) and the safety message."""
    alert = AlertRaised(
        alert_id=new_id(),
        kind="crisis",
        severity="critical",
        rule=screened.rule,
        notify_supervisors=True,
        summary=(
            f"The crisis screen flagged a message (rule {screened.rule}, category "
            f"{screened.category}). The participant was sent the safety message."
        ),
    )
    return [alert, *to_participant(participant, safety_message, kind="notice")]


def continue_note(safety_message: str) -> str:
    """The system note for a turn that still runs after the safety message."""
    return (
        "The safety screen flagged the participant's last message as possible crisis language. "
        f'They have already been sent this message: "{safety_message}" and the study team was '
        "alerted. Reply briefly and with care. Do not repeat that message and do not coach the "
        "habit in this reply."
    )
