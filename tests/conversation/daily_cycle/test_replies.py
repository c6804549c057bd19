"""Scenario 18 and the life of a question: "Done" counts a success, the message still reaches
the module, and an answered (or superseded) question takes no second answer."""

from __future__ import annotations

from datetime import timedelta

from bot.conversation.daily_cycle.replies import on_reply
from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.habits import HabitReported
from tests.conversation.daily_cycle.conftest import DAY, MODULE_REPLY, CycleHarness, local


def _prompted(cycle: CycleHarness, **profile: object) -> str:
    person = cycle.enroll_with_profile(**profile)
    cycle.schedule(person, "09:30")
    cycle.until(local("09:20"))
    return person["participant_id"]


def _reply(cycle: CycleHarness, pid: str, *texts: str) -> None:
    for text in texts:
        cycle.receive(pid, text)
        cycle.work()


def test_done_counts_a_success_and_the_message_still_reaches_the_module(
    cycle: CycleHarness,
) -> None:
    pid = _prompted(cycle, success_count=4)
    _reply(cycle, pid, "Done!")
    assert cycle.participant(pid)["profile"]["success_count"] == 5
    (reported,) = cycle.events(pid, "habit.reported")
    assert (reported.data.done, reported.data.answer) == (True, "Done")
    assert cycle.queued(pid, "reply") == [MODULE_REPLY]


def test_on_reply_only_returns_events_for_the_turn(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    history = cycle.events(pid)
    person = cycle.participant(pid)
    events = on_reply(person, "1", history, cycle.clock.now())
    assert [type(e) for e in events] == [HabitReported, ProfileSaved]
    assert events[1].changes == {"success_count": 1}
    assert cycle.events(pid) == history  # nothing was written


def test_next_time_is_recorded_without_a_success(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    _reply(cycle, pid, "2")
    (reported,) = cycle.events(pid, "habit.reported")
    assert (reported.data.done, reported.data.answer) == (False, "Next time")
    assert "success_count" not in cycle.participant(pid)["profile"]


def test_a_second_answer_to_an_answered_question_is_not_counted(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    _reply(cycle, pid, "done", "keep", "1", "done")
    assert cycle.participant(pid)["profile"]["success_count"] == 1
    assert len(cycle.events(pid, "habit.reported")) == 1
    assert len(cycle.queued(pid, "reply")) == 4  # every message still reached the module


def test_unrelated_text_leaves_the_question_open(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    _reply(cycle, pid, "What does anchor mean?", "I'm done with it, yes")
    assert cycle.events(pid, "habit.reported", "habit.intensity_answered") == []
    _reply(cycle, pid, "yes I did")
    assert cycle.participant(pid)["profile"]["success_count"] == 1


def test_a_newer_prompt_closes_the_older_prompts_questions(cycle: CycleHarness) -> None:
    pid = _prompted(cycle)
    cycle.until(local("09:20", DAY + timedelta(days=1)), timedelta(minutes=30))
    _reply(cycle, pid, "1", "1", "1")
    reported = cycle.events(pid, "habit.reported")
    newest = [q for q in cycle.events(pid, "question.asked") if q.data.kind == "did_you_do_it"]
    assert [r.data.question_id for r in reported] == [newest[-1].data.question_id]
    assert cycle.participant(pid)["profile"]["intensity"] == "low"  # the second "1"


def test_a_message_sent_before_the_prompt_does_not_answer_its_question(
    cycle: CycleHarness,
) -> None:
    person = cycle.enroll_with_profile()
    pid = person["participant_id"]
    cycle.schedule(person, "09:30")
    cycle.clock.set(local("09:20"))
    cycle.fire()  # the prompt's timer fired; the worker has not run it yet
    cycle.receive(pid, "1")  # an answer to something else, waiting in the queue
    cycle.work()
    assert cycle.queued(pid, "prompt") != []
    assert cycle.events(pid, "habit.reported") == []
