"""WhatsApp in a simulation: the stand-in template a WhatsApp enrollment needs, the phones that
mark what went out as a template, and the report's check of the 24-hour window.

WhatsApp delivers free-form text only within 24 hours of the participant's last message;
outside it, only an approved template. The engine keeps to this (bot.channel.dispatcher: the
greeting as the template, later messages held or sent as the template, WHATSAPP_OUTSIDE_WINDOW);
the check reads the run's events and counts every free-form WhatsApp message sent more than
24 hours after the participant last wrote (or before they ever did) as a violation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.channel.console import CollectingMessenger
from bot.channel.dispatcher import WHATSAPP_WINDOW
from bot.channel.messenger import OutboundMessage, SendResult
from bot.core.config import Settings
from bot.runtime.routing import intervention_catalogue
from bot.sandbox.session import locate
from bot.store.events import Event

# An approved template's sid for the simulation only (nothing leaves the process).
SIMULATED_TEMPLATE = "HX" + "5e" * 16
TEMPLATE_SENT = "SIMTEMPLATE"  # how the simulated phones' sid marks a template send


def with_template(settings: Settings, target: str) -> Settings:
    """`settings` with a stand-in WHATSAPP_TEMPLATE_SID when neither they nor the intervention
    name a template: a WhatsApp enrollment needs one, and the simulation sends nothing out."""
    root, slug = locate(target)
    catalogue = intervention_catalogue(root)
    own = None if catalogue.problems(slug) else catalogue.whatsapp_template(slug)
    if settings.whatsapp_template_sid or own:
        return settings
    return settings.model_copy(update={"whatsapp_template_sid": SIMULATED_TEMPLATE})


class SimulatedPhones(CollectingMessenger):
    """The simulation's phones: as the chat sandbox's, with a provider sid that says whether
    the message went out as a template (recorded in `message.sent`, read by `check`)."""

    def send(self, message: OutboundMessage) -> SendResult:
        sent = super().send(message)
        if message.content_sid:
            return SendResult(provider_sid=TEMPLATE_SENT + sent.provider_sid, status=sent.status)
        return sent


@dataclass
class Window:
    """One participant's WhatsApp sends: templates, free-form, and free-form out of window."""

    templates: int = 0
    free_form: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)


def check(events: Sequence[Event]) -> Window:
    """Read one participant's events in order: each WhatsApp message sent to their phone is a
    template (queued as one, or sent as one) or free-form; a free-form one sent when their
    last message is more than 24 hours old, or when they never wrote, is a violation."""
    found = Window()
    queued: dict[str, dict[str, Any]] = {}
    last_in = None
    for e in events:
        data = e.data.model_dump()
        if e.event_type == "message.received":
            last_in = e.occurred_at
        elif e.event_type == "message.queued":
            queued[data["outbox_id"]] = data
        elif e.event_type == "message.sent":
            row = queued.get(data["outbox_id"])
            if row is None or row["channel"] != "whatsapp" or not row.get("to_participant", True):
                continue
            if row.get("content_sid") or str(data.get("provider_sid")).startswith(TEMPLATE_SENT):
                found.templates += 1
                continue
            found.free_form += 1
            if last_in is None or e.occurred_at - last_in > WHATSAPP_WINDOW:
                since = "never wrote" if last_in is None else str(e.occurred_at - last_in)
                found.violations.append(
                    {"at": e.occurred_at.isoformat(), "kind": row.get("kind"), "since": since}
                )
    return found
