"""WhatsApp's 24-hour window: free-form inside it; outside, the template or a deferral."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest

from bot.core.clock import FakeClock
from bot.core.config import ConfigError, load_settings
from bot.store.event_store import EventStore
from tests.channel.dispatching import SENDER, TEMPLATE, Harness
from tests.fakes.twilio_api import FakeTwilio

PHONE = "+14155552671"
TO = f"whatsapp:{PHONE}"


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


@pytest.fixture
def deferring(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio):
    return Harness(database_url, store, clock, fake, WHATSAPP_OUTSIDE_WINDOW="defer")


@pytest.fixture
def templating(database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio):
    return Harness(
        database_url,
        store,
        clock,
        fake,
        WHATSAPP_OUTSIDE_WINDOW="template",
        WHATSAPP_TEMPLATE_SID=TEMPLATE,
    )


def test_inside_the_window_the_text_goes_free_form_from_the_whatsapp_sender(deferring: Harness):
    h = deferring
    p = h.enroll(PHONE, channel="whatsapp")
    h.writes(p, "SM1")
    h.clock.advance(timedelta(hours=23))
    h.queue(p, "Thanks for writing!")

    h.dispatcher().run_once()

    [request] = h.fake.messages
    assert (request.form["To"], request.form["From"]) == (TO, f"whatsapp:{SENDER}")
    assert request.form["Body"] == "Thanks for writing!"
    assert "ContentSid" not in request.form


def test_outside_the_window_the_template_carries_the_text(templating: Harness):
    h = templating
    p = h.enroll(PHONE, channel="whatsapp")
    h.writes(p, "SM1")
    h.clock.advance(timedelta(hours=24))
    oid = h.queue(p, "Time for today's step.\n\nReady?")

    h.dispatcher().run_once()

    [request] = h.fake.messages
    assert request.form["ContentSid"] == TEMPLATE
    assert json.loads(request.form["ContentVariables"]) == {"1": "Time for today's step. Ready?"}
    assert "Body" not in request.form
    assert h.row(oid)["status"] == "sent"


def test_a_template_variable_is_cut_to_1000_characters(templating: Harness):
    h = templating
    p = h.enroll(PHONE, channel="whatsapp")
    h.queue(p, "word " * 300)

    h.dispatcher().run_once()

    [request] = h.fake.messages
    text = json.loads(request.form["ContentVariables"])["1"]
    assert len(text) == 1000 and text.endswith("…")


def test_outside_the_window_a_message_is_deferred_until_the_participant_writes(
    deferring: Harness,
):
    h = deferring
    p = h.enroll(PHONE, channel="whatsapp")
    first = h.queue(p, "Reminder: today's step")
    second = h.queue(p, "And a tip")
    dispatcher = h.dispatcher()

    dispatcher.run_once()
    h.clock.advance(timedelta(days=3))
    dispatcher.run_once()

    assert h.fake.requests == []
    assert (h.row(first)["status"], h.row(second)["status"]) == ("deferred", "pending")
    [deferred] = h.events(p, "message.deferred")
    assert "24-hour window" in deferred.reason

    h.writes(p, "SM2", "sorry, busy week")
    dispatcher.run_once()

    assert [r.form["Body"] for r in h.fake.messages] == ["Reminder: today's step", "And a tip"]
    assert (h.row(first)["status"], h.row(second)["status"]) == ("sent", "sent")


def test_the_window_closes_24_hours_after_the_last_inbound(deferring: Harness):
    h = deferring
    p = h.enroll(PHONE, channel="whatsapp")
    h.writes(p, "SM1")
    h.clock.advance(timedelta(hours=24))
    oid = h.queue(p, "Too late for free-form")

    h.dispatcher().run_once()

    assert h.fake.requests == []
    assert h.row(oid)["status"] == "deferred"


def test_deferred_messages_go_as_the_template_once_the_policy_is_template(
    deferring: Harness, database_url: str, store: EventStore, clock: FakeClock, fake: FakeTwilio
):
    p = deferring.enroll(PHONE, channel="whatsapp")
    oid = deferring.queue(p, "Held")
    deferring.dispatcher().run_once()
    assert deferring.row(oid)["status"] == "deferred"

    templating = Harness(
        database_url,
        store,
        clock,
        fake,
        WHATSAPP_OUTSIDE_WINDOW="template",
        WHATSAPP_TEMPLATE_SID=TEMPLATE,
    )
    templating.dispatcher().run_once()

    [request] = fake.messages
    assert request.form["ContentSid"] == TEMPLATE
    assert templating.row(oid)["status"] == "sent"


def test_the_template_policy_without_a_template_sid_is_refused_at_start():
    with pytest.raises(ConfigError) as raised:
        load_settings({"WHATSAPP_OUTSIDE_WINDOW": "template"}, env_file=None)

    assert "WHATSAPP_TEMPLATE_SID" in str(raised.value)
