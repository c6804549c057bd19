"""The runtime hands the scheduler each intervention's own quiet hours, read at start."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from bot.core.config import load_settings
from bot.core.localtime import QuietHours
from bot.runtime.bootstrap import build_services
from bot.runtime.threads import Runtime, RuntimeOptions
from bot.timers import scheduler


def test_the_scheduler_is_given_the_quiet_hours_interventions_declare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    given: dict[str, Any] = {}
    started = threading.Event()

    def run_forever(services: Any, stop: threading.Event, **options: Any) -> None:
        given.update(options)
        started.set()
        stop.wait(5)

    monkeypatch.setattr(scheduler, "run_forever", run_forever)
    settings = load_settings({"DATABASE_URL": f"sqlite:///{tmp_path}/t.db"}, env_file=None)
    services = build_services(settings)
    runtime = Runtime(services, lambda turn: [], None, RuntimeOptions(0, 0, scheduler=True))  # type: ignore[arg-type]

    runtime.start()
    assert started.wait(5)
    runtime.stop()
    services.close()

    quiet = given["intervention_quiet_hours"]
    assert sorted(quiet) == [
        "cbt-reframe",
        "ema-craving",
        "fit-motivation",
        "phq9-checkin",
        "walk-mrt",
    ]
    assert isinstance(quiet["fit-motivation"], QuietHours)
