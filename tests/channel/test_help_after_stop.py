"""HELP is always answered: a participant who texted STOP and then HELP gets the help text,
through the signed webhook, the real dispatcher and the twilio SDK on the fake Twilio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.web import create_app
from tests.channel.dispatching import Harness
from tests.fakes.twilio_api import FakeTwilio
from tests.web.twilio_requests import INBOUND, message, post

PHONE = "+14155552671"
HELP_TEXT = "Study line. Reply START to rejoin. Questions: study@example.org"


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


def test_help_from_an_opted_out_participant_is_answered_and_nothing_else_is(
    database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio
) -> None:
    h = Harness(
        database_url,
        store,
        clock,
        fake,
        HELP_TEXT=HELP_TEXT,
        TANDEM_API_TOKENS="t0ken-0123456789abcdefghijklmnopqrstuv",
        SUPERVISOR_PHONES="none",
    )
    p = h.enroll(PHONE)
    client = create_app(h.services).test_client()
    dispatcher = h.dispatcher()

    assert post(client, INBOUND, message("STOP"), token=fake.auth_token).status_code == 200
    dispatcher.run_once()
    reply = h.queue(h.participant(p["participant_id"]), "Your next step")
    assert post(client, INBOUND, message("HELP"), token=fake.auth_token).status_code == 200
    dispatcher.run_once()

    assert [r.form["Body"] for r in fake.messages] == [HELP_TEXT]
    assert h.row(reply)["status"] == "suppressed"
