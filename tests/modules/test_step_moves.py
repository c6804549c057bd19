"""Moves other than plain transitions: digressions return, interrupts pause and resume, turn
and time budgets end a step, and a long silence starts a new session."""

from __future__ import annotations

from pathlib import Path

from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import NoteTaken, StepEntered
from tests.interventions.variants import variant
from tests.modules.step_harness import Run, in_explore


def moves(run: Run) -> list[tuple[str | None, str, str]]:
    return [(e.from_step, e.step, e.via) for e in run.data(StepEntered)]


def test_a_digression_answers_once_then_returns_to_where_the_participant_was() -> None:
    run = in_explore(Run())
    run.say("one")
    run.llm.judges("engaged", response="confused", reason="asks what this is")

    digressed = run.say("what is this for?")
    stack = run.row["step_counters"]["stack"]
    run.llm.judges("engaged", response="no", reason="ok")
    run.llm.says("step:explore:reply", "So, what would you like to change?")
    back = run.say("ok I see")

    assert digressed == "Let me explain again: we work on one small habit at a time."
    assert [frame["step"] for frame in stack] == ["explore"]
    assert back == "So, what would you like to change?"
    assert moves(run)[-2:] == [
        ("explore", "clarify", "transition"),
        ("clarify", "explore", "return"),
    ]
    assert run.row["step_counters"]["stack"] == []
    assert run.row["step_counters"]["turns"] == 2  # the visit to explore resumed where it was


def test_an_interrupt_is_entered_from_any_step_and_resumes_the_step_it_paused() -> None:
    run = in_explore(Run())
    run.llm.judges("risk", level="high")

    worried = run.say("I want to give up")
    run.llm.judges("risk", level="low")
    still = run.say("I don't know")
    run.llm.judges("risk", level="none")
    run.llm.says("step:explore:reply", "Thank you for telling me. Shall we carry on?")
    resumed = run.say("I'm safe, I have my sister here")

    assert worried == still == "I'm worried about what you said. Are you safe right now?"
    assert resumed == "Thank you for telling me. Shall we carry on?"
    assert moves(run)[-2:] == [
        ("explore", "risk-check", "interrupt"),
        ("risk-check", "explore", "return"),
    ]
    alerts = run.data(AlertRaised)
    assert [(a.kind, a.severity, a.notify_supervisors) for a in alerts] == [
        ("condition", "critical", True)
    ]
    assert alerts[0].summary == "Fixture coach (step risk-check): The risk judgement was high."
    assert [n.note for n in run.data(NoteTaken)] == ["summary"]  # the risk judgement's action


def test_an_interrupt_or_digression_pauses_a_step_without_running_its_exit_actions() -> None:
    run = in_explore(Run())
    run.llm.judges("risk", level="high")
    run.llm.says("note:summary:SUMMARY", "Low mood.")

    run.say("I want to give up")

    notes = run.data(NoteTaken)
    assert [(n.note, n.step) for n in notes] == [("summary", "explore")]  # the judgement's
    assert run.llm.purposes().count("note:summary:SUMMARY") == 1


def test_an_interrupt_is_not_entered_again_within_its_cooldown() -> None:
    run = in_explore(Run())
    run.llm.judges("risk", level="high")
    run.say("I want to give up")
    run.llm.judges("risk", level="none")
    run.say("sorry, I'm fine")  # back to explore

    run.llm.judges("risk", level="high")
    run.say("well, not really")  # two turns after the interrupt began: cooling down
    cooled = run.step
    run.say("really not")  # three turns after

    assert cooled == "explore" and run.step == "risk-check"


def test_a_turn_budget_takes_the_last_transition_when_no_condition_holds() -> None:
    run = Run()
    run.start()
    run.llm.judges("ready", answer="unsure")

    for text in ("hmm", "maybe", "not sure"):
        run.say(text)
    stayed = run.step
    reply = run.say("still thinking")  # the 4th message: welcome answers at most 3

    assert stayed == "welcome" and run.step == "goodbye"
    assert reply == "Thank you for taking part. Goodbye!"
    assert moves(run)[-1] == ("welcome", "goodbye", "budget")


def test_a_time_budget_ends_the_step_too(tmp_path: Path) -> None:
    folder = variant(tmp_path, "steps/welcome.md", replace=("max_turns: 3", "max_minutes: 30"))
    run = Run(folder)
    run.start()
    run.llm.judges("ready", answer="unsure")
    run.later(minutes=29)
    run.say("hmm")
    stayed = run.step

    run.later(minutes=2)
    run.say("hmm?")

    assert stayed == "welcome" and moves(run)[-1] == ("welcome", "goodbye", "budget")


def test_a_digression_out_of_budget_returns() -> None:
    run = in_explore(Run())
    run.llm.judges("risk", level="high")
    run.say("I want to give up")
    run.llm.judges("risk", level="low")

    for text in ("hm", "hmm", "hmmm"):
        run.say(text)
    stayed = run.step
    run.say("hmmmm")  # the 4th message: the risk check answers at most 3

    assert stayed == "risk-check" and moves(run)[-1] == ("risk-check", "explore", "budget")


def test_a_participant_back_after_a_long_silence_starts_with_the_session_step() -> None:
    run = in_explore(Run())
    run.record([NoteTaken(note="summary", values={"SUMMARY": "sleeping better"})])
    run.later(hours=49)

    welcome_back = run.say("hi again")
    run.say("yes")

    assert welcome_back == "Welcome back! Last time we talked about: sleeping better"
    assert moves(run)[-2:] == [("explore", "recap", "session"), ("recap", "explore", "return")]
