"""Keys checked at start: web (the app factory), worker and CLI refuse a TANDEM_MASTER_KEY that
is not the database's, and no key where data is sealed, in one line naming the key ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.core.keys import generate_master_key, key_id
from bot.runtime.bootstrap import build_services, verify_keys
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.key_check import KeyCheckFailed
from bot.store.sealing import Sealer
from bot.web import create_app
from tests.conftest import TEST_MASTER_KEY, fresh_database
from tests.factories import enrolled

OTHER_KEY = generate_master_key()


@pytest.fixture(params=["sqlite", "postgresql"])
def sealed_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database holding one participant's data sealed under TEST_MASTER_KEY (no check value
    recorded yet: the data keys name the master key)."""
    url = fresh_database(request.param, request, tmp_path)
    store = EventStore(make_engine(url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    store.append(participant_stream("p-1"), [enrolled(participant_id="p-1", name="Ada")])
    store.engine.dispose()
    yield url


def _store(url: str, master_key: str | None) -> EventStore:
    return EventStore(make_engine(url), clock=FakeClock(), sealer=Sealer(master_key))


def test_the_right_key_is_recorded_and_another_then_refused(sealed_url: str) -> None:
    right = _store(sealed_url, TEST_MASTER_KEY)
    wrong = _store(sealed_url, OTHER_KEY)
    try:
        with pytest.raises(KeyCheckFailed) as before:  # before any check value: the data keys
            verify_keys(wrong)
        verify_keys(right)  # records the check value
        verify_keys(right)
        with pytest.raises(KeyCheckFailed) as after:
            verify_keys(wrong)
        for refused in (before, after):
            message = str(refused.value)
            assert "\n" not in message
            assert key_id(TEST_MASTER_KEY) in message and key_id(OTHER_KEY) in message
    finally:
        right.engine.dispose()
        wrong.engine.dispose()


def test_sealed_data_and_no_key_is_refused(sealed_url: str) -> None:
    keyless = _store(sealed_url, None)
    try:
        with pytest.raises(KeyCheckFailed, match=f"not set.*{key_id(TEST_MASTER_KEY)}"):
            verify_keys(keyless)
    finally:
        keyless.engine.dispose()


def test_a_database_without_sealed_data_starts_without_a_key(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    keyless = _store(fresh_database("sqlite", request, tmp_path), None)
    try:
        verify_keys(keyless)
    finally:
        keyless.engine.dispose()


def test_the_web_app_factory_refuses_a_wrong_key(
    sealed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", sealed_url)
    monkeypatch.setenv("TANDEM_MASTER_KEY", OTHER_KEY)
    with pytest.raises(KeyCheckFailed, match=key_id(OTHER_KEY)):
        create_app()
    monkeypatch.setenv("TANDEM_MASTER_KEY", TEST_MASTER_KEY)
    services = build_services(load_settings())
    try:
        services.store.sealer = Sealer(OTHER_KEY)  # services built elsewhere, handed in
        with pytest.raises(KeyCheckFailed, match=key_id(TEST_MASTER_KEY)):
            create_app(services)
    finally:
        services.store.engine.dispose()


@pytest.mark.parametrize("command", [["worker"], ["replay", "--check"], ["users", "list"]])
def test_the_worker_and_the_cli_refuse_a_wrong_key_in_one_line(
    sealed_url: str, command: list[str]
) -> None:
    env = {"DATABASE_URL": sealed_url, "TANDEM_MASTER_KEY": OTHER_KEY}
    result = CliRunner().invoke(cli, command, env=env)
    assert result.exit_code == 1, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: TANDEM_MASTER_KEY is master key " + key_id(OTHER_KEY))
    assert key_id(TEST_MASTER_KEY) in line
