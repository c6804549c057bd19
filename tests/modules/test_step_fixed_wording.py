"""Questions for interventions in fixed wording: `llm: false` reads answers by number or words
only (anything else is clarified, never sent to the LLM), and `moves_on: true` takes the step's
transition that holds once the answer is recorded, so the next step answers at once."""

from __future__ import annotations

from pathlib import Path

from bot.conversation.timer_turns import handle_fired
from bot.store.event_types.interventions import MeasurementRecorded, StepEntered, StepTurnTaken
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.timers import TimerCancelled, TimerFired, TimerSkipped
from bot.store.projections.timers import pending_rows
from tests.interventions.variants import problems, variant
from tests.modules.step_harness import Run

DEMO = Path(__file__).resolve().parents[2] / "interventions" / "demo"
TOPICS = (
    "What would you like a tip about? Reply with a number:\n1. Sleep\n2. Moving more\n3. Stress"
)


def asked() -> Run:
    """A demo participant who was just sent the topic question."""
    run = Run(DEMO)
    run.start()
    run.fire("measurement")
    return run


def test_an_answer_in_words_is_clarified_without_the_llm() -> None:
    run = asked()

    reply = run.say("something about food?")

    assert reply == f"Sorry, I didn't catch that. {TOPICS}"
    assert run.llm.calls == [] and run.step == "welcome"


def test_an_answer_moving_on_is_answered_by_the_step_its_transition_leads_to() -> None:
    run = asked()

    reply = run.say("stress")

    assert reply is not None and reply.startswith("Here's your tip about stress:")
    assert [(m.measurement, m.value) for m in run.data(MeasurementRecorded)] == [
        ("topic", "Stress")
    ]
    entered = run.data(StepEntered)[-1]
    assert (entered.from_step, entered.step, entered.via) == ("welcome", "tip", "transition")
    assert entered.condition == "measurements.topic != none"
    assert run.data(StepTurnTaken) == []  # an answer is not a turn of the step
    assert run.llm.calls == []


def test_after_the_clarifications_the_step_asks_again() -> None:
    run = asked()
    run.say("what?")

    reply = run.say("no idea")

    assert reply == "No problem, let's pick a topic. Here are the options."
    assert run.step == "welcome" and run.llm.calls == []
    assert run.fire("measurement")  # the question goes out again


def test_a_step_entered_again_before_its_question_went_out_asks_it_once() -> None:
    run = Run(DEMO)
    run.start()

    # Before the topic question's timer fired (a worker starting, or down): the message is a
    # turn of the welcome step, whose transition enters it again and asks again.
    reply = run.say("hello")

    assert reply == "No problem, let's pick a topic. Here are the options."
    asks = [t for t in pending_rows(run.events) if t["kind"] == "measurement"]
    assert len(asks) == 1 and run.step == "welcome"
    assert [c.reason for c in run.data(TimerCancelled)] == ["asked again"]
    run.fire("measurement")
    assert [m.body for m in run.data(MessageQueued)].count(TOPICS) == 1


def test_an_ask_fired_while_the_step_was_entered_again_gives_way_to_the_newer_one() -> None:
    run = Run(DEMO)
    run.start()
    (first,) = [t for t in pending_rows(run.events) if t["kind"] == "measurement"]
    # The scheduler fires the first ask while the "hello" turn is decided: `timer.fired` leaves
    # that turn standing, and a fired timer is past cancelling, so both asks reach a handler.
    run.record([TimerFired(timer_id=first["timer_id"])])
    run.say("hello")

    late = handle_fired(run.row, {**first, "status": "fired"}, run.events, run.now)
    run.record(late)
    run.fire("measurement")

    assert late == [TimerSkipped(timer_id=first["timer_id"], reason="superseded: asked again")]
    assert [m.body for m in run.data(MessageQueued)].count(TOPICS) == 1


def test_a_question_read_without_the_llm_may_not_name_a_model_or_a_prompt(
    tmp_path: Path,
) -> None:
    folder = variant(
        tmp_path, "questions/mood.md", replace=("thanks: ", "llm: false\nmodel: fast\nthanks: ")
    )

    assert problems(folder) == [
        "questions/mood.md:9: `llm: false` reads answers without the LLM: drop the prompt "
        "and `model`"
    ]
