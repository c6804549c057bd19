"""PostgreSQL: a pooled connection is pinged before use only when it sat idle in the pool
(`PING_IDLE_SECONDS`); a connection back moments ago goes straight to work."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from bot.store.database import make_engine
from tests.conftest import fresh_database


def _pid_of_pooled(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT pg_backend_pid()")).scalar_one()


def _terminate(url: str, pid: int) -> None:
    other = make_engine(url)
    with other.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        conn.commit()
    other.dispose()


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return fresh_database("postgresql", request, tmp_path)


def test_an_idle_connection_that_died_is_replaced_before_use(url: str) -> None:
    engine = make_engine(url, pool_size=1, ping_idle_seconds=0)  # every connection counts as idle
    try:
        dead = _pid_of_pooled(engine)
        _terminate(url, dead)
        assert _pid_of_pooled(engine) != dead  # pinged, found dead, replaced: no error
    finally:
        engine.dispose()


def test_a_connection_back_moments_ago_is_not_pinged(url: str) -> None:
    engine = make_engine(url, pool_size=1, ping_idle_seconds=3600)
    try:
        _terminate(url, _pid_of_pooled(engine))
        # Not pinged: the first statement meets the dead connection (the pool then reconnects).
        with pytest.raises(OperationalError):
            _pid_of_pooled(engine)
        assert _pid_of_pooled(engine) > 0
    finally:
        engine.dispose()
