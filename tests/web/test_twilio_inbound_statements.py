"""The inbound webhook's one short write: a single read of the participant, no timers read."""

from __future__ import annotations

from flask.testing import FlaskClient

from bot.store import queries
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
    # The read, the event, the participant's row, the work item (PostgreSQL writes the last
    # two in one statement).
    writes = 2 if services.store.engine.dialect.name == "sqlite" else 1
    assert len(seen) == 2 + writes, seen


def test_stop_still_reads_the_pending_timers_it_cancels(
    client: FlaskClient, services: Services
) -> None:
    enroll(services)
    with statements(services.store.engine) as seen:
        response = post(client, INBOUND, message("STOP"))
    assert response.status_code == 200
    assert any("FROM timers" in s for s in seen)


def test_the_participant_lookup_is_one_statement_compiled_once_for_every_webhook(
    client: FlaskClient, services: Services
) -> None:
    """Building and compiling the join costs several times running it: it is compiled once."""
    enroll(services)
    dialect = services.store.engine.dialect
    with statements(services.store.engine) as seen:
        assert post(client, INBOUND, message("one")).status_code == 200
        compiled = queries._BY_PHONE_LOCKED._for(dialect)
        assert post(client, INBOUND, message("two")).status_code == 200
    assert queries._BY_PHONE_LOCKED._for(dialect) is compiled
    lookups = [s for s in seen if "participant_phones" in s]
    assert len(lookups) == 2 and lookups[0] == lookups[1]
