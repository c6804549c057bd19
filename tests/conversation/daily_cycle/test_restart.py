"""Scenario 23 for the habit cycle: everything lives in the store, so a restart loses nothing
and sends nothing twice."""

from __future__ import annotations

from datetime import timedelta

from bot.conversation.daily_cycle.prompt import REMINDER_TEXT
from bot.timers.firing import FiringPolicy
from tests.conversation.daily_cycle.conftest import DAY, CycleHarness, local


def test_after_a_restart_the_reminder_goes_once_and_tomorrows_prompt_still_fires(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    # The process stops at 14:00 and a new one starts at 14:35, 15 minutes after the reminder
    # was due (within its grace): a fresh harness over the same store.
    restarted = CycleHarness(cycle.store, cycle.clock, FiringPolicy())
    restarted.clock.set(local("14:35"))
    restarted.fire()
    restarted.work()
    restarted.fire()
    restarted.work()
    assert restarted.queued(pid, "reminder") == [REMINDER_TEXT]
    restarted.until(local("09:20", DAY + timedelta(days=1)), timedelta(minutes=30))
    assert len(restarted.queued(pid, "prompt")) == 2
    assert restarted.queued(pid, "reminder") == [REMINDER_TEXT]
