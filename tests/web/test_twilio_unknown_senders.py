"""A message from a number no participant has, under each UNKNOWN_SENDER_POLICY."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.store.events import SYSTEM_STREAM, participant_of, participant_stream, sender_of
from bot.store.services import Services
from tests.web.twilio_requests import (
    INBOUND,
    client_with,
    deliver_concurrently,
    enroll,
    message,
    post,
    rows,
    types,
)

STRANGER = "+12025550123"
REPLY = "Wrong number: this line belongs to a research study."


def _sender_stream(services: Services) -> str:
    """The one unknown sender's stream (`sender:<id>`)."""
    [stream] = {e.stream_id for e in services.store.read_all() if sender_of(e.stream_id)}
    return stream


def test_ignore_records_the_message_on_the_senders_stream_and_nothing_else(
    client: FlaskClient, services: Services
) -> None:
    form = message("who is this?", sender=STRANGER)

    assert post(client, INBOUND, form).status_code == 200
    assert post(client, INBOUND, form).status_code == 200  # a redelivery

    assert services.store.load(SYSTEM_STREAM) == []
    [event] = services.store.load(_sender_stream(services))
    assert (event.event_type, event.idempotency_key) == ("message.received", form["MessageSid"])
    assert event.data.from_address == STRANGER
    assert types(services.store) == ["message.received"]
    assert rows(services.store, "work_items") == rows(services.store, "outbox") == []


def test_a_known_participants_message_does_not_count_as_unknown(
    client: FlaskClient, services: Services
) -> None:
    participant = enroll(services, "+14155552671")

    post(client, INBOUND, message(sender=STRANGER))

    stream = participant_stream(participant["participant_id"])
    assert [e.event_type for e in services.store.load(stream)] == ["participant.enrolled"]


def test_reply_also_queues_the_fixed_text_to_the_sender(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="reply", UNKNOWN_SENDER_REPLY=REPLY)

    post(client, INBOUND, message("hello?", sender=f"whatsapp:{STRANGER}"))

    stream = _sender_stream(services)
    assert types(services.store, stream) == ["message.received", "message.queued"]
    [row] = rows(services.store, "outbox")
    assert (row["stream_id"], row["participant_id"]) == (stream, None)
    assert (row["to_address"], row["channel"], row["body"]) == (
        f"whatsapp:{STRANGER}",
        "whatsapp",
        REPLY,
    )
    assert rows(services.store, "work_items") == []


def test_reply_never_answers_a_stop(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="reply", UNKNOWN_SENDER_REPLY=REPLY)

    post(client, INBOUND, message("STOP", sender=STRANGER))

    assert types(services.store) == ["message.received"]
    assert rows(services.store, "outbox") == []


def test_enroll_enrolls_the_sender_with_the_message_on_their_stream(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="enroll", INTERVENTION="habit-coach")
    form = message("hi, I'd like to join", sender=f"whatsapp:{STRANGER}")

    post(client, INBOUND, form)
    post(client, INBOUND, form)  # a redelivery

    [participant] = rows(services.store, "participants")
    assert (participant["phone"], participant["channel"]) == (STRANGER, "whatsapp")
    assert (participant["timezone"], participant["intervention"]) == (
        "America/New_York",  # the stranger's number has one zone; DEFAULT_TIMEZONE otherwise
        "habit-coach",
    )
    enrolment, received = services.store.load(participant_stream(participant["participant_id"]))
    assert (enrolment.event_type, enrolment.data.source) == ("participant.enrolled", "auto")
    assert enrolment.data.timezone_source == "inferred"
    assert (received.event_type, received.data.body) == ("message.received", form["Body"])
    assert sorted(w["kind"] for w in rows(services.store, "work_items")) == ["enrolled", "inbound"]
    assert services.store.load(SYSTEM_STREAM) == []


def test_enroll_never_enrolls_a_stop(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="enroll")

    post(client, INBOUND, message("STOP", sender=STRANGER))

    assert rows(services.store, "participants") == []
    assert types(services.store, _sender_stream(services)) == ["message.received"]


def test_enroll_treats_help_as_the_new_participants_keyword(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="enroll")

    post(client, INBOUND, message("HELP", sender=STRANGER))

    [participant] = rows(services.store, "participants")
    [row] = rows(services.store, "outbox")
    assert (row["participant_id"], row["kind"]) == (participant["participant_id"], "help")
    assert [w["kind"] for w in rows(services.store, "work_items")] == ["enrolled"]


def test_five_concurrent_first_messages_enroll_one_participant(services: Services) -> None:
    app = client_with(services, UNKNOWN_SENDER_POLICY="enroll").application
    form = message("first contact", sender=STRANGER)

    answers = deliver_concurrently(app, form)

    assert answers == [200] * 5
    [participant] = rows(services.store, "participants")
    streams = {participant_of(e.stream_id) for e in services.store.read_all()}
    assert streams == {participant["participant_id"]}
    assert types(services.store).count("message.received") == 1
