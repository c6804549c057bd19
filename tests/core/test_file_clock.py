"""The simulated clock processes share (TANDEM_CLOCK): read from a file, refused without
TANDEM_SIMULATION, and said at /ready."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.clock import FileClock, SystemClock, clock_for, is_simulated, write_instant
from bot.core.config import ConfigError, load_settings
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.web import create_app
from tests.web.conftest import settings_for

START = datetime(2026, 1, 5, 6, 0, tzinfo=UTC)


def test_a_file_clock_reads_the_instant_the_driver_writes_and_follows_each_move(
    tmp_path: Path,
) -> None:
    path = tmp_path / "clock"
    write_instant(path, START)
    clock = FileClock(path)
    assert clock.now() == START and is_simulated(clock)
    for hours in (1, 2, 26):  # moves quicker than the file system's time stamps still show
        clock.set(START + timedelta(hours=hours))
        assert clock.now() == START + timedelta(hours=hours)
    assert not is_simulated(SystemClock())


def test_a_missing_or_naive_clock_file_is_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        FileClock(tmp_path / "absent")
    naive = tmp_path / "naive"
    naive.write_text("2026-01-05T06:00:00")
    with pytest.raises(ValueError, match="aware"):
        FileClock(naive)
    with pytest.raises(ValueError, match="aware"):
        write_instant(naive, datetime(2026, 1, 5))  # noqa: DTZ001 - the naive one refused


def test_tandem_clock_is_refused_without_tandem_simulation(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    write_instant(path, START)
    with pytest.raises(ConfigError, match="TANDEM_SIMULATION"):
        load_settings({"TANDEM_CLOCK": str(path)}, env_file=None)
    with pytest.raises(ConfigError, match="TANDEM_SIMULATION"):
        load_settings({"TANDEM_CLOCK": str(path), "TANDEM_SIMULATION": "false"}, env_file=None)
    settings = load_settings({"TANDEM_CLOCK": str(path), "TANDEM_SIMULATION": "1"}, env_file=None)
    assert clock_for(settings.clock_file).now() == START
    assert isinstance(clock_for(load_settings({}, env_file=None).clock_file), SystemClock)


def test_ready_and_the_start_log_say_the_clock_is_simulated(
    tmp_path: Path, store: EventStore, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "clock"
    write_instant(path, START)
    settings = settings_for(database_url, TANDEM_CLOCK=str(path), TANDEM_SIMULATION="true")
    with caplog.at_level("WARNING", logger="bot.runtime.bootstrap"):
        services = build_services(settings, store=store)
    assert "the clock is SIMULATED" in caplog.text
    client = create_app(services).test_client()
    body = client.get("/ready").get_json()
    assert body["clock"] == {"simulated": True, "now": START.isoformat()}
    plain = create_app(build_services(settings_for(database_url), store=store)).test_client()
    assert "clock" not in plain.get("/ready").get_json()
