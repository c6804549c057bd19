"""The console's Unknown senders page: an admin erases what a number sent (typed twice, with a
reason); other roles are refused; the number is never shown back."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from flask.testing import FlaskClient

from bot.store.events import sender_of
from bot.store.services import Services
from tests.console.conftest import get, post
from tests.web import twilio_requests as twilio

NUMBER = "+12025550123"
FORM = {"phone": NUMBER, "confirm": NUMBER, "reason": "asked", "requested_by": "other"}


def _bodies(services: Services) -> list[str]:
    return [
        e.data.body
        for e in services.store.read_all()
        if sender_of(e.stream_id) and e.event_type == "message.received"
    ]


def test_an_admin_erases_a_numbers_messages(
    app: Flask, signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    twilio.post(app.test_client(), twilio.INBOUND, twilio.message("private", sender=NUMBER))
    client = signed_in("admin")
    assert "Unknown senders" in get(client, "/console/participants").get_data(as_text=True)

    mismatch = post(client, "/console/senders/erase", {**FORM, "confirm": "+12025550999"})
    assert mismatch.status_code == 400 and _bodies(services) == ["private"]
    done = post(client, "/console/senders/erase", FORM)

    page = done.get_data(as_text=True)
    assert done.status_code == 200 and 'id="sender-erased"' in page
    assert NUMBER not in page and "202" not in page.split('id="sender-erased"')[1][:300]
    first = next(iter(services.store.read_all()))
    services.store.sealer.forget(str(sender_of(first.stream_id)))  # as 5 s later
    assert _bodies(services) == ["[erased]"]
    [erased] = [e for e in services.store.read_all() if e.event_type == "sender.erased"]
    assert erased.meta["actor"] == "staff:admin@example.org"
    again = post(client, "/console/senders/erase", FORM)
    assert again.status_code == 404


def test_a_researcher_may_not_erase_a_number(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("researcher")

    assert get(client, "/console/senders").status_code == 403
    assert post(client, "/console/senders/erase", FORM).status_code == 403
