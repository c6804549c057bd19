"""Broadcasts and the study page must not sort a blinded study's participants by arm for a
role blinded to it: an arm (or an arm's intervention) is refused as a filter from the API and
the console, a broadcast the operator sent to an arm shows the arm hidden (its code for an
admin) and does not list its recipients, and the study page counts the arms' interventions
together."""

from __future__ import annotations

import html

import pytest
from flask import Flask

from bot.core.clock import FakeClock
from bot.services import broadcasts
from bot.store.event_store import EventStore
from bot.studies.blinding import arm_code
from bot.studies.catalogue import StudyCatalogue
from bot.studies.seed import study_seed
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import get, post
from tests.console.test_blinding import RUNS, enrolled, staff
from tests.web.researcher import AUTH
from tests.web.study_apps import BLIND, PILOT, study_app, study_catalogue

PHONES = ("+14155552671", "+14155552672", "+14155552673", "+14155552674")


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


@pytest.fixture
def app(database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue) -> Flask:
    return study_app(database_url, store, clock, studies)


def _arms(app: Flask, study: str) -> dict[str, str]:
    """Four participants enrolled into `study`: participant id -> arm."""
    found = dict(enrolled(app, study, phone) for phone in PHONES)
    assert len(found) == len(PHONES)
    return found


def _api(app: Flask, body: dict) -> tuple[int, dict]:
    answer = app.test_client().post("/broadcasts", json=body, headers=AUTH)
    return answer.status_code, answer.get_json()


def _operator_broadcast(
    app: Flask, store: EventStore, clock: FakeClock, arm: str
) -> broadcasts.Planned:
    """A broadcast to `arm` of the blinded study, made as `tandem broadcast` makes it."""
    return broadcasts.create(
        store,
        app.extensions["tandem.interventions"],
        {"message": "weekly tip", "filter": {"study": BLIND, "arm": arm}},
        actor="operator",
        now=clock.now(),
    )


@pytest.mark.parametrize("dry_run", [True, False])
def test_the_api_refuses_an_arm_of_a_blinded_study_as_a_filter(app: Flask, dry_run: bool) -> None:
    arms = _arms(app, BLIND)
    arm = next(iter(arms.values()))

    status, body = _api(
        app,
        {"message": "hi", "filter": {"study": BLIND, "arm": arm}, "dry_run": dry_run},
    )
    by_intervention = _api(
        app, {"message": "hi", "filter": {"intervention": RUNS[arm]}, "dry_run": True}
    )

    assert status == 400, body
    assert "concealed" in body["message"] and BLIND in body["message"]
    assert str(arm) not in body["message"].replace(BLIND, "")
    assert by_intervention[0] == 400, by_intervention[1]
    assert "would sort participants by arm" in by_intervention[1]["message"]


def test_an_unblinded_studys_arm_is_a_filter_for_the_api(app: Flask) -> None:
    arms = _arms(app, PILOT)
    arm = next(iter(arms.values()))

    status, body = _api(
        app, {"message": "hi", "filter": {"study": PILOT, "arm": arm}, "dry_run": True}
    )

    assert status == 200, body
    assert body["result"]["recipients"] == sum(1 for a in arms.values() if a == arm)


def test_an_operators_broadcast_to_a_blinded_arm_shows_no_arm_nor_its_recipients(
    app: Flask, store: EventStore, clock: FakeClock
) -> None:
    arms = _arms(app, BLIND)
    arm = next(iter(arms.values()))
    planned = _operator_broadcast(app, store, clock, arm)
    client = app.test_client()

    listed = client.get("/broadcasts", headers=AUTH).get_json()["result"]
    shown = client.get(f"/broadcasts/{planned.broadcast_id}", headers=AUTH).get_json()["result"]
    as_operator = broadcasts.show(store, str(planned.broadcast_id))

    assert [b["filter"]["arm"] for b in listed] == ["(blinded)"]
    assert shown["filter"]["arm"] == "(blinded)" and shown["held"] is None
    assert as_operator["filter"]["arm"] == arm
    assert "(blinded)" not in str(broadcasts.recipients(store, str(planned.broadcast_id)))


def test_the_console_refuses_an_arm_filter_and_codes_it_for_an_admin(
    app: Flask, store: EventStore, clock: FakeClock
) -> None:
    arms = _arms(app, BLIND)
    arm = next(iter(arms.values()))
    planned = _operator_broadcast(app, store, clock, arm)
    admin, researcher = staff(app, "admin"), staff(app, "researcher")
    viewer = broadcasts.blinding.Viewer("admin", app.extensions["tandem.studies"], TEST_MASTER_KEY)

    refused = post(
        researcher,
        "/console/broadcasts",
        {"message": "hi", "study": BLIND, "arm": arm, "action": "dry_run"},
    )
    admin_refused = post(
        admin,
        "/console/broadcasts",
        {"message": "hi", "study": BLIND, "arm": arm, "action": "dry_run"},
    )
    coded = broadcasts.show(store, str(planned.broadcast_id), viewer)

    assert refused.status_code == 400 and "concealed" in html.unescape(
        refused.get_data(as_text=True)
    )
    assert admin_refused.status_code == 400
    assert coded["filter"]["arm"] == arm_code(study_seed(BLIND, TEST_MASTER_KEY), arm)
    with pytest.raises(broadcasts.Refused, match="not listed"):
        broadcasts.recipients(store, str(planned.broadcast_id), viewer)


def test_the_study_page_counts_a_blinded_studys_interventions_together(app: Flask) -> None:
    _arms(app, BLIND)

    researcher = html.unescape(
        get(staff(app, "researcher"), "/console/study").get_data(as_text=True)
    )
    admin_page = html.unescape(get(staff(app, "admin"), "/console/study").get_data(as_text=True))

    assert all(run not in researcher for run in RUNS.values())
    assert "(blinded)" in researcher
    assert all(run not in admin_page for run in RUNS.values())
