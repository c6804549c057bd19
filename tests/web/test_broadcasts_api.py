"""`/broadcasts`: token-protected; a dry run records nothing, a broadcast is listed with its
progress and can be cancelled once; bad input is a 4xx naming the field."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.store.event_store import EventStore
from tests.services.broadcasting import enroll
from tests.web.researcher import AUTH


def test_the_broadcasts_api_wants_a_token(client: FlaskClient) -> None:
    assert client.get("/broadcasts").status_code == 401
    assert client.post("/broadcasts", json={"message": "hi"}).status_code == 401


def test_a_dry_run_answers_count_and_samples_and_records_nothing(
    client: FlaskClient, store: EventStore
) -> None:
    for n in range(4):
        enroll(store, n, name=f"P{n}")
    body = {"message": "Hi {{ participant.name }}", "dry_run": True}
    answer = client.post("/broadcasts", json=body, headers=AUTH)
    assert answer.status_code == 200
    result = answer.get_json()["result"]
    assert result["recipients"] == 4 and len(result["samples"]) == 3
    assert result["broadcast_id"] is None
    assert client.get("/broadcasts", headers=AUTH).get_json()["result"] == []


def test_a_broadcast_is_created_shown_and_cancelled_once(
    client: FlaskClient, store: EventStore
) -> None:
    enroll(store, 1)
    body = {"message": "Walk today!", "send_at": {"mode": "local", "time": "18:00"}}
    created = client.post("/broadcasts", json=body, headers=AUTH)
    assert created.status_code == 201
    bid = created.get_json()["result"]["broadcast_id"]
    shown = client.get(f"/broadcasts/{bid}", headers=AUTH).get_json()["result"]
    assert shown["progress"] == {"sent": 0, "held": 0, "failed": 0, "pending": 1}
    assert client.post(f"/broadcasts/{bid}/cancel", json={}, headers=AUTH).status_code == 200
    again = client.post(f"/broadcasts/{bid}/cancel", json={}, headers=AUTH)
    assert again.status_code == 409
    assert client.get("/broadcasts/nope", headers=AUTH).status_code == 404


def test_bad_input_is_a_400_naming_the_field(client: FlaskClient, store: EventStore) -> None:
    enroll(store, 1)
    cases = [
        ({"message": "Hi {{ participant.name"}, "message"),
        ({"message": "hi", "filter": {"condition": "profile.nope == 1"}}, "filter.condition"),
        ({"message": "hi", "filter": {"intervention": "nope"}}, "filter.intervention"),
        ({"message": "hi", "send_at": {"mode": "local", "time": "25:00"}}, "send_at.time"),
        ({"message": "hi", "filter": {"study": "none-such"}}, "filter"),
    ]
    for body, field in cases:
        answer = client.post("/broadcasts", json=body, headers=AUTH)
        assert answer.status_code == 400, body
        assert answer.get_json()["message"].startswith(field), answer.get_json()


def test_a_step_broadcast_is_dry_run_with_the_steps_text_or_refused_naming_the_step(
    client: FlaskClient, store: EventStore
) -> None:
    for n in range(2):
        enroll(store, n, name=f"P{n}", intervention="walk-control")
    body = {"step": "welcome", "dry_run": True}
    answer = client.post("/broadcasts", json=body, headers=AUTH)
    assert answer.status_code == 200, answer.get_json()
    texts = [s["text"] for s in answer.get_json()["result"]["samples"]]
    assert len(texts) == 2 and all("welcome to the walking study" in t for t in texts)
    unknown = client.post("/broadcasts", json={"step": "wellcome"}, headers=AUTH)
    assert unknown.status_code == 400
    assert unknown.get_json()["message"].startswith("step: no step 'wellcome' in walk-control")
    enroll(store, 9)  # habit-coach: no steps
    mixed = client.post("/broadcasts", json={"step": "welcome", "dry_run": True}, headers=AUTH)
    assert mixed.status_code == 400 and "habit-coach" in mixed.get_json()["message"]
    neither = client.post("/broadcasts", json={"dry_run": True}, headers=AUTH)
    assert neither.status_code == 400 and neither.get_json()["message"].startswith("message")
    created = client.post(
        "/broadcasts",
        json={"step": "tip", "filter": {"intervention": "walk-control"}},
        headers=AUTH,
    )
    assert created.status_code == 201
    bid = created.get_json()["result"]["broadcast_id"]
    shown = client.get(f"/broadcasts/{bid}", headers=AUTH).get_json()["result"]
    assert (shown["step"], shown["message"], shown["schedule"]) == ("tip", "", None)
