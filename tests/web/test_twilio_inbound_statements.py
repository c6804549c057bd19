"""The inbound webhook's one short write: a single read of the participant, no timers read."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient
from sqlalchemy import Select, event

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


def test_the_participant_lookup_is_one_statement_built_once_for_every_webhook(
    client: FlaskClient, services: Services
) -> None:
    """Building and compiling the join costs several times running it: it is built once."""
    enroll(services)
    lookups: list[object] = []

    def record(_conn: Any, clause: Any, *_rest: Any) -> None:
        if isinstance(clause, Select) and "participant_phones" in str(clause):
            lookups.append(clause)

    event.listen(services.store.engine, "before_execute", record)
    try:
        for body in ("one", "two"):
            assert post(client, INBOUND, message(body)).status_code == 200
    finally:
        event.remove(services.store.engine, "before_execute", record)
    assert len(lookups) == 2 and lookups[0] is lookups[1]
