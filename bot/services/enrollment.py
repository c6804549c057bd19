"""Enrolling a participant: one set of rules for the API, the console form, a CSV row, the
CLI and the sandbox.

The phone is canonicalised to E.164; the timezone is the one given, else the number's own
zone when it has exactly one (+44 -> Europe/London), else DEFAULT_TIMEZONE; the intervention
must exist and validate (the catalogue), and what it needs (an LLM, embeddings, a WhatsApp
template: bot.interventions.validation.needs) must be configured; a phone already enrolled is
refused. A CSV's dry run
checks each row with the same `check` the act uses, so what it promises is what is written.

In a study (the one named, else STUDY when neither a study nor an intervention is named) the
baseline values are checked against the study's fields, and the arm is drawn only when the
enrollment is recorded, in the same transaction (bot.services.allocation): a dry run, a check
or a refusal never reveals the next arm. The arm's intervention is the one the participant runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.config import Settings
from bot.core.localtime import validate_timezone
from bot.core.phone_zone import choose_timezone
from bot.interventions.validation import needs
from bot.interventions.validation.catalogue import Catalogue
from bot.services import welcome
from bot.services.allocation import allocated
from bot.services.broadcast_sending import QuietRules
from bot.services.refusal import Refused
from bot.services.stage2 import stage2_timer
from bot.services.study_joining import joined
from bot.store.event_store import ConcurrencyError, ConstraintViolation, EventStore
from bot.store.event_types import ParticipantEnrolled
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import EventData, NewEvent, new_id, participant_stream
from bot.store.queries import enrolled_with_phone
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import Study

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
    study: str | None = None
    baseline: Mapping[str, Any] | None = None
    # True: the baseline values are text (a form, a CSV row, the command line), read by each
    # field's type; False: typed already (JSON).
    baseline_text: bool = False


@dataclass(frozen=True)
class Checked:
    """An enrollment that passed every rule. In a study, `enrolled.intervention` is replaced
    by the drawn arm's when it is recorded."""

    enrolled: ParticipantEnrolled
    study: str | None = None
    design: Study | None = None
    seed: bytes = b""
    baseline: Mapping[str, Any] = field(default_factory=dict)

    @property
    def participant_id(self) -> str:
        return self.enrolled.participant_id


@dataclass(frozen=True)
class Enrolled:
    """What was recorded: the enrollment and, in a study, the allocation (whose arm is not
    for everyone's eyes when the study is `blinded`)."""

    enrolled: ParticipantEnrolled
    allocation: ParticipantAllocated | None = None
    blinded: bool = False
    welcome_at: datetime | None = None  # the welcome waits for their quiet hours to end

    @property
    def participant_id(self) -> str:
        return self.enrolled.participant_id


def check(
    asked: Enrollment,
    settings: Settings,
    catalogue: Catalogue,
    taken: Callable[[str], bool],
    source: Source,
    studies: StudyCatalogue | None = None,
) -> Checked:
    """The enrollment `asked` describes, or `Refused` naming the problem of every field that
    is wrong (`problems`, in the order phone, channel, timezone, intervention, study, each
    `baseline.<field>`, name, then a phone already enrolled; `field`/`message` are the
    first). `taken(phone)` says whether an E.164 number is enrolled already; `studies` are
    the studies an enrollment may join (None: none)."""
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
    named = (asked.intervention or "").strip() or None
    slug = (asked.study or "").strip() or (None if named else settings.study)
    intervention = named or settings.intervention
    refusal = (
        catalogue.refusal(intervention) or unmet_needs(catalogue, intervention, settings, channel)
        if slug is None
        else None
    )
    if refusal is not None:
        problems["intervention"] = refusal
    if slug is not None and named is not None:
        problems["intervention"] = (
            f"in study {slug!r} the arm drawn decides the intervention: leave intervention out"
        )
    given = dict(asked.baseline or {})
    design, seed, baseline = joined(given, asked.baseline_text, slug, settings, studies, problems)
    if design is not None and "intervention" not in problems:
        # any arm may be drawn: each arm's intervention must be able to answer here
        for arm in design.arms.values():
            unmet = unmet_needs(catalogue, arm.intervention, settings, channel)
            if unmet is not None:
                problems["intervention"] = unmet
                break
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
    enrolled = enrolled_event(
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
    return Checked(enrolled, slug, design, seed, baseline)


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
    studies: StudyCatalogue | None = None,
) -> Enrolled:
    """Check and record one enrollment (`participant.enrolled`, `actor` in its meta, and in a
    study `participant.allocated`); the worker sends the first message shortly after, or at
    the end of the participant's quiet hours (`welcome_at`, bot.services.welcome)."""
    taken = lambda p: phone_taken(store, p)  # noqa: E731
    checked = check(asked, settings, catalogue, taken, source, studies)
    quiet = welcome.rules(settings, catalogue)
    (done,) = record(store, [checked], actor=actor, meta_message=ALREADY_ENROLLED, quiet=quiet)
    return done


def record(
    store: EventStore,
    checked: Sequence[Checked | ParticipantEnrolled],
    *,
    actor: str,
    quiet: QuietRules | None,
    meta_message: str = ENROLLED_MEANWHILE,
) -> list[Enrolled]:
    """Record checked enrollments, all in one transaction, each study enrollment with its
    allocation drawn there: a phone enrolled by someone else since the check refuses them all
    (`Refused`, a conflict saying `meta_message`). With `quiet` (the quiet hours that apply,
    bot.services.welcome), a welcome due inside the participant's waits for their end; None
    only where nobody is texted (`tandem chat`'s terminal)."""
    meta = {"actor": actor}
    done: list[Enrolled] = []
    try:
        with store.transaction() as tx:
            for one in checked:
                one = one if isinstance(one, Checked) else Checked(one)
                events: list[EventData] = [one.enrolled]
                made = Enrolled(one.enrolled)
                if one.study is not None and one.design is not None:
                    pid = one.participant_id
                    drawn = allocated(tx, one.study, one.design, one.seed, pid, one.baseline)
                    runs = one.design.arms[drawn.arm].intervention
                    enrolled = one.enrolled.model_copy(update={"intervention": runs})
                    events = [enrolled, drawn]
                    due = stage2_timer(one.study, one.design, drawn.arm, store.clock.now())
                    events += [due] if due is not None else []
                    made = Enrolled(enrolled, drawn, one.design.blinded)
                held = None if quiet is None else _held_welcome(made.enrolled, store, quiet)
                if held is not None:
                    events.append(held)
                    made = Enrolled(made.enrolled, made.allocation, made.blinded, held.due_at)
                stream = participant_stream(one.participant_id)
                tx.append(stream, [NewEvent(e, meta=meta) for e in events], 0)
                done.append(made)
    except (ConstraintViolation, ConcurrencyError):
        raise Refused(meta_message, "phone", "conflict") from None
    return done


def _held_welcome(
    enrolled: ParticipantEnrolled, store: EventStore, quiet: QuietRules
) -> TimerScheduled | None:
    """The timer holding the welcome past the participant's quiet hours, if now is inside."""
    who = {"timezone": enrolled.timezone, "intervention": enrolled.intervention}
    return welcome.welcome_timer(who, store.clock.now(), quiet)


def phone_taken(store: EventStore, phone: str) -> bool:
    """Whether a participant with this E.164 number is enrolled (found by its keyed hash)."""
    with store.reading() as conn:
        return enrolled_with_phone(conn, phone, store.sealer.phones) is not None


def checker(
    store: EventStore,
    settings: Settings,
    catalogue: Catalogue,
    source: Source,
    studies: StudyCatalogue | None = None,
) -> Callable[[Enrollment], Checked]:
    """`check` for the rows of one file: a phone earlier in the file counts as taken."""
    seen: set[str] = set()

    def check_row(asked: Enrollment) -> Checked:
        taken = lambda p: p in seen or phone_taken(store, p)  # noqa: E731
        checked = check(asked, settings, catalogue, taken, source, studies)
        seen.add(checked.enrolled.phone)
        return checked

    return check_row


def unmet_needs(
    catalogue: Catalogue, slug: str, settings: Settings, channel: str | None
) -> str | None:
    """Why `slug` cannot answer a participant here: what it needs that is not configured
    (a WhatsApp template only for `channel` whatsapp, or when the channel is not known)."""
    wanted = catalogue.needs(slug)
    own = catalogue.whatsapp_template(slug)
    missing = [n for n in needs.unmet(wanted, settings, channel) if not (own and n == WA)]
    problems = [needs.refusal(slug, wanted, missing)] if missing else []
    if channel == "whatsapp" and WA not in missing and not (own or settings.whatsapp_template_sid):
        problems.append(no_whatsapp_template(slug))
    return "; ".join(problems) or None


WA = "whatsapp_template"


def no_whatsapp_template(slug: str) -> str:
    """Why a WhatsApp enrollment into `slug` is refused: its greeting could not arrive."""
    return (
        f"intervention {slug!r} has no approved WhatsApp template to greet a participant who "
        "has not written yet (WhatsApp delivers nothing else until they do): set "
        f"`whatsapp_template: HX<32 hex>` in interventions/{slug}/intervention.yaml, or "
        "WHATSAPP_TEMPLATE_SID"
    )


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
