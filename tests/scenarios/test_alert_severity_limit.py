"""The once-per-window texting limit applies within a severity, through the signed webhook: a
warning alert texted to the supervisors never holds back the crisis alert that follows it,
while a second crisis within the window is recorded but not texted."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import Harness

SUPERVISORS = ("+14165550199", "+14165550188")
GREETING = "Hi! I'm your habit coach. What would you like to work on?"
CRISIS = "I want to kill myself"
SLIPPED = "I slipped back into old habits this week"


def started(make_harness: Callable[..., Harness]) -> Harness:
    supervisors = ",".join(SUPERVISORS)
    h = make_harness(SUPERVISOR_PHONES=supervisors)
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    return h


def warned(h: Harness) -> None:
    """A turn in which the model raises a warning-level alert for the supervisors."""
    h.script(
        ScriptedReply.tool_calls([("alert_supervisor", {"summary": "Says they slipped back."})]),
        ScriptedReply.text("I've asked the study team to get in touch."),
    )
    h.text(SLIPPED)


def test_a_crisis_a_minute_after_a_warning_reaches_every_supervisor_at_once(
    make_harness: Callable[..., Harness],
) -> None:
    h = started(make_harness)
    warned(h)
    h.advance(timedelta(minutes=1))

    h.text(CRISIS)

    for supervisor in SUPERVISORS:
        warning, crisis = h.outbound(supervisor)
        assert "tool (warning)" in warning and "crisis (critical)" not in warning
        assert "crisis (critical)" in crisis
        assert CRISIS not in crisis  # the quote stays on the alert, out of the text
    kinds = [(a.kind, a.severity, a.quote) for a in h.data("alert.raised")]
    assert kinds == [("tool", "warning", SLIPPED), ("crisis", "critical", CRISIS)]


def test_a_second_crisis_within_the_window_is_recorded_but_not_texted_again(
    make_harness: Callable[..., Harness],
) -> None:
    h = started(make_harness)
    warned(h)
    h.text(CRISIS)
    h.advance(timedelta(minutes=1))

    h.text(CRISIS)

    severities = [a.severity for a in h.data("alert.raised")]
    assert severities == ["warning", "critical", "critical"]
    for supervisor in SUPERVISORS:
        assert len(h.outbound(supervisor)) == 2
