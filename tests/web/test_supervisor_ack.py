"""A supervisor acknowledges an alert by SMS ("ACK 4821") through the signed webhook."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.conversation.supervisors import short_code
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.events import SYSTEM_STREAM
from bot.store.schema import alerts, work_items
from tests.web.alert_fixtures import participant_with_alert
from tests.web.researcher import client_with, events_of
from tests.web.twilio_requests import INBOUND, message, post

SUPERVISOR = "+14165550199"
STRANGER = "+14165550777"


@pytest.fixture
def supervised(database_url: str, store: EventStore, clock: FakeClock) -> FlaskClient:
    return client_with(database_url, store, clock, SUPERVISOR_PHONES=SUPERVISOR)


def _status(store: EventStore, alert_id: str) -> str:
    with store.reading() as conn:
        return conn.execute(select(alerts.c.status).where(alerts.c.alert_id == alert_id)).scalar()


def _answers(store: EventStore, phone: str) -> list[str]:
    return [
        e.data.body
        for e in store.load(SYSTEM_STREAM)
        if e.event_type == "message.queued" and e.data.to_address == phone
    ]


def test_ack_with_the_code_from_a_supervisor_acknowledges_the_alert(
    supervised: FlaskClient, store: EventStore
):
    pid, alert_id = participant_with_alert(store)
    code = short_code(alert_id)

    response = post(supervised, INBOUND, message(f"ack {code}", sender=SUPERVISOR))

    assert response.status_code == 200
    assert _status(store, alert_id) == "acknowledged"
    (ack,) = events_of(store, pid, "alert.acknowledged")
    assert (ack.data.by, ack.data.via) == (f"supervisor:{SUPERVISOR}", "sms")
    assert _answers(store, SUPERVISOR) == [f"Alert {code} acknowledged. Thank you."]


def test_a_supervisors_message_never_becomes_work_for_a_participant(
    supervised: FlaskClient, store: EventStore
):
    _, alert_id = participant_with_alert(store)

    post(supervised, INBOUND, message(f"ACK {short_code(alert_id)}", sender=SUPERVISOR))

    with store.reading() as conn:
        kinds = [row.kind for row in conn.execute(select(work_items))]
    assert "inbound" not in kinds


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        ("ok thanks", "Tandem did not understand that. Reply ACK and the alert's 4-digit code"),
        ("ACK 0000", "No open alert has the code 0000; nothing was changed."),
    ],
)
def test_a_bad_reply_gets_a_short_answer_and_changes_nothing(
    supervised: FlaskClient, store: EventStore, body: str, answer: str
):
    _, alert_id = participant_with_alert(store)  # codes run from 1000 to 9999

    post(supervised, INBOUND, message(body, sender=SUPERVISOR))

    assert _status(store, alert_id) == "open"
    (reply,) = _answers(store, SUPERVISOR)
    assert reply.startswith(answer)


def test_an_ack_for_an_alert_already_acknowledged_changes_nothing(
    supervised: FlaskClient, store: EventStore
):
    pid, alert_id = participant_with_alert(store)
    code = short_code(alert_id)
    post(supervised, INBOUND, message(f"ACK {code}", sender=SUPERVISOR))

    post(supervised, INBOUND, message(f"ACK {code}", sender=SUPERVISOR))

    assert len(events_of(store, pid, "alert.acknowledged")) == 1
    assert _answers(store, SUPERVISOR)[-1] == (
        f"Alert {code} was already acknowledged; nothing was changed."
    )


def test_an_ack_from_a_stranger_gets_nothing_and_changes_nothing(
    supervised: FlaskClient, store: EventStore
):
    _, alert_id = participant_with_alert(store)

    post(supervised, INBOUND, message(f"ACK {short_code(alert_id)}", sender=STRANGER))

    assert _status(store, alert_id) == "open"
    assert _answers(store, STRANGER) == []


def test_a_redelivered_ack_is_recorded_once(supervised: FlaskClient, store: EventStore):
    pid, alert_id = participant_with_alert(store)
    form = message(f"ACK {short_code(alert_id)}", sender=SUPERVISOR)

    post(supervised, INBOUND, form)
    post(supervised, INBOUND, form)

    assert len(events_of(store, pid, "alert.acknowledged")) == 1
    assert len(_answers(store, SUPERVISOR)) == 1
