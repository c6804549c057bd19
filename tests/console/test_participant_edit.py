"""Changing a participant from the console: applied with the staff member's name, or refused
when the participant changed since the page was drawn."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import post
from tests.factories import enrolled, received


def _participant(services: Services) -> str:
    data = enrolled(name="Ada")
    services.store.append(participant_stream(data.participant_id), [data])
    return data.participant_id


def test_a_change_is_recorded_with_the_staff_member_and_pauses_the_participant(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")

    response = post(
        client,
        f"/console/participants/{pid}/edit",
        {"version": "1", "name": "Ada L.", "timezone": "Europe/London", "status": "paused"},
    )

    assert response.status_code == 302
    row = services.store.projection_row("participants", pid)
    assert (row["name"], row["timezone"], row["status"]) == ("Ada L.", "Europe/London", "paused")
    recorded = services.store.load(participant_stream(pid))[1:]
    assert [e.event_type for e in recorded[:2]] == [
        "participant.updated",
        "participant.status_changed",
    ]
    assert {e.meta["actor"] for e in recorded} == {"staff:researcher@example.org"}


def test_a_stale_form_is_refused_with_a_message_and_nothing_is_applied(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    services.store.append(participant_stream(pid), [received(body="meanwhile")])

    response = post(
        client,
        f"/console/participants/{pid}/edit",
        {"version": "1", "name": "Ada", "timezone": "America/Toronto", "status": "paused"},
    )

    assert response.status_code == 409
    assert "changed since this page was drawn" in response.get_data(as_text=True)
    assert services.store.projection_row("participants", pid)["status"] == "active"
    assert services.store.version(participant_stream(pid)) == 2


def test_a_bad_timezone_or_status_is_named_and_nothing_is_applied(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")

    response = post(
        client,
        f"/console/participants/{pid}/edit",
        {"version": "1", "name": "Ada", "timezone": "Mars/Olympus", "status": "asleep"},
    )

    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "unknown timezone" in page and "status must be one of" in page
    assert services.store.version(participant_stream(pid)) == 1
