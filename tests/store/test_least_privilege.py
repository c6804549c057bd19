"""Append-only without side doors: the app's PostgreSQL role can read and append but never alter,
and SQLite refuses an insert that would replace an event."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from bot.core.clock import FakeClock
from bot.services import erasure
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.events import participant_stream
from bot.store.migrate import grant_app_role
from bot.store.sealing import Sealer
from tests.conftest import ADMIN_URL, TEST_MASTER_KEY, _admin, fresh_database
from tests.factories import enrolled


@pytest.fixture
def app_role_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh PostgreSQL database, and the URL of a new app role granted on it."""
    owner_url = fresh_database("postgresql", request, tmp_path)
    role = f"tandem_app_{uuid.uuid4().hex[:10]}"
    owner = make_engine(owner_url)
    grant_app_role(owner, role)
    owner.dispose()
    yield (
        make_url(owner_url).set(username=role, password=None).render_as_string(hide_password=False)
    )
    admin = _admin()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(owner_url).database}" WITH (FORCE)'))
        conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
    admin.dispose()


def test_the_app_role_reads_appends_and_keeps_the_projections(app_role_url: str) -> None:
    store = EventStore(make_engine(app_role_url), clock=FakeClock())
    try:
        person = enrolled()
        stream = participant_stream(person.participant_id)
        store.append(stream, [person])
        received = MessageReceived(
            message_sid="SM1", from_address="+14155552671", to_address="+15005550006", channel="sms"
        )
        store.append(stream, [received], expected_version=1)

        assert [e.event_type for e in store.load(stream)] == [
            "participant.enrolled",
            "message.received",
        ]
        assert store.projection_row("participants", person.participant_id)["version"] == 2
    finally:
        store.engine.dispose()


@pytest.mark.parametrize(
    "statement",
    [
        "DROP TRIGGER events_append_only ON events",
        "ALTER TABLE events DISABLE TRIGGER ALL",
        "ALTER TABLE events DISABLE TRIGGER events_append_only",
        "UPDATE events SET event_type = 'tampered'",
        "DELETE FROM events",
        "TRUNCATE events",
        "DROP TABLE events",
        "ALTER TABLE participants ADD COLUMN sneaky text",
    ],
)
def test_the_app_role_cannot_alter_or_bypass_the_event_table(
    app_role_url: str, statement: str
) -> None:
    engine = make_engine(app_role_url)
    store = EventStore(engine, clock=FakeClock())
    person = enrolled()
    store.append(participant_stream(person.participant_id), [person])
    try:
        with pytest.raises(DBAPIError, match="permission denied|must be owner"):
            with engine.begin() as conn:
                conn.execute(text(statement))
        assert [e.event_type for e in store.load(participant_stream(person.participant_id))] == [
            "participant.enrolled"
        ]
    finally:
        engine.dispose()


def test_an_app_role_needs_postgresql(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with pytest.raises(ValueError, match="PostgreSQL"):
            grant_app_role(engine, "tandem_app")
    finally:
        engine.dispose()


def test_a_role_name_that_is_not_an_identifier_is_refused() -> None:
    engine = make_engine(ADMIN_URL)
    try:
        with pytest.raises(ValueError, match="role name"):
            grant_app_role(engine, 'x"; DROP TABLE events; --')
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "statement",
    [
        "REPLACE INTO events SELECT * FROM events WHERE seq = 1",
        "INSERT OR REPLACE INTO events (seq, event_id, stream_id, stream_version, event_type, "
        "schema_version, data, meta, occurred_at, recorded_at) SELECT seq, 'new-id', stream_id, "
        "stream_version, 'tampered', schema_version, data, meta, occurred_at, recorded_at "
        "FROM events WHERE seq = 1",
        "INSERT OR REPLACE INTO events (event_id, stream_id, stream_version, event_type, "
        "schema_version, data, meta, occurred_at, recorded_at) SELECT 'new-id', stream_id, "
        "stream_version, 'tampered', schema_version, data, meta, occurred_at, recorded_at "
        "FROM events WHERE seq = 1",
        "INSERT OR REPLACE INTO events (event_id, stream_id, stream_version, event_type, "
        "schema_version, data, meta, idempotency_key, occurred_at, recorded_at) SELECT 'new-id', "
        "stream_id, 99, 'tampered', schema_version, data, meta, 'SMkey', occurred_at, "
        "recorded_at FROM events WHERE seq = 1",
    ],
)
def test_sqlite_refuses_an_insert_that_would_replace_an_event(
    request: pytest.FixtureRequest, tmp_path: Path, statement: str
) -> None:
    store = EventStore(make_engine(fresh_database("sqlite", request, tmp_path)), clock=FakeClock())
    person = enrolled()
    store.append(participant_stream(person.participant_id), [person], idempotency_key="SMkey")
    before = store.load(participant_stream(person.participant_id))
    try:
        with pytest.raises(DBAPIError, match="append-only"):
            with store.engine.begin() as conn:
                conn.execute(text(statement))
        assert store.load(participant_stream(person.participant_id)) == before
    finally:
        store.engine.dispose()


def test_the_app_role_can_erase_a_participant_without_owning_any_table(
    app_role_url: str,
) -> None:
    engine = make_engine(app_role_url)
    store = EventStore(engine, clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    person = enrolled(name="Ada Roleless")
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    try:
        done = erasure.erase(
            store,
            person.participant_id,
            confirm=person.participant_id,
            reason="asked",
            requested_by="participant",
            actor="test",
        )
        assert done.files["vacuumed"] is False  # autovacuum's job: the role owns no table
        assert [e.event_type for e in store.load(stream)][-1] == "participant.erased"
        assert store.load(stream)[0].data.name == "[erased]"
        with engine.connect() as conn:
            assert (
                conn.execute(
                    text("SELECT count(*) FROM participants WHERE name = 'Ada Roleless'")
                ).scalar()
                == 0
            )
    finally:
        engine.dispose()
