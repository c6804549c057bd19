"""What makes an enrollment row acceptable: one rule set for the form and for each CSV row."""

from __future__ import annotations

from collections.abc import Container, Mapping
from pathlib import Path

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.core.localtime import validate_timezone
from bot.store.event_types import ParticipantEnrolled
from bot.store.events import new_id

FIELDS = ("phone", "name", "channel", "timezone", "intervention")
CHANNELS = ("sms", "whatsapp")


def check(
    given: Mapping[str, str],
    settings: Settings,
    interventions: Path,
    taken: Container[str],
) -> tuple[ParticipantEnrolled | None, dict[str, str]]:
    """The enrollment the fields describe, or the problem with each field that is wrong.

    `taken` holds the phone numbers already enrolled (and, for a CSV, those earlier in it).
    """
    problems: dict[str, str] = {}
    phone = ""
    raw_phone = (given.get("phone") or "").strip()
    if not raw_phone:
        problems["phone"] = "a phone number is required"
    else:
        try:
            phone = canonical_phone(raw_phone, settings.default_region)
        except InvalidPhoneNumber as exc:
            problems["phone"] = f"not a phone number: {exc}"
    if phone and phone in taken:
        problems["phone"] = f"{phone} is already enrolled"
    channel = (given.get("channel") or "sms").strip().lower()
    if channel not in CHANNELS:
        problems["channel"] = "channel must be sms or whatsapp"
    timezone = (given.get("timezone") or "").strip() or settings.default_timezone
    try:
        validate_timezone(timezone)
    except ValueError as exc:
        problems["timezone"] = str(exc)
    intervention = (given.get("intervention") or "").strip() or settings.intervention
    if not (interventions / intervention / "intervention.yaml").is_file():
        problems["intervention"] = f"no intervention named {intervention!r}"
    name = (given.get("name") or "").strip() or None
    if name is not None and len(name) > 200:
        problems["name"] = "a name is at most 200 characters"
    if problems:
        return None, problems
    enrolled = ParticipantEnrolled(
        participant_id=new_id(),
        phone=phone,
        channel=channel,
        timezone=timezone,
        intervention=intervention,
        conversation_state="intake",
        name=name,
        source="console",
    )
    return enrolled, {}
