"""POST /webhooks/twilio/status: message.status on the message's stream, never regressing."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from bot.channel import outbound
from bot.store.event_types.messages import MessageSent
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.store.services import Services
from tests.web.twilio_requests import STATUS, changed, enroll, new_sid, post, rows, status, types


@pytest.fixture
def participant(services: Services) -> dict:
    return enroll(services)


def sent_message(services: Services, participant: dict, sid: str | None = None) -> dict:
    """A message queued for the participant and, when `sid` is given, sent as that sid."""
    [queued] = outbound.to_participant(participant, "Time for a short walk?", kind="prompt")
    stream = participant_stream(participant["participant_id"])
    services.store.append(stream, [queued])
    if sid is not None:
        services.store.append(stream, [MessageSent(outbox_id=queued.outbox_id, provider_sid=sid)])
    return outbox_row(services, queued.outbox_id)


def outbox_row(services: Services, outbox_id: str) -> dict:
    return rows(services.store, "outbox", outbox_id=outbox_id)[0]


def statuses(services: Services, stream_id: str) -> list:
    return [e for e in services.store.load(stream_id) if e.event_type == "message.status"]


def test_a_status_is_recorded_on_the_participants_stream(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)

    response = post(client, STATUS, status(sid, "delivered"), query=f"outbox_id={row['outbox_id']}")

    assert response.status_code == 200
    [event] = statuses(services, participant_stream(participant["participant_id"]))
    assert event.idempotency_key == f"status:{sid}:delivered"
    assert (event.data.outbox_id, event.data.status) == (row["outbox_id"], "delivered")
    assert outbox_row(services, row["outbox_id"])["status"] == "delivered"


def test_delivered_before_sent_leaves_the_row_at_delivered(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)
    query = f"outbox_id={row['outbox_id']}"

    post(client, STATUS, status(sid, "delivered"), query=query)
    post(client, STATUS, status(sid, "sent"), query=query)

    assert outbox_row(services, row["outbox_id"])["status"] == "delivered"
    stream = participant_stream(participant["participant_id"])
    assert [e.data.status for e in statuses(services, stream)] == ["delivered", "sent"]


def test_a_duplicate_callback_records_nothing_more(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)
    query = f"outbox_id={row['outbox_id']}"

    answers = [post(client, STATUS, status(sid, "sent"), query=query) for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 200]
    assert len(statuses(services, participant_stream(participant["participant_id"]))) == 1


def test_without_an_outbox_id_the_row_is_found_by_its_provider_sid(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)

    post(client, STATUS, status(sid, "delivered"))

    assert outbox_row(services, row["outbox_id"])["status"] == "delivered"


def test_the_outbox_id_finds_a_row_whose_send_was_not_yet_recorded(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    # The callback can beat the dispatcher's message.sent: the URL's outbox_id still finds the row.
    row = sent_message(services, participant)
    sid = new_sid()

    post(client, STATUS, status(sid, "sent"), query=f"outbox_id={row['outbox_id']}")

    stored = outbox_row(services, row["outbox_id"])
    assert (stored["status"], stored["provider_sid"]) == ("sent", sid)


def test_an_unknown_message_sid_is_recorded_on_the_system_stream(
    client: FlaskClient, services: Services
) -> None:
    sid = new_sid()

    response = post(client, STATUS, status(sid, "delivered"))

    assert response.status_code == 200
    [event] = statuses(services, SYSTEM_STREAM)
    assert (event.data.provider_sid, event.data.outbox_id) == (sid, None)


def test_a_status_of_a_system_message_stays_on_the_system_stream(
    client: FlaskClient, services: Services
) -> None:
    [queued] = outbound.to_address("+12025550123", "sms", "Wrong number.", kind="notice")
    services.store.append(SYSTEM_STREAM, [queued])

    post(client, STATUS, status(new_sid(), "sent"), query=f"outbox_id={queued.outbox_id}")

    assert types(services.store, SYSTEM_STREAM) == ["message.queued", "message.status"]
    assert outbox_row(services, queued.outbox_id)["status"] == "sent"


def test_error_21610_opts_the_participant_out(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)
    form = status(sid, "undelivered", ErrorCode="21610")

    post(client, STATUS, form, query=f"outbox_id={row['outbox_id']}")

    *_, reported, opted_out = services.store.load(participant_stream(participant["participant_id"]))
    assert (reported.event_type, reported.data.error_code) == ("message.status", 21610)
    assert (opted_out.event_type, opted_out.data.source) == ("participant.opted_out", "error_21610")
    assert rows(services.store, "participants")[0]["opted_out"] is True
    stored = outbox_row(services, row["outbox_id"])
    assert (stored["status"], stored["error_code"]) == ("undelivered", 21610)


def test_another_error_code_is_only_recorded(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    sid = new_sid()
    row = sent_message(services, participant, sid)

    post(
        client,
        STATUS,
        status(sid, "undelivered", ErrorCode="30003"),
        query=f"outbox_id={row['outbox_id']}",
    )

    assert rows(services.store, "participants")[0]["opted_out"] is False


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"MessageSid": None}, "MessageSid is required"),
        ({"MessageStatus": None}, "MessageStatus is required"),
        (
            {"MessageStatus": "teleported"},
            "MessageStatus 'teleported' is not a Twilio message status",
        ),
        ({"ErrorCode": "E21610"}, "ErrorCode must be a whole number"),
    ],
)
def test_a_malformed_callback_is_a_400_that_says_why(
    client: FlaskClient, services: Services, change: dict, problem: str
) -> None:
    form = changed(status(new_sid(), "sent"), change)

    response = post(client, STATUS, form)

    assert response.status_code == 400
    assert problem in response.get_json()["message"]
    assert types(services.store) == []
