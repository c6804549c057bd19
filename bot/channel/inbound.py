"""What an inbound Twilio message records: the message, consent keywords, HELP, unknown senders.

An unknown sender's message goes on a stream of their own (`sender:<id>`), sealed under a data
key of its own, so that it can be erased (`tandem erase --phone`) and expires
(UNKNOWN_SENDER_RETENTION_DAYS). An erased participant's number is no longer known (their
phone's hash went with their key): what they send again is an unknown sender's, and is answered
only as UNKNOWN_SENDER_POLICY says (never a STOP: docs/security.md).

The web layer parses the form, looks the sender up and appends what `decide` returns in one
transaction; nothing here touches Flask or the database.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from bot.channel import consent, keywords, outbound
from bot.channel.keywords import Keyword
from bot.core.addresses import Address, InvalidPhoneNumber, canonical_phone, parse_address
from bot.core.config import Settings
from bot.core.phone_zone import choose_timezone
from bot.store.event_types.messages import Media, MessageReceived
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.events import Event, EventData, new_id, participant_stream, sender_stream

log = logging.getLogger(__name__)

_SID = re.compile(r"[A-Za-z0-9]{2,64}")
# The participant's stream, read only when a decision needs it (START re-arms schedules).
History = Callable[[], Sequence[Event]]


class InvalidForm(ValueError):
    """A webhook form Tandem cannot read; the message says what is wrong (answered with 400)."""


@dataclass(frozen=True)
class Append:
    """Events for one stream, appended in the webhook's transaction."""

    stream_id: str
    events: list[EventData]
    idempotency_key: str | None = None
    expected_version: int | None = None


@dataclass(frozen=True)
class Inbound:
    """A parsed inbound message: the event to record, its sender, and the keyword it may be."""

    message: MessageReceived
    sender: Address
    keyword: Keyword | None = None
    keyword_source: Literal["keyword", "opt_out_type"] = "keyword"


def required(form: Mapping[str, str], name: str) -> str:
    value = (form.get(name) or "").strip()
    if not value:
        raise InvalidForm(f"{name} is required")
    return value


def message_sid(form: Mapping[str, str]) -> str:
    sid = required(form, "MessageSid")
    if not _SID.fullmatch(sid):
        raise InvalidForm("MessageSid must be 2-64 letters and digits, such as SM0123…")
    return sid


def parse_message(form: Mapping[str, str]) -> Inbound:
    """Read Twilio's inbound-message form; raises InvalidForm naming the first problem."""
    sid = message_sid(form)
    sender, recipient = _address(form, "From"), _address(form, "To")
    body = form.get("Body") or ""
    message = MessageReceived(
        message_sid=sid,
        from_address=str(sender),
        to_address=str(recipient),
        channel=sender.channel,
        body=body,
        media=_media(form),
        profile_name=form.get("ProfileName") or None,
        wa_id=form.get("WaId") or None,
    )
    # Twilio's Advanced Opt-Out names the family when it matched (possibly a custom word).
    keyword = keywords.from_opt_out_type(form.get("OptOutType"))
    if keyword is not None:
        return Inbound(message, sender, keyword, "opt_out_type")
    return Inbound(message, sender, keywords.classify(body))


def decide(
    inbound: Inbound,
    participant: Mapping[str, Any] | None,
    pending_timers: Sequence[Mapping[str, Any]],
    settings: Settings,
    now: datetime,
    history: History = tuple,
    sender_id: str | None = None,
) -> Append:
    """The one append an inbound message makes, keyed by its MessageSid; `sender_id`: the
    unknown sender this number already has a stream for (None: a new one)."""
    if participant is not None:
        return for_participant(inbound, participant, pending_timers, settings, now, history)
    return for_unknown_sender(inbound, settings, now, sender_id)


def for_participant(
    inbound: Inbound,
    participant: Mapping[str, Any],
    pending_timers: Sequence[Mapping[str, Any]],
    settings: Settings,
    now: datetime,
    history: History = tuple,
) -> Append:
    """The message on the participant's stream, with what its keyword does.

    STOP opts out (whichever channel or number it came on: the participant is their phone);
    START opts back in, and is an ordinary message from anyone not opted out ("yes");
    HELP queues the help text on the channel it came on. A keyword creates no work item.
    """
    keyword, source = inbound.keyword, inbound.keyword_source
    follow: list[EventData] = []
    if keyword is Keyword.STOP:
        follow = consent.opt_out(participant, pending_timers, source, now, keyword=keyword.value)
    elif keyword is Keyword.START:
        if participant["opted_out"]:
            follow = consent.opt_in(
                participant, pending_timers, source, now, keyword.value, events=history()
            )
        else:
            keyword = None
    elif keyword is Keyword.HELP:
        reply_to = {**participant, "channel": inbound.message.channel}
        follow = [*outbound.to_participant(reply_to, settings.help_text, kind="help")]
    return Append(
        participant_stream(participant["participant_id"]),
        [_recorded(inbound, keyword), *follow],
        idempotency_key=inbound.message.message_sid,
        expected_version=participant["version"],
    )


def for_unknown_sender(
    inbound: Inbound, settings: Settings, now: datetime, sender_id: str | None = None
) -> Append:
    """UNKNOWN_SENDER_POLICY: record on the sender's own stream (ignore), also answer (reply),
    or enroll the sender and treat the message as theirs (enroll). STOP never replies or
    enrolls."""
    policy = settings.unknown_sender_policy
    stop = inbound.keyword is Keyword.STOP
    if policy == "enroll" and not stop:
        enrolled = _auto_enrolment(inbound, settings)
        if enrolled is not None:
            return _enrolled_with_message(enrolled, inbound, settings, now)
    keyword = inbound.keyword if inbound.keyword is not Keyword.START else None
    events: list[EventData] = [_recorded(inbound, keyword)]
    if policy == "reply" and not stop:
        channel = inbound.sender.channel
        reply = settings.unknown_sender_reply
        events += outbound.to_address(str(inbound.sender), channel, reply, kind="notice")
    stream = sender_stream(sender_id or new_id())
    return Append(stream, events, idempotency_key=inbound.message.message_sid)


def _enrolled_with_message(
    enrolled: ParticipantEnrolled, inbound: Inbound, settings: Settings, now: datetime
) -> Append:
    # The participant as the enrolment leaves them, enough for the keyword decision.
    participant = {**enrolled.model_dump(), "opted_out": False, "version": 1}
    then = for_participant(inbound, participant, [], settings, now)
    # One append: the MessageSid key sits on the enrolment, the first event of the new stream,
    # so a redelivery (which now finds the participant by phone) writes nothing.
    return Append(
        then.stream_id,
        [enrolled, *then.events],
        idempotency_key=then.idempotency_key,
        expected_version=0,
    )


def _auto_enrolment(inbound: Inbound, settings: Settings) -> ParticipantEnrolled | None:
    try:
        phone = canonical_phone(inbound.sender.e164)
    except InvalidPhoneNumber as exc:
        log.warning("not enrolling the sender of %s: %s", inbound.message.message_sid, exc)
        return None
    timezone, timezone_source = choose_timezone(None, phone, settings.default_timezone)
    return ParticipantEnrolled(
        participant_id=new_id(),
        phone=phone,
        channel=inbound.sender.channel,
        timezone=timezone,
        timezone_source=timezone_source,
        intervention=settings.intervention,
        source="auto",
    )


def _recorded(inbound: Inbound, keyword: Keyword | None) -> MessageReceived:
    return inbound.message.model_copy(update={"keyword": keyword.value if keyword else None})


def _address(form: Mapping[str, str], name: str) -> Address:
    raw = required(form, name)
    try:
        return parse_address(raw)
    except ValueError as exc:
        raise InvalidForm(f"{name}: {exc}") from None


def _media(form: Mapping[str, str]) -> list[Media]:
    raw = (form.get("NumMedia") or "0").strip()
    if not (raw.isascii() and raw.isdigit()):
        raise InvalidForm("NumMedia must be a whole number")
    media = []
    for index in range(int(raw)):
        url = (form.get(f"MediaUrl{index}") or "").strip()
        if not url:
            raise InvalidForm(f"NumMedia is {int(raw)} but MediaUrl{index} is missing")
        content_type = form.get(f"MediaContentType{index}") or None
        media.append(Media(url=url, content_type=content_type))
    return media
