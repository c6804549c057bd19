"""The retry of a failed turn (pure): what can be retried, when, and what follows the last."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.conversation.turn_retry import after_failure, retryable
from bot.core.config import load_settings
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.timers import TimerScheduled

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
PARTICIPANT = {"participant_id": "p1", "timezone": "UTC"}
DOWN = "LLM call failed: HTTP 503: overloaded"


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (DOWN, True),
        ("LLM call failed: timed out: no answer within 45 s (3 attempt(s))", True),
        ("empty reply", True),
        ("LLM call failed: no LLM configured", False),
        ("prompt 'intake': 'nmae' is undefined", False),
        ("intervention 'x': no such intervention", False),
    ],
)
def test_only_failures_that_time_can_mend_are_retried(failure: str, expected: bool) -> None:
    assert retryable(failure) is expected


def test_each_failure_schedules_the_next_delay_and_the_last_raises_an_alert() -> None:
    delays = (2, 10, 30)
    scheduled = [
        after_failure(
            PARTICIPANT, DOWN, trigger="inbound", current=None, attempt=a, delays=delays, now=NOW
        )
        for a in range(4)
    ]

    timers = [events[0] for events in scheduled[:3]]
    assert all(isinstance(t, TimerScheduled) and t.kind == "turn_retry" for t in timers)
    assert [t.due_at - NOW for t in timers] == [timedelta(minutes=m) for m in delays]
    assert [t.payload["attempt"] for t in timers] == [1, 2, 3]
    (alert,) = scheduled[3]
    assert isinstance(alert, AlertRaised) and alert.kind == "turn_failed"
    assert not alert.notify_supervisors


def test_with_retries_off_a_failure_schedules_nothing_and_alerts_nobody() -> None:
    assert (
        after_failure(
            PARTICIPANT, DOWN, trigger="inbound", current=None, attempt=0, delays=(), now=NOW
        )
        == []
    )


def test_a_retry_that_fails_for_a_reason_time_cannot_mend_alerts_at_once() -> None:
    (alert,) = after_failure(
        PARTICIPANT,
        "LLM call failed: no LLM configured",
        trigger="enrolled",
        current=None,
        attempt=1,
        delays=(2, 10, 30),
        now=NOW,
    )
    assert isinstance(alert, AlertRaised) and "the greeting" in alert.summary


@pytest.mark.parametrize(
    ("value", "delays"),
    [("2,10,30", [2, 10, 30]), (" 1 , 5 ", [1, 5]), ("off", []), ("", []), ("0.5", [0.5])],
)
def test_turn_retry_minutes_reads_a_list_of_delays(value: str, delays: list[float]) -> None:
    settings = load_settings({"TURN_RETRY_MINUTES": value}, env_file=None)
    assert settings.turn_retry_minutes == delays


@pytest.mark.parametrize("value", ["2,soon", "0", "-5", "20000"])
def test_a_bad_turn_retry_minutes_is_refused_by_name(value: str) -> None:
    with pytest.raises(Exception, match="TURN_RETRY_MINUTES"):
        load_settings({"TURN_RETRY_MINUTES": value}, env_file=None)
