"""A WhatsApp participant's first message: the greeting, sent as the approved template.

WhatsApp delivers free-form text only within 24 hours of the participant's last message; to
someone who has never written, only an approved template arrives. The greeting of a participant
who has not written yet is therefore queued as the intervention's template (its text as the
template's {{1}}, the full text kept in the transcript); what follows it is held by the
dispatcher until they answer, then sent in order (bot.channel.dispatcher).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.channel.dispatcher import TEMPLATE_TEXT_LIMIT
from bot.store.event_types.messages import MessageQueued
from bot.store.events import EventData


def greeting_as_template(
    events: list[EventData], participant: Mapping[str, Any], template: str | None
) -> list[EventData]:
    """`events` with the participant's greeting queued as `template`, when they are on WhatsApp
    and have never written (nothing changes without a template: the greeting waits, as the
    enrollment's warning said)."""
    if (
        template is None
        or participant.get("channel") != "whatsapp"
        or participant.get("last_inbound_at") is not None
    ):
        return events
    out: list[EventData] = []
    done = False
    for event in events:
        if (
            not done
            and isinstance(event, MessageQueued)
            and event.to_participant
            and event.kind == "greeting"
            and event.content_sid is None
        ):
            event = event.model_copy(
                update={
                    "content_sid": template,
                    "content_variables": {"1": template_text(event.body)},
                }
            )
            done = True
        out.append(event)
    return out


def template_text(body: str | None) -> str:
    """The text as a template variable: WhatsApp refuses new lines, tabs and runs of spaces."""
    text = " ".join((body or "").split())
    if len(text) > TEMPLATE_TEXT_LIMIT:
        text = text[: TEMPLATE_TEXT_LIMIT - 1] + "…"
    return text
