"""The broadcasts page: a researcher dry-runs, sends and cancels; a supervisor may not."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from bot.services import broadcasts
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.services.broadcasting import enroll


def test_a_researcher_dry_runs_then_sends_then_cancels(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    enroll(services.store, 1, name="Ada")
    enroll(services.store, 2, name="Bo")
    client = signed_in("researcher")
    form = {"message": "Hi {{ participant.name }}", "time": "18:00", "action": "dry_run"}
    dry = post(client, "/console/broadcasts", form)
    page = dry.get_data(as_text=True)
    assert dry.status_code == 200 and "2 participants match" in page and "Hi Ada" in page
    assert broadcasts.listing(services.store) == []

    assert post(client, "/console/broadcasts", {**form, "action": "send"}).status_code == 302
    [made] = broadcasts.listing(services.store)
    assert made["created_by"] == "staff:researcher@example.org"
    assert made["progress"]["pending"] == 2
    listed = get(client, "/console/broadcasts").get_data(as_text=True)
    assert f"broadcast-{made['broadcast_id']}" in listed

    cancel = f"/console/broadcasts/{made['broadcast_id']}/cancel"
    assert post(client, cancel).status_code == 302
    assert broadcasts.show(services.store, made["broadcast_id"])["status"] == "cancelled"
    assert post(client, cancel).status_code == 409


def test_a_bad_condition_is_shown_on_the_form(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    enroll(services.store, 1)
    form = {"message": "hi", "condition": "profile.nope == 1", "action": "dry_run"}
    answer = post(signed_in("admin"), "/console/broadcasts", form)
    assert answer.status_code == 400 and "unknown name" in answer.get_data(as_text=True)


def test_a_step_is_dry_run_and_sent_from_the_form(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    enroll(services.store, 1, name="Ada", intervention="walk-control")
    client = signed_in("researcher")
    form = {"step": "welcome", "action": "dry_run"}
    dry = post(client, "/console/broadcasts", form)
    assert dry.status_code == 200 and "Hi Ada, welcome" in dry.get_data(as_text=True)
    wrong = post(client, "/console/broadcasts", {**form, "step": "tips"})
    assert wrong.status_code == 400 and "no step" in wrong.get_data(as_text=True)
    assert post(client, "/console/broadcasts", {**form, "action": "send"}).status_code == 302
    [made] = broadcasts.listing(services.store)
    assert made["step"] == "welcome"
    assert "step welcome" in get(client, "/console/broadcasts").get_data(as_text=True)


def test_a_supervisor_may_not_broadcast(signed_in: Callable[[str], FlaskClient]) -> None:
    client = signed_in("supervisor")
    assert get(client, "/console/broadcasts").status_code == 403
    assert post(client, "/console/broadcasts", {"message": "hi"}).status_code == 403
