"""The inbound webhook's one short write: a single read of the participant, no timers read."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.store.services import Services
from tests.store.statements import statements
from tests.web.twilio_requests import INBOUND, enroll, message, post


def test_a_message_reads_the_participant_once_under_the_lock_and_no_timers(
    client: FlaskClient, services: Services
) -> None:
    enroll(services)
    with statements(services.store.engine) as seen:
        response = post(client, INBOUND, message("I walked today"))
    assert response.status_code == 200
    reads = [s for s in seen if s.startswith("SELECT")]
    assert len(reads) == 1, reads
    assert "FROM participants" in reads[0]
    assert not any("FROM timers" in s for s in seen)
    assert len(seen) == 4, seen  # the read, the event, the participant's row, the work item


def test_stop_still_reads_the_pending_timers_it_cancels(
    client: FlaskClient, services: Services
) -> None:
    enroll(services)
    with statements(services.store.engine) as seen:
        response = post(client, INBOUND, message("STOP"))
    assert response.status_code == 200
    assert any("FROM timers" in s for s in seen)
