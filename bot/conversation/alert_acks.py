"""A supervisor's SMS about an alert: "ACK 4821" acknowledges it; anything else gets a short
answer and changes nothing (pure).

Only numbers in the supervisor lists reach this module (the webhook checks); a stranger's
message is an unknown sender's like any other. The SMS and the answer are recorded on the
system stream (a supervisor is not a participant: their words must never start a participant's
turn); the acknowledgement goes on the alert's own stream, in the same transaction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.channel import outbound
from bot.channel.inbound import Append, Inbound
from bot.conversation.supervisors import short_code
from bot.store.event_types.alerts import AlertAcknowledged
from bot.store.events import SYSTEM_STREAM, participant_stream

_ACK = re.compile(r"\s*ack\s*#?\s*(\d{4})\s*[.!]?\s*", re.IGNORECASE)
HOW = "Reply ACK and the alert's 4-digit code, e.g. ACK 4821."


def supervisor_actor(phone: str) -> str:
    """How a supervisor is named as the actor of what their SMS does."""
    return f"supervisor:{phone}"


def decide(inbound: Inbound, phone: str, alerts: Sequence[Mapping[str, Any]]) -> list[Append]:
    """The appends a supervisor's SMS makes; `alerts` are the alerts not yet resolved."""
    alerts = [
        a for a in alerts if a["severity"] != "review"
    ]  # never texted, cleared in the console
    match = _ACK.fullmatch(inbound.message.body or "")
    acknowledged = None
    if match is None:
        answer = f"Tandem did not understand that. {HOW}"
    else:
        code = match.group(1)
        found = [a for a in alerts if short_code(a["alert_id"]) == code]
        if not found:
            answer = f"No open alert has the code {code}; nothing was changed."
        elif len(found) > 1:
            answer = f"{len(found)} open alerts share the code {code}; use GET /alerts instead."
        elif found[0]["status"] != "open":
            answer = f"Alert {code} was already acknowledged; nothing was changed."
        else:
            acknowledged = found[0]
            answer = f"Alert {code} acknowledged. Thank you."
    record = inbound.message.model_copy(update={"keyword": None})
    reply = outbound.to_address(phone, inbound.sender.channel, answer, kind="notice")
    appends = [Append(SYSTEM_STREAM, [record, *reply], idempotency_key=inbound.message.message_sid)]
    if acknowledged is not None:
        pid = acknowledged["participant_id"]
        stream = participant_stream(pid) if pid else SYSTEM_STREAM
        ack = AlertAcknowledged(
            alert_id=acknowledged["alert_id"], by=supervisor_actor(phone), via="sms"
        )
        appends.append(Append(stream, [ack]))
    return appends
