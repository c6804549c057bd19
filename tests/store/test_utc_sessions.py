"""PostgreSQL: every session of Tandem's engine runs in UTC whatever the server's own zone, so
timestamps come back zoned `datetime.UTC`, and SQL that casts a timestamp to a date does it in
UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import select, text

from bot.core.clock import FakeClock
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.schema import UtcDateTime, events
from tests.conftest import _admin, fresh_database
from tests.factories import enrolled

# Late evening in Auckland is the morning before in UTC: a session in Auckland's zone casts
# this instant to the next day.
LATE = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database whose own default zone is Auckland's (as a host's local zone may be)."""
    url = fresh_database("postgresql", request, tmp_path)
    name = url.rsplit("/", 1)[1]
    admin = _admin()
    with admin.connect() as conn:
        conn.execute(text(f"ALTER DATABASE \"{name}\" SET timezone = 'Pacific/Auckland'"))
    admin.dispose()
    return url


def test_a_session_is_in_utc_whatever_the_database_default(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SHOW TimeZone")).scalar_one() == "UTC"
            day = conn.execute(text("SELECT (:at)::timestamptz::date"), {"at": LATE}).scalar_one()
            now = conn.execute(text("SELECT now()")).scalar_one()
        assert day.isoformat() == "2026-03-01"  # 2026-03-02 in Auckland's zone
        assert now.tzinfo is UTC
    finally:
        engine.dispose()


def test_stored_instants_read_back_zoned_utc_and_unchanged(url: str) -> None:
    store = EventStore(make_engine(url), clock=FakeClock(LATE))
    try:
        person = enrolled()
        store.append(participant_stream(person.participant_id), [person])
        with store.reading() as conn:
            occurred, recorded = conn.execute(
                select(events.c.occurred_at, events.c.recorded_at)
            ).one()
        for value in (occurred, recorded):
            assert value == LATE
            assert value.tzinfo is UTC
    finally:
        store.engine.dispose()


def test_a_value_in_another_zone_is_converted_to_utc() -> None:
    """The pass-through is for values already in UTC; any other zone is converted (a session
    that another tool set to its own zone, say)."""
    auckland = LATE.astimezone(timezone(timedelta(hours=13)))
    converted = UtcDateTime().process_result_value(auckland, None)
    assert converted == LATE
    assert converted.tzinfo is UTC
    assert UtcDateTime().process_result_value(LATE, None) is LATE
