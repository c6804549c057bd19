"""Quiet hours never hold back a person answering a crisis: from a crisis alert's page a
supervisor's message goes out at night, and the override is recorded with who and when; from
any other alert the takeover's quiet-hours rule still refuses it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flask.testing import FlaskClient

from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.takeover import QuietHoursOverridden
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import post
from tests.factories import enrolled

NIGHT = datetime(2026, 5, 5, 7, 0, tzinfo=UTC)  # 03:00 in Toronto: inside QUIET_HOURS 22-08


def _alerted(services: Services) -> str:
    person = enrolled("+14155552672", timezone="America/Toronto")
    crisis = AlertRaised(alert_id="c-1", kind="crisis", summary="s", notify_supervisors=True)
    relapse = AlertRaised(alert_id="j-1", kind="judgement", summary="s", notify_supervisors=True)
    stream = participant_stream(person.participant_id)
    services.store.append(stream, [person, crisis, relapse], expected_version=0)
    return person.participant_id


def test_a_reply_to_a_crisis_alert_goes_out_in_quiet_hours_and_the_override_is_recorded(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    services.clock.set(NIGHT)
    pid = _alerted(services)
    client = signed_in("supervisor")

    sent = post(client, "/console/alerts/c-1/message", {"text": "Are you safe?", "form_token": "a"})

    assert sent.status_code == 302, sent.get_data(as_text=True)
    stream = [e.data for e in services.store.load(participant_stream(pid))]
    (staff,) = [e for e in stream if isinstance(e, MessageQueued) and e.kind == "staff"]
    (override,) = [e for e in stream if isinstance(e, QuietHoursOverridden)]
    assert (override.alert_id, override.outbox_id, override.by) == (
        "c-1",
        staff.outbox_id,
        "staff:supervisor@example.org",
    )
    assert (override.local_time, override.quiet_hours) == ("03:00", "22:00-08:00")


def test_a_reply_from_an_alert_that_is_not_a_crisis_still_waits_for_the_morning(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    services.clock.set(NIGHT)
    pid = _alerted(services)
    client = signed_in("supervisor")

    held = post(client, "/console/alerts/j-1/message", {"text": "How are you?", "form_token": "b"})

    assert held.status_code == 409 and "inside their quiet hours" in held.get_data(as_text=True)
    stream = [e.data for e in services.store.load(participant_stream(pid))]
    assert not [e for e in stream if isinstance(e, MessageQueued) and e.kind == "staff"]
    assert not [e for e in stream if isinstance(e, QuietHoursOverridden)]
