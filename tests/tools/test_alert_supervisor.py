"""alert_supervisor: the alert it raises, its summary rules, and the per-participant limit."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from bot.conversation.tooling import ToolOutcome
from bot.store.event_types.alerts import AlertRaised
from tests.tools import NOW, context, stream
from tools.alert_supervisor import AlertSupervisor, run


def _earlier(minutes_ago: float, notify: bool = True, kind: str = "tool") -> tuple:
    alert = AlertRaised(alert_id="a0", kind=kind, summary="earlier", notify_supervisors=notify)  # type: ignore[arg-type]
    return alert, NOW - timedelta(minutes=minutes_ago)


def _alert(
    *history: tuple[AlertRaised, datetime], options: dict[str, Any] | None = None, **arguments: Any
) -> ToolOutcome:
    args = AlertSupervisor.model_validate({"summary": "Asks to talk to a person.", **arguments})
    return run(args, context(history=stream(*history), options=options))


def test_an_empty_summary_is_refused() -> None:
    with pytest.raises(ValidationError, match="summary must not be empty: say what happened"):
        AlertSupervisor.model_validate({"summary": "   "})


def test_an_overlong_summary_is_refused_with_its_length_and_the_limit() -> None:
    with pytest.raises(ValidationError, match="summary is 301 characters; keep it to 300"):
        AlertSupervisor.model_validate({"summary": "x" * 301})


def test_an_unknown_severity_is_refused_naming_the_severities() -> None:
    with pytest.raises(ValidationError, match="'info', 'warning' or 'critical'"):
        AlertSupervisor.model_validate({"summary": "x", "severity": "urgent"})


def test_an_alert_notifying_the_supervisors_is_raised_with_the_summary() -> None:
    outcome = _alert(severity="critical")
    (alert,) = outcome.events
    assert outcome.ok and isinstance(alert, AlertRaised)
    assert (alert.kind, alert.summary, alert.severity) == (
        "tool",
        "Asks to talk to a person.",
        "critical",
    )
    assert alert.notify_supervisors and alert.rule == "alert_supervisor"
    assert outcome.message == "Alert raised: the supervisors will be texted."


def test_the_severity_defaults_to_warning() -> None:
    (alert,) = _alert().events
    assert isinstance(alert, AlertRaised) and alert.severity == "warning"


def test_a_second_alert_within_30_minutes_is_refused_and_explained() -> None:
    outcome = _alert(_earlier(10))
    assert not outcome.ok and outcome.events == []
    assert outcome.message == (
        "Alert not sent: the supervisors already got an alert about this participant at "
        "13:50 UTC (10 minutes ago) and are texted at most once per 30 minutes; the next "
        "alert can go out from 14:20 UTC."
    )


def test_an_alert_from_the_safety_screen_counts_towards_the_limit() -> None:
    assert not _alert(_earlier(5, kind="crisis")).ok


def test_an_alert_30_minutes_or_more_ago_does_not_block_a_new_one() -> None:
    assert _alert(_earlier(30)).ok


def test_an_alert_that_did_not_notify_supervisors_does_not_count() -> None:
    assert _alert(_earlier(1, notify=False)).ok


def test_the_window_comes_from_the_study_options() -> None:
    assert not _alert(_earlier(45), options={"alert_window_minutes": 60}).ok


def test_an_invalid_window_option_fails_naming_it() -> None:
    outcome = _alert(options={"alert_window_minutes": "soon"})
    assert not outcome.ok
    assert outcome.message.startswith(
        "Alert not sent: the study option alert_window_minutes must be a number of minutes"
    )
