"""An intervention slug that names no intervention is refused where it is named: enrolling or
updating with it is a 400 naming the usable slugs, and nothing is recorded."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.store.event_store import EventStore
from tests.web.researcher import AUTH, BASE, enroll, event_types

KNOWN = (
    "known: cbt-reframe, demo, ema-craving, fit-motivation, habit-coach, health-intake, "
    "ot-mentor, phq9-checkin, smart-walk, walk-control, walk-mrt"
)


def test_enrolling_in_an_unknown_intervention_is_a_400_naming_the_known_ones(
    client: FlaskClient, store: EventStore
) -> None:
    response = client.post(
        BASE, json={"phone_number": "+14155552671", "intervention": "habit-coch"}, headers=AUTH
    )

    assert response.status_code == 400
    body = response.get_json()
    assert body["message"] == f"intervention: no intervention 'habit-coch'; {KNOWN}"
    assert body["errors"] == [
        {"field": "intervention", "message": f"no intervention 'habit-coch'; {KNOWN}"}
    ]
    assert client.get(BASE, headers=AUTH).get_json()["result"] == []


def test_moving_a_participant_to_an_unknown_intervention_is_a_400_and_changes_nothing(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client, intervention="demo")

    response = client.put(
        f"{BASE}/{participant['id']}", json={"intervention": "nosuch"}, headers=AUTH
    )

    assert response.status_code == 400
    assert response.get_json()["message"] == f"intervention: no intervention 'nosuch'; {KNOWN}"
    assert event_types(store, participant["id"]) == ["participant.enrolled"]
    shown = client.get(f"{BASE}/{participant['id']}", headers=AUTH).get_json()["result"]
    assert shown["intervention"] == "demo"
