"""What the flow applies to a participant (one word: "applied", never "settings", which are the
process's own in bot.core.config): a crisis screen, a safety message, supervisors, quiet hours,
model sampling and redaction. The server's own come from its settings; each intervention's own
are built from its configuration (intervention.yaml) by
`bot.interventions.interpreter.applied.AppliedByIntervention`, which the composition root hands
the flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bot.conversation.crisis import safety_text
from bot.conversation.safety import CrisisScreen
from bot.core.config import Settings
from bot.core.model_choice import ModelChoice


@dataclass(frozen=True)
class Applied:
    """What the flow uses for the participants of one intervention."""

    screen: CrisisScreen
    safety_message: str  # {helpline} already replaced by HELPLINE_TEXT
    supervisors: tuple[str, ...]
    quiet_hours: str | None = None  # its own "22:00-08:00", for the tools' wording
    # Its temperature and max_tokens, under a prompt file's own (the model name is per call).
    model: ModelChoice = ModelChoice()
    # Its `redact_for_llm`: phones, e-mails and the participant's name out of LLM requests.
    redact_for_llm: bool = False
    # The approved WhatsApp template (a Content SID, HX...) that carries the greeting to a
    # participant who has not written yet: its own `whatsapp_template`, else WHATSAPP_TEMPLATE_SID.
    whatsapp_template: str | None = None


class AppliedLookup(Protocol):
    """Picks what applies to a participant (by their intervention)."""

    def of(self, participant: Mapping[str, Any]) -> Applied: ...


def server_default(
    settings: Settings, screen: CrisisScreen | None = None, safety_message: str | None = None
) -> Applied:
    """The server's own: the default screen, SAFETY_MESSAGE and SUPERVISOR_PHONES."""
    supervisors = tuple(settings.supervisors())
    return Applied(
        screen=screen or CrisisScreen.from_default(),
        safety_message=safety_text(
            safety_message or settings.safety_message, settings.helpline_text, bool(supervisors)
        ),
        supervisors=supervisors,
        whatsapp_template=settings.whatsapp_template_sid,
    )


@dataclass(frozen=True)
class ServerOnly:
    """The server's settings for every participant (a flow built without interventions)."""

    applied: Applied

    def of(self, participant: Mapping[str, Any]) -> Applied:
        return self.applied
