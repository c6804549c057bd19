"""What a message flagged by the crisis screen produces (pure): the alert and the safety reply.

The alert's summary says which rule matched, never the message; the turn adds the message as
the sealed `quote` (bot.conversation.flow). Supervisors read it where access is controlled,
never in a text message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.channel.outbound import to_participant
from bot.conversation.safety import ScreenResult
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import MessageQueued
from bot.store.events import EventData, new_id

HELPLINE = "{helpline}"
ALERTED = "{alerted}"
ALERTED_TEXT = "Your message has been flagged to the study team."
# Which line of detection raised the alert, by the rule it names (bot.conversation.classifier).
_SPACES = re.compile(r"[ \t]{2,}")
_LINES = {
    "classifier": "The second-line LLM classifier",
    "learned": "The learned offline classifier",
}


def safety_text(message: str, helpline: str, alerted: bool) -> str:
    """SAFETY_MESSAGE with {helpline} replaced by HELPLINE_TEXT and {alerted} by ALERTED_TEXT
    when someone is there to be alerted (else by nothing): the reply never claims a team was
    told when no supervisor route exists. No other formatting."""
    text = message.replace(HELPLINE, helpline.strip())
    return " ".join(text.replace(ALERTED, ALERTED_TEXT if alerted else "").split())


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
            f"{_LINES.get(str(screened.rule), 'The crisis screen')} flagged a message (rule "
            f"{screened.rule}, category {screened.category}). The participant was sent the "
            "safety message."
        ),
    )
    return [alert, *to_participant(participant, safety_message, kind="notice")]


def continue_note(safety_message: str, alerted: bool) -> str:
    """The system note for a turn that still runs after the safety message."""
    team = (
        "the study team was alerted"
        if alerted
        else "nobody on the study team could be alerted, so do not say they were"
    )
    return (
        "The safety screen flagged the participant's last message as possible crisis language. "
        f'They have already been sent this message: "{safety_message}" and {team}. '
        "Reply briefly and with care. Do not repeat that message and do not coach the "
        "habit in this reply."
    )


def honest_messages(events: Sequence[EventData], alerted: bool) -> list[EventData]:
    """The turn's messages to the participant with {alerted} (in an intervention's `say:` text,
    say) replaced as in the safety reply: ALERTED_TEXT only when a supervisor route exists."""
    said = ALERTED_TEXT if alerted else ""
    return [
        e.model_copy(update={"body": _SPACES.sub(" ", e.body.replace(ALERTED, said)).strip()})
        if isinstance(e, MessageQueued) and e.to_participant and e.body and ALERTED in e.body
        else e
        for e in events
    ]
