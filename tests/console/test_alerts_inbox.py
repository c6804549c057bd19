"""The alerts inbox: acknowledge and resolve, each an event naming the staff member."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from bot.store.event_types.alerts import AlertRaised
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled


def _alerted(services: Services) -> str:
    data = enrolled(name="Ada")
    stream = participant_stream(data.participant_id)
    services.store.append(stream, [data], expected_version=0)
    services.store.append(
        stream, [AlertRaised(alert_id="a-1", kind="crisis", summary="crisis words")]
    )
    return data.participant_id


def test_a_supervisor_acknowledges_then_resolves_an_alert_with_a_note(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _alerted(services)
    client = signed_in("supervisor")
    inbox = get(client, "/console/alerts").get_data(as_text=True)
    assert "crisis words" in inbox and f"/console/participants/{pid}#transcript" in inbox

    assert post(client, "/console/alerts/a-1/acknowledge").status_code == 302
    acknowledged = services.store.projection_row("alerts", "a-1")
    assert acknowledged["status"] == "acknowledged"
    assert acknowledged["acknowledged_by"] == "staff:supervisor@example.org"
    assert acknowledged["acknowledged_via"] == "console"

    no_note = post(client, "/console/alerts/a-1/resolve", {"note": "  "})
    assert no_note.status_code == 400 and "Write what was done" in no_note.get_data(as_text=True)
    assert post(client, "/console/alerts/a-1/resolve", {"note": "called"}).status_code == 302
    resolved = services.store.projection_row("alerts", "a-1")
    assert resolved["status"] == "resolved" and resolved["resolution_note"] == "called"
    last = services.store.load(participant_stream(pid))[-1]
    assert last.event_type == "alert.resolved"
    assert last.meta["actor"] == "staff:supervisor@example.org"


def test_acknowledging_an_alert_someone_else_took_is_refused_not_applied_twice(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _alerted(services)
    client = signed_in("researcher")
    post(client, "/console/alerts/a-1/acknowledge")
    version = services.store.version(participant_stream(pid))

    again = post(client, "/console/alerts/a-1/acknowledge")

    assert again.status_code == 409
    assert "already acknowledged" in again.get_data(as_text=True)
    assert services.store.version(participant_stream(pid)) == version


def test_a_bad_status_filter_is_named_under_a_clear_heading(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("supervisor")

    answer = get(client, "/console/alerts?status=sleeping")

    page = answer.get_data(as_text=True)
    assert answer.status_code == 400
    assert "not allowed" not in page.lower()
    assert "<h1>This request cannot be answered" in page
    assert "status filter &#39;sleeping&#39; is not an alert status" in page
    assert 'href="/console/alerts">All alerts<' in page
