"""The participant's channel never changes silently: an inbound on another channel is recorded
with its channel, replies stay on the enrolled one, and a researcher changes it by PUT."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.channel import outbound
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.factories import enrolled
from tests.web.researcher import AUTH, BASE, events_of
from tests.web.twilio_requests import INBOUND, PHONE, message, post, rows


def whatsapp_participant(services: Services) -> str:
    data = enrolled(PHONE, channel="whatsapp")
    services.store.append(participant_stream(data.participant_id), [data])
    return data.participant_id


def row(services: Services, participant_id: str) -> dict:
    return rows(services.store, "participants", participant_id=participant_id)[0]


def test_an_sms_from_a_whatsapp_participant_is_recorded_as_sms_and_replies_stay_on_whatsapp(
    client: FlaskClient, services: Services
) -> None:
    pid = whatsapp_participant(services)

    assert post(client, INBOUND, message("texting from my other phone app")).status_code == 200

    [received] = events_of(services.store, pid, "message.received")
    assert (received.data.channel, received.data.from_address) == ("sms", PHONE)
    participant = row(services, pid)
    assert participant["channel"] == "whatsapp"
    [reply] = outbound.to_participant(participant, "Thanks!")
    assert (reply.channel, reply.to_address) == ("whatsapp", f"whatsapp:{PHONE}")


def test_a_researcher_changes_the_channel_by_put_and_it_is_recorded_as_an_event(
    client: FlaskClient, services: Services
) -> None:
    pid = whatsapp_participant(services)
    post(client, INBOUND, message("sms now please"))

    response = client.put(f"{BASE}/{pid}", json={"channel": "sms"}, headers=AUTH)

    assert response.status_code == 200
    assert response.get_json()["result"]["channel"] == "sms"
    [updated] = events_of(services.store, pid, "participant.updated")
    assert updated.data.changes == {"channel": "sms"}
    assert row(services, pid)["channel"] == "sms"
