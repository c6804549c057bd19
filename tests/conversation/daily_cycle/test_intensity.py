"""Scenarios 16-17: the intensity check, once per participant-local day, and its answers
really change what the prompt generator is asked for."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.conversation.daily_cycle.conftest import DAY, CycleHarness, FakeCompleter, local

AMBITIOUS = "slightly more ambitious"


def _reply(cycle: CycleHarness, pid: str, *texts: str) -> None:
    for text in texts:
        cycle.receive(pid, text)
        cycle.work()


def _intensity_days(cycle: CycleHarness, pid: str) -> list[date]:
    asked = cycle.events(pid, "question.asked")
    return [q.data.local_date for q in asked if q.data.kind == "intensity"]


def test_two_prompts_on_the_same_local_day_ask_about_intensity_once(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.schedule(person, "10:10", max_schedules=2)
    cycle.until(local("10:00"))
    assert len(cycle.queued(pid, "prompt")) == 2
    assert _intensity_days(cycle, pid) == [DAY]
    assert sum(body.startswith("How's the intensity?") for body in cycle.queued(pid)) == 1


def test_prompts_at_23_30_and_00_30_local_are_two_days_though_one_utc_day(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "23:40")
    cycle.schedule(person, "00:40", max_schedules=2)
    end = local("00:30", DAY + timedelta(days=1))
    cycle.until(end, timedelta(minutes=30))
    (first, second) = [e.occurred_at for e in cycle.events(pid, "message.queued")[::3]][:2]
    assert first.date() == second.date()  # 03:30 and 04:30 UTC on 5 May
    assert _intensity_days(cycle, pid) == [DAY, DAY + timedelta(days=1)]


@pytest.mark.parametrize(
    ("level", "options"),
    [
        ("low", "1. Keep current\n2. Increase"),
        ("normal", "1. Decrease\n2. Keep current\n3. Increase"),
        ("high", "1. Decrease\n2. Keep current"),
    ],
)
def test_the_options_depend_on_the_level(cycle: CycleHarness, level: str, options: str) -> None:
    person = cycle.enroll_with_profile(intensity=level)
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    question = cycle.queued(person["participant_id"], "question")[-1]
    assert question == f"How's the intensity?\n{options}"


@pytest.mark.parametrize(
    ("level", "reply", "after"),
    [
        ("normal", "3", "high"),
        ("normal", "Increase", "high"),
        ("normal", "high", "high"),
        ("high", "Increase", "high"),
        ("high", "1", "normal"),
        ("normal", "Decrease", "low"),
        ("normal", "1", "low"),
        ("low", "decrease", "low"),
        ("low", "2", "normal"),
        ("normal", "Keep current", "normal"),
        ("high", "2", "high"),
        ("low", "same", "low"),
        ("high", "low", "low"),
    ],
)
def test_the_answer_moves_the_intensity_as_in_promptpipes_table(
    cycle: CycleHarness, level: str, reply: str, after: str
) -> None:
    person = cycle.enroll_with_profile(intensity=level)
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    _reply(cycle, pid, "done", reply)
    assert cycle.participant(pid)["profile"]["intensity"] == after
    (answered,) = cycle.events(pid, "habit.intensity_answered")
    assert (answered.data.previous, answered.data.level) == (level, after)
    changed = [e for e in cycle.events(pid, "profile.saved") if "intensity" in e.data.changes]
    assert len(changed) == 1 + (after != level)  # the test's own profile, then the change


def test_text_without_an_intensity_question_changes_nothing(cycle: CycleHarness) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    _reply(cycle, pid, "Increase", "3")
    assert "intensity" not in cycle.participant(pid)["profile"]
    assert cycle.events(pid, "habit.intensity_answered") == []


def test_an_increase_makes_the_next_prompt_request_more_ambitious(
    cycle: CycleHarness, completer: FakeCompleter
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    _reply(cycle, pid, "1", "3")
    cycle.until(local("09:20", DAY + timedelta(days=1)), timedelta(minutes=30))
    before, after = completer.requests
    assert AMBITIOUS not in before.system
    assert AMBITIOUS in after.system
    assert cycle.queued(pid, "question")[-1] == "How's the intensity?\n1. Decrease\n2. Keep current"


def test_a_word_answers_the_intensity_check_while_did_you_do_it_is_open(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    _reply(cycle, pid, "Could it be a bit longer?")
    assert cycle.events(pid, "habit.intensity_answered", "habit.reported") == []
    _reply(cycle, pid, "Harder please!")
    assert cycle.participant(pid)["profile"]["intensity"] == "high"
    assert cycle.events(pid, "habit.reported") == []
