"""The step module: the root step speaks first, transitions are taken in order and at most
once per turn, and every move is an event that says why."""

from __future__ import annotations

from pathlib import Path

from bot.store.event_types.conversation import StateTransitioned
from bot.store.event_types.interventions import (
    JudgementRecorded,
    StepEntered,
    StepReplied,
    StepTurnTaken,
)
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.schedules import ScheduleCreated
from modules.step import StepModule
from tests.interventions.variants import variant
from tests.modules.step_harness import FIXTURES, Run, in_explore


def test_enrollment_enters_the_root_step_and_sends_its_fixed_text_without_the_llm() -> None:
    run = Run()

    reply = run.start()

    assert reply == "Hi Ana! Ready to start?"
    assert run.llm.calls == []
    entered = run.data(StepEntered)
    assert [(e.step, e.via, e.from_step) for e in entered] == [("welcome", "root", None)]
    assert entered[0].revision.startswith("1+")
    assert [s.payload["measurement"] for s in run.data(ScheduleCreated)] == ["mood"]


def test_fixed_wording_rotates_through_its_list() -> None:
    run = Run()
    run.llm.judges("ready", answer="unsure")

    replies = [run.start(), run.say("hmm"), run.say("not sure")]

    assert replies == ["Hi Ana! Ready to start?", "Shall we begin?", "Hi Ana! Ready to start?"]
    assert [r.say for r in run.data(StepReplied)] == [0, 1, 0]


def test_a_transition_that_holds_moves_and_the_new_step_answers_this_message() -> None:
    run = Run()
    run.start()
    run.llm.judges("ready", answer="yes")
    run.llm.says("step:explore:reply", "Great! What would you like to change?")

    reply = run.say("yes, let's go")

    assert reply == "Great! What would you like to change?"
    moved = run.data(StepEntered)[-1]
    assert (moved.from_step, moved.step, moved.via) == ("welcome", "explore", "transition")
    assert moved.condition == 'judgements.ready.answer == "yes"'
    assert moved.values == {"judgements.ready.answer": "yes"}
    assert run.row["profile"]["started"] is True  # the transition's `set` action


def test_the_first_transition_that_holds_wins(tmp_path: Path) -> None:
    folder = variant(
        tmp_path, "steps/welcome.md", replace=('when: judgements.ready.answer == "no"', "")
    )  # the second transition now always holds
    first, second = Run(folder), Run(folder)
    first.llm.judges("ready", answer="yes")
    second.llm.judges("ready", answer="unsure")

    for run in (first, second):
        run.start()
        run.say("hello")

    assert (first.step, second.step) == ("explore", "goodbye")


def test_at_most_one_hop_per_turn() -> None:
    run = Run()
    run.start()
    run.record([JudgementRecorded(judgement="engaged", result={"response": "confused"})])
    run.llm.judges("ready", answer="yes")

    run.say("yes")  # explore -> clarify would hold too, but not in the same turn

    assert run.step == "explore"
    assert [e.step for e in run.data(StepEntered)] == ["welcome", "explore"]


def test_the_turn_counter_counts_messages_answered_in_this_visit() -> None:
    run = in_explore(Run())
    run.say("one")
    run.say("two")

    turns = [(t.step, t.turn) for t in run.data(StepTurnTaken)]

    assert turns == [("welcome", 1), ("explore", 1), ("explore", 2)]
    assert run.row["step_counters"]["turns"] == 2


def test_a_step_prompt_sees_the_conversation_and_its_slots_are_kept() -> None:
    run = in_explore(Run())
    run.llm.says("step:explore:plan", "They want to sleep more.")
    run.llm.says("step:explore:reply", "What time do you go to bed?")

    reply = run.say("I want to sleep better")

    prompt = run.llm.call("step:explore:plan")["messages"][0]["content"]
    assert "You are a warm, brief coach talking with Ana by text message." in prompt
    assert "COACH: Hi Ana! Ready to start?\nCLIENT: yes, let's go" in prompt
    assert prompt.endswith("CLIENT: I want to sleep better\n\nThink about what they need.")
    assert reply == "What time do you go to bed?"
    replied = run.data(StepReplied)[-1]
    assert replied.slots == {"plan": "They want to sleep more.", "reply": reply}
    assert replied.sent == "reply"
    assert run.llm.call("step:explore:reply")["tools"] == ["save_user_profile"]
    assert run.llm.call("step:explore:reply")["model"].name == "careful-model"


def test_a_participants_message_that_looks_like_template_code_is_only_text() -> None:
    run = in_explore(Run())

    run.say("{{ 7*7 }} {% for x in range(3) %}x{% endfor %} [[reply]]")

    prompt = run.llm.call("step:explore:plan")["messages"][0]["content"]
    assert "CLIENT: {{ 7*7 }} {% for x in range(3) %}x{% endfor %} [[reply]]" in prompt
    assert "49" not in prompt


def test_a_failed_completion_sends_the_interventions_fallback() -> None:
    run = in_explore(Run())
    run.llm.says("step:explore:plan", "")

    reply = run.say("hello?")

    assert reply == "Sorry, something went wrong on our side. We'll be in touch."
    assert run.replies[-1].result.error == "step:explore:plan: empty reply"


def test_an_intervention_that_does_not_validate_is_not_run() -> None:
    run = Run("broken")

    reply = run.start()

    assert reply == StepModule(root=FIXTURES).fallback
    error = run.replies[-1].result.error
    assert error.startswith("intervention 'broken': does not validate (9 problems; first: ")
    assert run.llm.calls == [] and run.data(StepEntered) == []


def test_a_new_participant_in_intake_is_moved_into_an_intervention_with_a_root() -> None:
    module = StepModule(root=FIXTURES)
    row = {"conversation_state": "intake", "intervention": "good", "current_step": None}

    moved = module.opening(row, [], "enrolled")

    assert moved == [
        StateTransitioned(
            from_state="intake",
            to_state="step",
            reason="intervention 'good' starts at step 'welcome'",
            source="intervention",
        )
    ]


def test_nobody_is_moved_once_the_conversation_has_begun_or_without_an_intervention() -> None:
    module = StepModule(root=FIXTURES)
    row = {"conversation_state": "intake", "intervention": "good", "current_step": None}
    greeted = Run()
    greeted.record([MessageQueued(outbox_id="o", to_address="+1", channel="sms", body="Hi")])

    assert module.opening(row, greeted.events, "inbound") == []
    assert module.opening({**row, "intervention": "demo"}, [], "enrolled") == []
    assert module.opening({**row, "conversation_state": "feedback"}, [], "enrolled") == []


def test_the_module_offers_every_tool_its_interventions_steps_use_for_the_flow_to_check() -> None:
    assert StepModule(root=FIXTURES).tools == ["save_user_profile"]
