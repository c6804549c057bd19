"""Scenario 19: five minutes after a habit prompt the conversation moves to feedback, silently,
unless it is there already, moved on, a newer prompt re-armed the move, or it is turned off."""

from __future__ import annotations

from datetime import timedelta

from bot.conversation.daily_cycle.prompt import register
from bot.runtime.tool_registry import HABIT_PROMPTS
from bot.store.event_types.conversation import StateTransitioned
from tests.conversation.daily_cycle.conftest import CycleHarness, FakeCompleter, local


def _state(cycle: CycleHarness, pid: str) -> str:
    return cycle.participant(pid)["conversation_state"]


def _moves(cycle: CycleHarness, pid: str) -> list[tuple[str, str | None]]:
    return [(e.data.to_state, e.data.reason) for e in cycle.events(pid, "state.transitioned")]


def test_the_conversation_moves_to_feedback_at_09_25_and_nothing_is_sent(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:24"), timedelta(minutes=1))
    assert _state(cycle, pid) == "intake"
    sent = len(cycle.queued(pid))
    cycle.until(local("09:25"))
    assert _state(cycle, pid) == "feedback"
    assert _moves(cycle, pid) == [("feedback", "auto_feedback")]
    assert len(cycle.queued(pid)) == sent


def test_already_in_feedback_no_move_is_armed(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.append(pid, [StateTransitioned(from_state="intake", to_state="feedback")])
    cycle.schedule(person, "09:30")
    cycle.until(local("09:40"))
    assert [t for t in cycle.timers(pid) if t["kind"] == "transition"] == []
    assert _state(cycle, pid) == "feedback"


def test_a_move_to_feedback_by_the_model_at_09_22_makes_the_timer_stale(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:22"))
    cycle.append(pid, [StateTransitioned(from_state="intake", to_state="feedback")])
    cycle.until(local("09:40"))
    (timer,) = [t for t in cycle.timers(pid) if t["kind"] == "transition"]
    assert (timer["status"], timer["reason"]) == ("skipped", "stale")
    assert _moves(cycle, pid) == [("feedback", None)]


def test_a_newer_prompt_at_09_24_cancels_the_move_and_re_arms_it_for_09_29(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.schedule(person, "09:34", max_schedules=2)
    cycle.until(local("09:24"))
    first, second = sorted(
        (t for t in cycle.timers(pid) if t["kind"] == "transition"), key=lambda t: t["due_at"]
    )
    assert (first["status"], first["reason"]) == ("cancelled", "replaced by a newer habit prompt")
    assert second["due_at"] == local("09:29")
    cycle.until(local("09:28"))
    assert _state(cycle, pid) == "intake"
    cycle.until(local("09:29"))
    assert _state(cycle, pid) == "feedback"


def test_turned_off_no_move_is_armed(cycle: CycleHarness, completer: FakeCompleter) -> None:
    register(completer, HABIT_PROMPTS, auto_feedback_minutes=0)
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("10:00"))
    assert [t for t in cycle.timers(pid) if t["kind"] == "transition"] == []
    assert _state(cycle, pid) == "intake"
