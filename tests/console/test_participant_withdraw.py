"""Withdrawing from the console: a reason and confirmation, the API's rules, the staff named."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.runtime.worker import Worker
from bot.store.events import participant_stream
from bot.store.schema import outbox
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.factories import enrolled
from tests.runtime.test_worker import echo
from tests.web.researcher import AUTH, BASE

FORM = {"reason": "moved abroad", "requested_by": "participant", "confirm": "yes"}
RESEARCHER = "staff:researcher@example.org"


def _participant(services: Services, phone: str = "+14155552671") -> str:
    data = enrolled(phone, name="Ada", timezone="Europe/London")
    services.store.append(participant_stream(data.participant_id), [data], expected_version=0)
    Worker(services, echo, "w").run_once()  # the greeting is queued, not yet sent
    return data.participant_id


def _outbox_statuses(services: Services, pid: str) -> list[str]:
    with services.store.reading() as conn:
        rows = conn.execute(select(outbox.c.status).where(outbox.c.participant_id == pid))
        return [r.status for r in rows]


def test_a_researcher_withdraws_a_participant_and_every_event_names_them(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    before = services.store.version(participant_stream(pid))

    answer = post(client, f"/console/participants/{pid}/withdraw", FORM)

    assert answer.status_code == 302
    added = services.store.load(participant_stream(pid))[before:]
    assert added[-1].event_type == "participant.withdrawn"
    assert added[-1].data.reason == "moved abroad"
    assert added[-1].data.requested_by == "participant"
    assert "message.suppressed" in [e.event_type for e in added]
    assert {e.meta["actor"] for e in added} == {RESEARCHER}
    assert services.store.projection_row("participants", pid)["status"] == "withdrawn"
    assert "pending" not in _outbox_statuses(services, pid)
    page = get(client, f"/console/participants/{pid}").get_data(as_text=True)
    assert 'id="withdrawn"' in page and "moved abroad" in page and RESEARCHER in page
    assert 'id="take-over"' not in page and 'id="withdraw-participant"' not in page
    assert 'id="save-participant"' not in page


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({**FORM, "reason": "  "}, "reason: say why"),
        ({**FORM, "confirm": ""}, "tick the box to confirm"),
        ({**FORM, "requested_by": "the moon"}, "requested by: one of participant"),
    ],
)
def test_a_withdrawal_without_reason_confirmation_or_requester_writes_nothing(
    signed_in: Callable[[str], FlaskClient], services: Services, form: dict, message: str
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    before = services.store.version(participant_stream(pid))

    answer = post(client, f"/console/participants/{pid}/withdraw", form)

    assert answer.status_code == 400
    page = answer.get_data(as_text=True)
    assert 'id="withdraw-error"' in page and message in page
    assert services.store.version(participant_stream(pid)) == before


def test_a_second_withdrawal_is_refused_and_records_nothing(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    post(client, f"/console/participants/{pid}/withdraw", FORM)
    before = services.store.version(participant_stream(pid))

    again = post(client, f"/console/participants/{pid}/withdraw", FORM)

    assert again.status_code == 409
    assert "already withdrawn" in again.get_data(as_text=True)
    assert services.store.version(participant_stream(pid)) == before


def test_withdrawing_during_a_takeover_ends_it_and_refuses_further_staff_messages(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    post(client, f"/console/participants/{pid}/takeover")

    post(client, f"/console/participants/{pid}/withdraw", FORM)

    assert services.store.projection_row("takeovers", pid)["status"] == "ended"
    sent = post(client, f"/console/participants/{pid}/message", {"text": "hi", "form_token": "t1"})
    assert sent.status_code == 409 and "withdrawn" in sent.get_data(as_text=True)
    retaken = post(client, f"/console/participants/{pid}/takeover")
    assert retaken.status_code == 409
    assert services.store.projection_row("takeovers", pid)["status"] == "ended"


def test_the_status_form_cannot_withdraw_without_a_reason(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("researcher")
    version = services.store.projection_row("participants", pid)["version"]

    answer = post(
        client,
        f"/console/participants/{pid}/edit",
        {
            "version": str(version),
            "name": "Ada",
            "timezone": "Europe/London",
            "status": "withdrawn",
        },
    )

    assert answer.status_code == 400 and "withdraw with the Withdraw form" in answer.get_data(
        as_text=True
    )
    assert services.store.projection_row("participants", pid)["status"] == "active"


def test_a_supervisor_cannot_withdraw(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    pid = _participant(services)
    client = signed_in("supervisor")

    answer = post(client, f"/console/participants/{pid}/withdraw", FORM)

    assert answer.status_code == 403
    assert services.store.projection_row("participants", pid)["status"] == "active"


def test_the_console_and_the_api_withdraw_alike_but_for_the_actor(
    app, signed_in: Callable[[str], FlaskClient], services: Services
) -> None:  # noqa: ANN001
    by_console, by_api = _participant(services), _participant(services, phone="+14155552672")
    client = signed_in("researcher")
    before = services.store.version(participant_stream(by_console))

    post(client, f"/console/participants/{by_console}/withdraw", FORM)
    answer = app.test_client().post(
        f"{BASE}/{by_api}/withdraw",
        json={"reason": FORM["reason"], "requested_by": FORM["requested_by"]},
        headers=AUTH,
    )

    assert answer.status_code == 200
    console_events = services.store.load(participant_stream(by_console))[before:]
    api_events = services.store.load(participant_stream(by_api))[before:]
    assert [(e.event_type, _shape(e.data)) for e in console_events] == [
        (e.event_type, _shape(e.data)) for e in api_events
    ]
    assert {e.meta["actor"] for e in console_events} == {RESEARCHER}
    assert RESEARCHER not in {e.meta.get("actor") for e in api_events}


def _shape(data: object) -> dict:
    """A payload without its ids (each participant has their own outbox rows and timers)."""
    return {k: v for k, v in data.model_dump().items() if not k.endswith("_id")}  # type: ignore[attr-defined]
