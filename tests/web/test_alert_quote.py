"""GET /alerts/{id} quotes the participant's message that raised the alert, sealed like the
message: after the participant is erased the quote reads as erased."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.services import erasure
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import new_id, participant_stream
from bot.store.personal import ERASED
from tests.factories import enrolled
from tests.web.researcher import AUTH

WORDS = "took the whole bottle after the exams"


def alerted(store: EventStore) -> tuple[str, str]:
    person = enrolled("+14155550123")
    alert = AlertRaised(
        alert_id=new_id(),
        kind="crisis",
        severity="critical",
        summary="The crisis screen flagged a message.",
        notify_supervisors=True,
        quote=WORDS,
    )
    store.append(participant_stream(person.participant_id), [person, alert], 0)
    return person.participant_id, alert.alert_id


def test_one_alert_quotes_its_message_until_the_participant_is_erased(
    client: FlaskClient, store: EventStore
) -> None:
    pid, alert_id = alerted(store)

    before = client.get(f"/alerts/{alert_id}", headers=AUTH)
    assert before.status_code == 200 and before.get_json()["result"]["quote"] == WORDS
    listed = client.get("/alerts", headers=AUTH).get_json()["result"]
    assert [a["quote"] for a in listed] == [None]  # the list never carries message text

    erasure.erase(store, pid, confirm=pid, reason="asked", requested_by="participant", actor="test")

    after = client.get(f"/alerts/{alert_id}", headers=AUTH).get_json()["result"]
    assert after["quote"] == ERASED and WORDS not in str(after)


def test_an_unknown_alert_is_a_404_and_the_page_needs_a_token(client: FlaskClient) -> None:
    assert client.get(f"/alerts/{new_id()}", headers=AUTH).status_code == 404
    assert client.get(f"/alerts/{new_id()}").status_code == 401
