"""Erasing from the console: admins only, the participant id typed to confirm, `[erased]` after."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled, received

NAME, BODY = "Zebediah Quuxley", "my sister Wilhelmina knows"


def _participant(services: Services) -> str:
    data = enrolled(name=NAME, timezone="Europe/London")
    stream = participant_stream(data.participant_id)
    services.store.append(stream, [data, received(body=BODY)], expected_version=0)
    return data.participant_id


def _form(pid: str, **changes: str) -> dict:
    return {"reason": "asked by email", "requested_by": "participant", "confirm": pid, **changes}


def test_an_admin_erases_a_participant_and_the_page_shows_erased(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    admin = signed_in("admin")
    assert NAME in get(admin, f"/console/participants/{pid}").get_data(as_text=True)

    answer = post(admin, f"/console/participants/{pid}/erase", _form(pid))

    assert answer.status_code == 302
    [erased] = [
        e
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "participant.erased"
    ]
    assert erased.meta["actor"] == "staff:admin@example.org"
    assert erased.data.reason == "asked by email"
    page = get(admin, f"/console/participants/{pid}").get_data(as_text=True)
    assert 'id="erased"' in page and "[erased]" in page
    assert NAME not in page and "Wilhelmina" not in page
    assert 'id="erase-participant"' not in page and 'id="take-over"' not in page


@pytest.mark.parametrize(
    ("changes", "code", "message"),
    [
        ({"confirm": ""}, 400, "type the participant id"),
        ({"confirm": "someone-else"}, 400, "type the participant id"),
        ({"reason": " "}, 400, "reason: say why"),
        ({"requested_by": "nobody"}, 400, "requested by: one of"),
    ],
)
def test_an_erasure_not_confirmed_or_without_reason_is_refused_beside_the_form(
    signed_in: Callable[[str], FlaskClient],
    services: Services,
    changes: dict,
    code: int,
    message: str,
) -> None:
    pid = _participant(services)
    admin = signed_in("admin")
    before = services.store.version(participant_stream(pid))

    answer = post(admin, f"/console/participants/{pid}/erase", _form(pid, **changes))

    page = answer.get_data(as_text=True)
    assert answer.status_code == code
    assert 'id="erase-error"' in page and message in page
    assert "`confirm`" not in page  # the page's words, not the API's field
    assert services.store.version(participant_stream(pid)) == before
    assert NAME in page  # still readable


def test_a_second_erasure_is_refused(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    admin = signed_in("admin")
    post(admin, f"/console/participants/{pid}/erase", _form(pid))

    again = post(admin, f"/console/participants/{pid}/erase", _form(pid))

    assert again.status_code == 409 and "already erased" in again.get_data(as_text=True)


@pytest.mark.parametrize("role", ["researcher", "supervisor"])
def test_only_admins_may_erase_or_see_the_form(
    signed_in: Callable[[str], FlaskClient], services: Services, role: str
) -> None:
    pid = _participant(services)
    client = signed_in(role)

    answer = post(client, f"/console/participants/{pid}/erase", _form(pid))

    assert answer.status_code == 403
    assert services.store.projection_row("participants", pid)["status"] == "active"
    if role == "researcher":
        page = get(client, f"/console/participants/{pid}").get_data(as_text=True)
        assert 'id="erase-participant"' not in page and 'id="withdraw-participant"' in page
