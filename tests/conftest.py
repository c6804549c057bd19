"""Shared fixtures: a fresh, migrated database per test on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import register_column_folds
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.migrate import upgrade
from bot.store.sealing import Sealer

ADMIN_URL = os.environ.get(
    "TANDEM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
RUN = uuid.uuid4().hex[:8]
register_column_folds()  # stores built by tests fold the conversation's memory, as bootstrap's
# Stores in tests seal personal data as production does (bot.store.sealing).
TEST_MASTER_KEY = "dGFuZGVtLXRlc3QtbWFzdGVyLWtleS0wMTIzNDU2Nzg="


def _admin():
    return create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """A migrated template database; unreachable PostgreSQL fails the run, it never skips."""
    name = f"tandem_{RUN}_tpl"
    admin = _admin()
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        pytest.fail(
            f"PostgreSQL at {make_url(ADMIN_URL).render_as_string()} is required by the tests "
            f"and is unreachable: {exc}",
            pytrace=False,
        )
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    yield name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()  # closing the last connection checkpoints the WAL into the file
    return path


def fresh_database(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of a new, migrated database of `kind`, dropped after the test."""
    if kind == "sqlite":
        path = tmp_path / "tandem.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    template = request.getfixturevalue("postgres_template")
    name = f"tandem_{RUN}_{uuid.uuid4().hex[:10]}"
    admin = _admin()
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    request.addfinalizer(drop)
    return make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh migrated database, once on SQLite and once on PostgreSQL."""
    return fresh_database(request.param, request, tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(database_url: str, clock: FakeClock) -> Iterator[EventStore]:
    store = EventStore(make_engine(database_url), clock=clock, sealer=Sealer(TEST_MASTER_KEY))
    yield store
    store.engine.dispose()


@pytest.fixture
def pg_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """A store on a fresh PostgreSQL database only, for what only PostgreSQL does (its row
    locks, the one-message commit of bot/store/flight.py)."""
    url = fresh_database("postgresql", request, tmp_path)
    store = EventStore(make_engine(url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    yield store
    store.engine.dispose()
