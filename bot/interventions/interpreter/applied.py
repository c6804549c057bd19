"""What the conversation applies to each intervention's participants (`Applied`, built from the
intervention's configuration, intervention.yaml; docs/interventions.md): its crisis screen (the
maintained catalogue plus its phrases), its safety message, its supervisors (texted in addition
to SUPERVISOR_PHONES) and its quiet hours. Read from interventions/<slug>/intervention.yaml once
per process; a participant's `intervention` picks.

Supervisors are added to SUPERVISOR_PHONES, never instead of them: the operator's on-call
phones keep hearing about every alert whatever an intervention folder says. An intervention
whose intervention.yaml cannot be read gets the server's own, and that is logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.conversation.applied import Applied, server_default
from bot.conversation.crisis import safety_text
from bot.conversation.safety import CrisisScreen, PhraseError
from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.core.localtime import QuietHours
from bot.core.model_choice import ModelChoice
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG, read_intervention

log = logging.getLogger(__name__)

INTERVENTIONS = Path(__file__).resolve().parents[3] / "interventions"


class AppliedByIntervention:
    """What applies to each intervention, built on first use and cached (thread-safe);
    `default` is the server's own, for participants whose intervention adds nothing."""

    def __init__(
        self,
        settings: Settings,
        screen: CrisisScreen | None = None,
        safety_message: str | None = None,
        root: Path = INTERVENTIONS,
    ) -> None:
        self.helpline = settings.helpline_text
        self.message = safety_message or settings.safety_message
        self.region = settings.default_region
        self.root = root
        self.default = server_default(settings, screen, safety_message)
        self._cache: dict[str, Applied] = {}
        self._lock = threading.Lock()

    def of(self, participant: Mapping[str, Any]) -> Applied:
        """What applies to this participant (by their intervention)."""
        slug = str(participant.get("intervention") or "")
        if not slug:
            return self.default
        with self._lock:  # a screen is compiled once per intervention, not once per thread
            if slug not in self._cache:
                self._cache[slug] = self._build(slug)
            return self._cache[slug]

    def _build(self, slug: str) -> Applied:
        intervention = _read(self.root, slug)
        if intervention is None:
            return self.default
        config, default = intervention.config, self.default
        screen = default.screen
        if config.safety.extra_phrases or config.safety.extra_exclusions:
            try:
                screen = intervention.crisis_screen()
            except PhraseError as exc:
                log.error("intervention %r: its crisis phrases do not compile (%s)", slug, exc)
        message = config.safety.message
        supervisors = list(default.supervisors)
        for phone in config.supervisors:
            try:
                supervisors.append(canonical_phone(phone, self.region))
            except InvalidPhoneNumber:
                log.error("intervention %r: a supervisor phone is not valid; skipped", slug)
        alerted = bool(supervisors)
        applied = Applied(
            screen=screen,
            safety_message=safety_text(message or self.message, self.helpline, alerted),
            supervisors=tuple(dict.fromkeys(supervisors)),
            quiet_hours=config.quiet_hours or None,
            model=ModelChoice(None, config.temperature, config.max_tokens),
            redact_for_llm=config.redact_for_llm,
            whatsapp_template=config.whatsapp_template or default.whatsapp_template,
        )
        log.info(
            "intervention %r: %r, %s safety message, %d supervisor phone(s)",
            slug,
            applied.screen,
            "its own" if message else "the server's",
            len(applied.supervisors),
        )
        return applied


def quiet_hours_by_intervention(root: Path = INTERVENTIONS) -> dict[str, QuietHours]:
    """The quiet hours of each intervention under `root` that declares its own (for the
    scheduler's `intervention_quiet_hours`); the others keep QUIET_HOURS."""
    found: dict[str, QuietHours] = {}
    for config in sorted(root.glob(f"*/{CONFIG}")) if root.is_dir() else ():
        slug = config.parent.name
        intervention = _read(root, slug)
        try:
            hours = intervention.quiet_hours() if intervention else None
        except ValueError as exc:
            log.error("intervention %r: quiet_hours %s; QUIET_HOURS applies", slug, exc)
            continue
        if hours is not None:
            found[slug] = hours
    return found


def _read(root: Path, slug: str) -> Intervention | None:
    """The intervention if its intervention.yaml can be read (other files may have problems:
    its safety configuration still applies), else None, logged unless there is no such folder."""
    if not (root / slug / CONFIG).is_file():
        return None
    intervention, problems = read_intervention(root / slug)
    if intervention is None:
        first = problems[0] if problems else "unreadable"
        log.error("intervention %r: %s; the server's settings apply", slug, first)
    return intervention
