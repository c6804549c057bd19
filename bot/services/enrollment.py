"""Enrolling a participant: one set of rules for the API, the console form, a CSV row, the
CLI and the sandbox.

The phone is canonicalised to E.164; the timezone is the one given, else the number's own
zone when it has exactly one (+44 -> Europe/London), else DEFAULT_TIMEZONE; the intervention
must exist and validate (the catalogue), and what it needs (an LLM, embeddings, a WhatsApp
template: bot.interventions.validation.needs) must be configured; a phone already enrolled is
refused. A CSV's dry run
checks each row with the same `check` the act uses, so what it promises is what is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.core.localtime import validate_timezone
from bot.core.phone_zone import choose_timezone
from bot.interventions.validation import needs
from bot.interventions.validation.catalogue import Catalogue
from bot.services.refusal import Refused
from bot.store.event_store import ConcurrencyError, ConstraintViolation, EventStore
from bot.store.event_types import ParticipantEnrolled
from bot.store.events import NewEvent, new_id, participant_stream
from bot.store.queries import enrolled_with_phone

Source = Literal["api", "auto", "cli", "console"]
CHANNELS = ("sms", "whatsapp")
NAME_LIMIT = 200
ALREADY_ENROLLED = "Participant with this phone number already enrolled"
ENROLLED_MEANWHILE = "A phone number was enrolled meanwhile; nothing was written. Check again."


@dataclass(frozen=True)
class Enrollment:
    """What a person asks for: only `phone` is required; blanks mean "not given"."""

    phone: str
    channel: str | None = None
    timezone: str | None = None
    intervention: str | None = None
    name: str | None = None
    gender: str | None = None
    ethnicity: str | None = None
    background: str | None = None
    debug: bool = False


def check(
    asked: Enrollment,
    settings: Settings,
    catalogue: Catalogue,
    taken: Callable[[str], bool],
    source: Source,
) -> ParticipantEnrolled:
    """The enrollment `asked` describes, or `Refused` naming the problem of every field that
    is wrong (`problems`, in the order phone, channel, timezone, intervention, name, then a
    phone already enrolled; `field`/`message` are the first). `taken(phone)` says whether an
    E.164 number is enrolled already."""
    problems: dict[str, str] = {}
    phone = _phone(asked.phone, settings, problems)
    channel = (asked.channel or "sms").strip().lower()
    if channel not in CHANNELS:
        problems["channel"] = "channel must be sms or whatsapp"
    given_zone = (asked.timezone or "").strip() or None
    if given_zone is not None:
        try:
            validate_timezone(given_zone)
        except ValueError as exc:
            problems["timezone"] = str(exc)
    intervention = (asked.intervention or "").strip() or settings.intervention
    refusal = catalogue.refusal(intervention) or unmet_needs(
        catalogue, intervention, settings, channel
    )
    if refusal is not None:
        problems["intervention"] = refusal
    name = _blank_is_none(asked.name)
    if name is not None and len(name) > NAME_LIMIT:
        problems["name"] = f"a name is at most {NAME_LIMIT} characters"
    if phone and "phone" not in problems and taken(phone):
        problems["phone"] = ALREADY_ENROLLED
    if problems:
        field, message = next(iter(problems.items()))
        kind: Literal["invalid", "conflict"] = (
            "conflict" if message == ALREADY_ENROLLED else "invalid"
        )
        raise Refused(message, field, kind, problems)
    return enrolled_event(
        Enrollment(
            phone=phone,
            channel=channel,
            timezone=given_zone,
            intervention=intervention,
            name=name,
            gender=asked.gender,
            ethnicity=asked.ethnicity,
            background=asked.background,
            debug=asked.debug,
        ),
        settings,
        source,
    )


def enrolled_event(checked: Enrollment, settings: Settings, source: Source) -> ParticipantEnrolled:
    """The `participant.enrolled` of a checked enrollment (an E.164 phone, a known channel,
    timezone and intervention), with the timezone rule applied: the one given, else the
    number's own zone when it has exactly one, else DEFAULT_TIMEZONE. The sandbox, whose
    fictional numbers and intervention folders are its own to check, starts here."""
    timezone, timezone_source = choose_timezone(
        checked.timezone, checked.phone, settings.default_timezone
    )
    return ParticipantEnrolled(
        participant_id=new_id(),
        phone=checked.phone,
        channel=checked.channel or "sms",
        timezone=timezone,
        timezone_source=timezone_source,
        intervention=checked.intervention or settings.intervention,
        conversation_state="intake",
        name=_blank_is_none(checked.name),
        gender=_blank_is_none(checked.gender),
        ethnicity=_blank_is_none(checked.ethnicity),
        background=_blank_is_none(checked.background),
        debug=checked.debug,
        source=source,
    )


def enroll(
    store: EventStore,
    settings: Settings,
    catalogue: Catalogue,
    asked: Enrollment,
    *,
    source: Source,
    actor: str,
) -> ParticipantEnrolled:
    """Check and record one enrollment (`participant.enrolled`, `actor` in its meta); the
    worker sends the first message shortly after."""
    enrolled = check(asked, settings, catalogue, lambda p: phone_taken(store, p), source)
    record(store, [enrolled], actor=actor, meta_message=ALREADY_ENROLLED)
    return enrolled


def record(
    store: EventStore,
    enrolled: Sequence[ParticipantEnrolled],
    *,
    actor: str,
    meta_message: str = ENROLLED_MEANWHILE,
) -> None:
    """Record checked enrollments, all in one transaction: a phone enrolled by someone else
    since the check refuses them all (`Refused`, a conflict saying `meta_message`)."""
    meta = {"actor": actor}
    try:
        with store.transaction() as tx:
            for e in enrolled:
                tx.append(participant_stream(e.participant_id), [NewEvent(e, meta=meta)], 0)
    except (ConstraintViolation, ConcurrencyError):
        raise Refused(meta_message, "phone", "conflict") from None


def phone_taken(store: EventStore, phone: str) -> bool:
    """Whether a participant with this E.164 number is enrolled (found by its keyed hash)."""
    with store.reading() as conn:
        return enrolled_with_phone(conn, phone, store.sealer.phones) is not None


def checker(
    store: EventStore, settings: Settings, catalogue: Catalogue, source: Source
) -> Callable[[Enrollment], ParticipantEnrolled]:
    """`check` for the rows of one file: a phone earlier in the file counts as taken."""
    seen: set[str] = set()

    def check_row(asked: Enrollment) -> ParticipantEnrolled:
        enrolled = check(
            asked, settings, catalogue, lambda p: p in seen or phone_taken(store, p), source
        )
        seen.add(enrolled.phone)
        return enrolled

    return check_row


def unmet_needs(
    catalogue: Catalogue, slug: str, settings: Settings, channel: str | None
) -> str | None:
    """Why `slug` cannot answer a participant here: what it needs that is not configured
    (a WhatsApp template only for `channel` whatsapp, or when the channel is not known)."""
    wanted = catalogue.needs(slug)
    missing = needs.unmet(wanted, settings, channel)
    return needs.refusal(slug, wanted, missing) if missing else None


def _phone(raw: str, settings: Settings, problems: dict[str, str]) -> str:
    raw = (raw or "").strip()
    if not raw:
        problems["phone"] = "a phone number is required"
        return ""
    try:
        return canonical_phone(raw, settings.default_region)
    except InvalidPhoneNumber as exc:
        problems["phone"] = f"invalid phone number: {exc}"
        return ""


def _blank_is_none(value: str | None) -> str | None:
    return (value or "").strip() or None
