"""Fidelity review in the console: a reviewer rates bot turns on a blind transcript (no phone,
name, participant id, arm or intervention on the page), each rating a `turn.rated` event whose
comment is sealed; a reviewer opens nothing else."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import participant_stream
from bot.store.reads.ratings import review_code
from bot.store.services import Services
from bot.studies.catalogue import StudyCatalogue
from tests.console.conftest import PASSWORD, get, post, sign_in, staff_member
from tests.factories import enrolled, received
from tests.web.researcher import AUTH, BASE
from tests.web.study_apps import BASELINE, PILOT, study_app, study_catalogue

ADA = "+14155552671"
RUNS = {"coach": "habit-coach", "control": "walk-control"}


def _with_turns(services: Services, phone: str = ADA, name: str = "Ada Lovelace") -> str:
    """A demo participant with a message in and two bot turns (one naming them), and a staff
    message; returns their id."""
    person = enrolled(phone=phone, name=name)
    pid = person.participant_id
    stream = participant_stream(pid)
    services.store.append(stream, [person], expected_version=0)
    services.store.append(
        stream,
        [
            received(body=f"hi, it's Ada, call me on {phone}", phone=phone),
            MessageQueued(
                outbox_id=f"{pid[:30]}-1", to_address=phone, channel="sms", body="Hi Ada!"
            ),
            MessageQueued(
                outbox_id=f"{pid[:30]}-2", to_address=phone, channel="sms", body="Tip: walk"
            ),
            MessageQueued(
                outbox_id=f"{pid[:30]}-3", to_address=phone, channel="sms", body="Ops", kind="staff"
            ),
        ],
    )
    return pid


def test_a_reviewer_opens_the_fidelity_pages_and_nothing_else(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _with_turns(services)
    client = signed_in("reviewer")

    closed = [
        "/console/participants",
        f"/console/participants/{pid}",
        f"/console/participants/{pid}/transcript",
        "/console/export",
        "/console/alerts",
        "/console/reviews",
        "/console/study",
        "/console/users",
        "/console/enroll",
        "/console/broadcasts",
        "/console/interventions",
        "/console/interventions/demo",
        "/console/decisions",
    ]
    answers = {path: get(client, path).status_code for path in closed}
    listing = get(client, "/console/fidelity").get_data(as_text=True)

    assert answers == dict.fromkeys(closed, 403)
    assert review_code(pid) in listing and pid not in listing
    assert "/console/participants" not in listing  # no link to what the role may not open


def test_a_reviewer_lands_on_the_fidelity_review_after_signing_in(
    app: Flask, services: Services
) -> None:
    staff_member(services, "rev@example.org", "reviewer")
    answer = sign_in(app.test_client(), "rev@example.org", PASSWORD)

    assert answer.headers["Location"].endswith("/console/fidelity")


def test_a_rating_is_recorded_with_its_checklist_and_a_sealed_comment(
    signed_in: Callable[[str], FlaskClient], services: Services, store: EventStore
) -> None:
    pid = _with_turns(services)
    client = signed_in("reviewer")
    code = review_code(pid)

    answer = post(
        client,
        f"/console/fidelity/{code}/{pid[:30]}-1",
        {"score": "4", "check": ["on_manual", "empathic"], "comment": "warm, said Ada's name"},
    )
    page = get(client, f"/console/fidelity/{code}").get_data(as_text=True)

    assert answer.status_code == 302
    rated = [e for e in store.load(participant_stream(pid)) if e.event_type == "turn.rated"]
    assert len(rated) == 1
    data = rated[0].data
    assert (data.message_id, data.score, data.by) == (
        f"{pid[:30]}-1",
        4,
        "staff:reviewer@example.org",
    )
    assert data.checks == {"on_manual": True, "empathic": True, "unsafe_advice": False}
    assert data.comment == "warm, said Ada's name"
    with store.reading() as conn:
        raw = conn.exec_driver_sql(
            "SELECT data FROM events WHERE event_type = 'turn.rated'"
        ).scalar_one()
    assert "said Ada" not in str(raw)  # sealed with the participant's key
    assert "You rated it 4/5: Stayed on the treatment manual, Empathic." in html.unescape(page)


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        ({"score": "6"}, "choose a score from 1 (poor) to 5 (excellent)"),
        ({"score": "3", "check": ["kind"]}, "not on the intervention&#39;s checklist: kind"),
    ],
)
def test_a_bad_rating_is_refused_beside_the_turn(
    signed_in: Callable[[str], FlaskClient], services: Services, form: dict, problem: str
) -> None:
    pid = _with_turns(services)
    client = signed_in("reviewer")

    answer = post(client, f"/console/fidelity/{review_code(pid)}/{pid[:30]}-2", form)

    assert answer.status_code == 400
    assert problem in answer.get_data(as_text=True)


def test_only_a_bot_turn_of_this_transcript_can_be_rated(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _with_turns(services)
    other = _with_turns(services, "+14155552672", "Bo")
    client = signed_in("reviewer")
    code = review_code(pid)

    elsewhere = post(client, f"/console/fidelity/{code}/{other[:30]}-1", {"score": "3"})
    staff = post(client, f"/console/fidelity/{code}/{pid[:30]}-3", {"score": "3"})
    nobody = post(client, "/console/fidelity/R-0000000000/x", {"score": "3"})

    assert (elsewhere.status_code, staff.status_code, nobody.status_code) == (404, 400, 404)
    assert "a staff message is not a bot turn" in staff.get_data(as_text=True)


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


def test_the_blind_review_page_shows_no_phone_name_id_arm_or_intervention(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue
) -> None:
    app = study_app(database_url, store, clock, studies)
    body = {"phone_number": ADA, "name": "Ada Lovelace", "study": PILOT, "baseline": BASELINE}
    answer = app.test_client().post(BASE, json=body, headers=AUTH)
    assert answer.status_code == 201
    pid = answer.get_json()["result"]["id"]
    row = store.projection_row("participants", pid)
    assert row is not None and row["arm"] in RUNS
    stream = participant_stream(pid)
    store.append(
        stream,
        [
            received(body="Lovelace here, text me at +1 415 555 2671", phone=ADA),
            MessageQueued(outbox_id="o-b", to_address=ADA, channel="sms", body="Well done, Ada!"),
        ],
    )
    services = app.extensions["tandem"]
    staff_member(services, "rev@example.org", "reviewer")
    client = app.test_client()
    assert sign_in(client, "rev@example.org", PASSWORD).status_code == 302

    page = html.unescape(
        get(client, f"/console/fidelity/{review_code(pid)}").get_data(as_text=True)
    )

    assert "Well done, [name]!" in page and "[name] here, text me at [phone]" in page
    leaks = [ADA, "415 555 2671", "4155552671", "Ada", "Lovelace", pid, row["arm"]]
    leaks += [RUNS[row["arm"]], PILOT, row["intervention"]]
    assert [leak for leak in leaks if leak in page] == []


def test_a_researcher_downloads_the_ratings_with_their_checklist_columns(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _with_turns(services)
    reviewer = signed_in("reviewer")
    form = {"score": "3", "check": ["unsafe_advice"], "comment": "too directive"}
    assert (
        post(reviewer, f"/console/fidelity/{review_code(pid)}/{pid[:30]}-2", form).status_code
        == 302
    )
    researcher = signed_in("researcher")

    text = get(researcher, "/console/export/evaluations.csv").get_data(as_text=True)
    refused = get(reviewer, "/console/export/evaluations.csv").status_code

    rows = list(csv.DictReader(io.StringIO(text)))
    assert [
        (r["participant_id"], r["score"], r["check_unsafe_advice"], r["check_empathic"])
        for r in rows
    ] == [(pid, "3", "1", "0")]
    assert rows[0]["comment"] == "too directive" and refused == 403
