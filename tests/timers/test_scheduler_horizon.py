"""The scheduler arms only timers due within its horizon; the sweep arms the rest in time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import SystemClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.timers import one_shot
from bot.timers.scheduler import Scheduler
from tests.factories import enrolled
from tests.timers.live import wait_for


@pytest.fixture
def services(database_url: str) -> Iterator[Services]:
    settings = load_settings({"DATABASE_URL": database_url}, env_file=None)
    built = build_services(settings, clock=SystemClock())
    yield built
    built.close()


def _add(services: Services, phone: str, seconds: float) -> str:
    data = enrolled(phone=phone, timezone="UTC")
    person = {"participant_id": data.participant_id, "timezone": "UTC"}
    timer = one_shot.scheduled(person, "at", datetime.now(UTC) + timedelta(seconds=seconds))
    services.store.append(participant_stream(data.participant_id), [data, timer])
    return timer.timer_id


def _fired(services: Services, timer_id: str) -> bool:
    row = services.store.projection_row("timers", timer_id)
    return row is not None and row["status"] == "fired"


def test_a_timer_beyond_the_horizon_is_not_armed_at_start_but_fires_on_time(
    services: Services,
) -> None:
    near, far = _add(services, "+14155550101", 0.5), _add(services, "+14155550102", 3.0)
    scheduler = Scheduler(
        services, quiet_hours=None, sweep_seconds=0.3, horizon=timedelta(seconds=1.5)
    )
    scheduler.start()
    try:
        assert scheduler.armed == 1  # only the near one
        wait_for(lambda: _fired(services, far), 15, "the far timer to be armed and fire")
        row = services.store.projection_row("timers", far)
        assert row is not None and row["late_seconds"] < 1.0
        assert _fired(services, near)
    finally:
        scheduler.stop()
