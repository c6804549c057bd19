"""Scenario 12: without a generated prompt the fixed text goes out, an alert says why, and the
cycle carries on; inactive participants get nothing."""

from __future__ import annotations

import pytest

from bot.store.event_types.participants import ParticipantStatusChanged
from tests.conversation.daily_cycle.conftest import CycleHarness, FakeCompleter, local
from tools.scheduler import FALLBACK_TEXT

DID = "Did you do it?\n1. Done\n2. Next time"


def _alert(cycle: CycleHarness, pid: str) -> str:
    (alert,) = cycle.events(pid, "alert.raised")
    assert (alert.data.kind, alert.data.notify_supervisors) == ("tool", False)
    return alert.data.summary


def test_a_profile_without_an_anchor_sends_the_fixed_text_and_raises_an_alert(
    cycle: CycleHarness, completer: FakeCompleter
) -> None:
    person = cycle.enroll_with_profile(prompt_anchor="")
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    assert cycle.queued(pid)[:2] == [FALLBACK_TEXT, DID]
    assert "missing prompt_anchor" in _alert(cycle, pid)
    assert completer.requests == []
    assert cycle.participant(pid)["profile"]["total_prompts"] == 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (None, "the generator returned no text"),
        ("  ", "the generator returned no text"),
        (TimeoutError("slow"), "the generator call failed (TimeoutError)"),
    ],
)
def test_a_failed_generator_call_sends_the_fixed_text_and_raises_an_alert(
    cycle: CycleHarness, completer: FakeCompleter, reply: object, reason: str
) -> None:
    completer.replies = [reply]  # type: ignore[list-item]
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    assert cycle.queued(pid, "prompt") == [FALLBACK_TEXT]
    assert reason in _alert(cycle, pid)
    calls = cycle.events(pid, "llm.called")
    assert len(calls) == (0 if isinstance(reply, Exception) else 1)
    assert [t["kind"] for t in cycle.timers(pid, "scheduled")] == [
        "transition",
        "reminder",
        "daily",
    ]


def test_a_paused_participant_gets_no_prompt(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.append(pid, [ParticipantStatusChanged(status="paused")])
    cycle.until(local("09:20"))
    assert cycle.queued(pid) == []
    assert cycle.events(pid, "question.asked", "llm.called", "alert.raised") == []
