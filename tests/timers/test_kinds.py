"""Kind policies: grace per kind from TIMER_GRACE, defaults for kinds without a policy."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core.config import load_settings, parse_grace
from bot.runtime.bootstrap import build_services
from bot.timers.kinds import DEFAULT, KINDS, policy_for, with_grace
from bot.timers.scheduler import Scheduler


def test_grace_is_parsed_in_seconds_minutes_hours_days_or_none() -> None:
    assert parse_grace("daily=2h, reminder=30m,at=90,x=1d,transition=none") == {
        "daily": 7200,
        "reminder": 1800,
        "at": 90,
        "x": 86400,
        "transition": None,
    }
    assert parse_grace("") == {}


@pytest.mark.parametrize("bad", ["daily", "daily=soon", "daily=-1h", "=2h", "daily=nones"])
def test_a_malformed_grace_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid grace"):
        parse_grace(bad)


def test_overriding_grace_changes_only_that_kinds_grace() -> None:
    policies = with_grace({"reminder": 60, "daily": None})
    assert policies["reminder"].grace == timedelta(seconds=60)
    assert policies["reminder"].quiet_hours == KINDS["reminder"].quiet_hours
    assert policies["daily"].grace is None
    assert policies["at"] == KINDS["at"]


def test_a_kind_without_a_policy_gets_the_default_one() -> None:
    assert policy_for("engine_specific") == DEFAULT
    assert with_grace({"engine_specific": 5})["engine_specific"].grace == timedelta(seconds=5)


def test_the_scheduler_takes_grace_and_quiet_hours_from_the_settings() -> None:
    settings = load_settings(
        {"DATABASE_URL": "sqlite://", "TIMER_GRACE": "daily=3h", "QUIET_HOURS": "21:30-07:00"},
        env_file=None,
    )
    services = build_services(settings)
    try:
        scheduler = Scheduler(services)
        assert scheduler.policy.kinds["daily"].grace == timedelta(hours=3)
        assert scheduler.policy.quiet_hours is not None
        assert str(scheduler.policy.quiet_hours.start) == "21:30:00"
    finally:
        services.close()
