"""The review queue: a review item quoted, counted in the nav, cleared with one click as not
a crisis or escalated to a crisis alert (texting the supervisors), each recorded with who; a
supervisor never sees operational alerts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import MASTER_KEY, get, post
from tests.factories import enrolled
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH

WORDS = "gave my console to my cousin, won't need it"
SUPERVISOR = "+15005550111"


@pytest.fixture
def services(database_url: str, store: EventStore, clock) -> Services:  # noqa: ANN001
    settings = settings_for(
        database_url, TANDEM_MASTER_KEY=MASTER_KEY, SUPERVISOR_PHONES=SUPERVISOR
    )
    return build_services(settings, clock=clock, store=store)


@pytest.fixture
def app(services: Services) -> Flask:
    app = create_app(services)
    app.testing = True
    return app


def _participant(services: Services, *alerts: AlertRaised) -> str:
    person = enrolled("+14155550123", name="Ada")
    stream = participant_stream(person.participant_id)
    services.store.append(stream, [person, *alerts], expected_version=0)
    return person.participant_id


REVIEW_ID = "5b0c3f2e-6a1d-4c8e-9f7a-2d4b6e8a1c3f"


def _review(alert_id: str = REVIEW_ID) -> AlertRaised:
    return AlertRaised(
        alert_id=alert_id,
        kind="review",
        severity="review",
        rule="learned",
        summary="The learned line scored a message 0.60.",
        quote=WORDS,
    )


def test_a_supervisor_reads_the_quoted_item_and_clears_it_as_not_a_crisis(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services, _review())
    client = signed_in("supervisor")
    page = get(client, "/console/reviews").get_data(as_text=True)
    assert WORDS.replace("'", "&#39;") in page and 'id="open-reviews-count"' in page

    assert post(client, f"/console/reviews/{REVIEW_ID}/dismiss").status_code == 302

    (dismissed,) = [
        e
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "review.dismissed"
    ]
    assert (dismissed.data.by, dismissed.data.via) == ("staff:supervisor@example.org", "console")
    row = services.store.projection_row("alerts", REVIEW_ID)
    assert (row["status"], row["resolution_note"]) == ("resolved", "not a crisis")
    after = get(client, "/console/reviews").get_data(as_text=True)
    assert "Nothing to review." in after and 'id="open-reviews-count"' not in after
    assert "not a crisis, by staff:supervisor@example.org" in after


def test_escalating_raises_a_crisis_alert_quoting_the_message_and_texts_supervisors(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services, _review())
    client = signed_in("supervisor")

    assert post(client, f"/console/reviews/{REVIEW_ID}/escalate").status_code == 302

    stream = services.store.load(participant_stream(pid))
    (escalated,) = [e.data for e in stream if e.event_type == "review.escalated"]
    assert (escalated.by, escalated.via) == ("staff:supervisor@example.org", "console")
    crisis = [e.data for e in stream if e.event_type == "alert.raised"][-1]
    assert (crisis.alert_id, crisis.kind, crisis.quote) == (
        escalated.crisis_alert_id,
        "crisis",
        WORDS,
    )
    texts = [e.data for e in stream if e.event_type == "message.queued"]
    assert [(t.to_address, t.kind, t.to_participant) for t in texts] == [
        (SUPERVISOR, "alert", False)
    ]
    assert WORDS not in (texts[0].body or "")
    assert any(
        e.event_type == "timer.scheduled" and e.data.kind == "alert_escalation" for e in stream
    )
    inbox = get(client, "/console/alerts").get_data(as_text=True)
    assert 'id="open-alerts-count"' in inbox and "escalated by staff:supervisor" in inbox

    again = post(client, f"/console/reviews/{REVIEW_ID}/dismiss")
    assert again.status_code == 409 and "already cleared" in again.get_data(as_text=True)


def test_a_review_item_is_not_acknowledged_or_resolved_as_an_alert(
    client_api: FlaskClient, services: Services
) -> None:
    _participant(services, _review())

    answer = client_api.post(f"/alerts/{REVIEW_ID}/acknowledge", headers=AUTH)

    assert answer.status_code == 409 and "review queue" in answer.get_data(as_text=True)
    assert services.store.projection_row("alerts", REVIEW_ID)["status"] == "open"


def test_a_supervisor_never_sees_an_operational_alert_nor_its_participant(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    failed = AlertRaised(alert_id="op-1", kind="turn_failed", summary="the LLM failed three times")
    pid = _participant(services, failed)
    supervisor, researcher = signed_in("supervisor"), signed_in("researcher")

    inbox = get(supervisor, "/console/alerts").get_data(as_text=True)
    assert "the LLM failed" not in inbox and 'id="open-alerts-count"' not in inbox
    assert get(supervisor, "/console/alerts/op-1").status_code == 403
    assert post(supervisor, "/console/alerts/op-1/acknowledge").status_code == 403
    assert get(supervisor, f"/console/participants/{pid}").status_code == 403
    assert "the LLM failed" in get(researcher, "/console/alerts").get_data(as_text=True)


@pytest.fixture
def client_api(app: Flask) -> FlaskClient:
    return app.test_client()


def test_the_study_page_counts_review_items_apart_from_open_alerts(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    _participant(services, _review())

    page = get(signed_in("researcher"), "/console/study").get_data(as_text=True)

    assert '<td id="open-reviews">1</td>' in page and '<td id="open-alerts">0</td>' in page


def test_a_review_items_own_page_sends_to_the_queue_and_says_it_texts_nobody(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    _participant(services, _review())

    page = get(signed_in("researcher"), f"/console/alerts/{REVIEW_ID}").get_data(as_text=True)

    assert "a review item texts nobody" in page and 'href="/console/reviews"' in page
    assert get(signed_in("supervisor"), f"/console/alerts/{REVIEW_ID}").status_code == 403
