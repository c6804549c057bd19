"""Scenarios 13-15: the five-hour reminder is cancelled by any reply, sent once without one,
and tied to its prompt (a newer prompt makes it stale)."""

from __future__ import annotations

from datetime import timedelta

from bot.conversation.daily_cycle.prompt import REMINDER_TEXT, register
from bot.runtime.tool_registry import HABIT_PROMPTS
from tests.conversation.daily_cycle.conftest import CycleHarness, FakeCompleter, local


def _prompted(cycle: CycleHarness) -> str:
    person = cycle.enroll_with_profile()
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    return person["participant_id"]


def _reminder(cycle: CycleHarness, pid: str) -> dict:
    (reminder,) = [t for t in cycle.timers(pid) if t["kind"] == "reminder"]
    return reminder


def test_a_reply_cancels_the_reminder_and_nothing_is_sent_at_14_20(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    cycle.until(local("09:30"))
    cycle.receive(pid, "hello")
    cycle.work()
    cycle.until(local("15:00"), timedelta(minutes=10))
    assert REMINDER_TEXT not in cycle.queued(pid)
    reminder = _reminder(cycle, pid)
    assert (reminder["status"], reminder["reason"]) == ("cancelled", "answered")


def test_a_poll_vote_counts_as_a_reply(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    cycle.receive(pid, "Q: Did you do it? A: Done")
    cycle.work()
    cycle.until(local("15:00"), timedelta(minutes=10))
    assert REMINDER_TEXT not in cycle.queued(pid)
    assert _reminder(cycle, pid)["status"] == "cancelled"


def test_without_a_reply_the_reminder_is_sent_once_at_14_20(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    cycle.until(local("14:20"), timedelta(minutes=10))
    assert cycle.queued(pid, "reminder") == [REMINDER_TEXT]
    cycle.until(local("18:00"), timedelta(minutes=10))
    assert cycle.queued(pid, "reminder") == [REMINDER_TEXT]
    assert _reminder(cycle, pid)["status"] == "fired"


def test_a_late_reply_after_the_reminder_is_handled_normally(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    cycle.until(local("15:00"), timedelta(minutes=10))
    cycle.receive(pid, "1")
    cycle.work()
    assert cycle.events(pid, "timer.cancelled") == []
    assert cycle.events(pid, "work.failed", "work.parked") == []
    (reported,) = cycle.events(pid, "habit.reported")
    assert reported.data.done


def test_only_the_reminder_of_the_newer_prompt_fires(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.schedule(person, "10:10", max_schedules=2)
    cycle.until(local("14:20"), timedelta(minutes=10))
    assert cycle.queued(pid, "reminder") == []
    older, newer = sorted(
        (t for t in cycle.timers(pid) if t["kind"] == "reminder"), key=lambda t: t["due_at"]
    )
    assert (older["status"], older["reason"]) == ("skipped", "stale")
    cycle.until(local("15:00"), timedelta(minutes=10))
    assert cycle.queued(pid, "reminder") == [REMINDER_TEXT]
    assert cycle.timer(newer["timer_id"])["status"] == "fired"


def test_a_reminder_off_setting_arms_no_reminder(
    cycle: CycleHarness, completer: FakeCompleter
) -> None:
    register(completer, HABIT_PROMPTS, reminder_hours=0)
    pid = _prompted(cycle)
    assert [t for t in cycle.timers(pid) if t["kind"] == "reminder"] == []
