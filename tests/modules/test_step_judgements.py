"""Judgements run when due (every N turns, on entering or leaving a step), are recorded with
their typed result, feed templates and conditions, and fire their actions; notes are taken."""

from __future__ import annotations

from pathlib import Path

from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import (
    JudgementFailed,
    JudgementRecorded,
    NoteTaken,
    StepEntered,
    StepTurnTaken,
)
from tests.interventions.variants import variant
from tests.modules.step_harness import Run, in_explore


def recorded(run: Run, name: str) -> list[JudgementRecorded]:
    return [j for j in run.data(JudgementRecorded) if j.judgement == name]


def test_a_judgement_runs_every_n_turns(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=("judgements: [engaged]", "judgements:\n  - {name: engaged, every: 2}"),
    )
    run = in_explore(Run(folder))

    for text in ("one", "two", "three", "four"):
        run.say(text)

    turns, turn = [], 0
    for event in run.events:
        if isinstance(event.data, StepTurnTaken):
            turn = event.data.turn
        elif isinstance(event.data, JudgementRecorded) and event.data.judgement == "engaged":
            turns.append(turn)
    assert turns == [2, 4]


def test_enter_and_exit_judgements_run_only_when_the_step_changes(tmp_path: Path) -> None:
    variant(
        tmp_path,
        "steps/welcome.md",
        replace=("judgements: [ready]", "judgements:\n  - ready\n  - {name: engaged, when: exit}"),
    )
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=("judgements: [engaged]", "judgements:\n  - {name: ready, when: enter}"),
    )
    run = Run(folder)
    run.start()
    run.llm.judges("ready", answer="unsure")
    run.llm.judges("engaged", response="no", reason="-")
    run.say("hmm")
    before = [(j.judgement, j.when) for j in run.data(JudgementRecorded)]
    run.llm.judges("ready", answer="yes")

    run.say("ok, yes")

    assert before == [("ready", "turn")]
    after = [(j.judgement, j.step, j.when) for j in run.data(JudgementRecorded)][1:]
    assert after == [
        ("ready", "welcome", "turn"),
        ("engaged", "welcome", "exit"),
        ("ready", "explore", "enter"),
    ]


def test_a_judgement_is_asked_for_its_typed_result_with_the_conversation() -> None:
    run = in_explore(Run())

    run.say("I'm not sure what to do")

    call = run.llm.call("judgement:engaged")
    assert call["model"].name == "fast-model"
    assert call["messages"][0]["content"].startswith("Is the client engaged in this step?\n")
    assert "CLIENT: I'm not sure what to do" in call["messages"][0]["content"]
    assert recorded(run, "engaged")[-1].result == {"reason": "short answers", "response": "no"}


def test_a_judgement_result_reaches_the_reply_of_the_same_turn(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=("Think about", "They seem: {{ judgements.engaged.reason }}. Think about"),
    )
    run = in_explore(Run(folder))
    run.llm.judges("engaged", response="no", reason="tired today")

    run.say("meh")

    prompt = run.llm.call("step:explore:plan")["messages"][0]["content"]
    assert "They seem: tired today. Think about what they need." in prompt


def test_a_failed_judgement_is_recorded_and_the_turn_still_replies() -> None:
    run = in_explore(Run())
    run.say("one")
    run.llm.results["judgement:engaged"] = None
    run.llm.says("step:explore:reply", "Tell me more.")

    reply = run.say("hello")

    failed = [f for f in run.data(JudgementFailed) if f.judgement == "engaged"]
    assert [(f.reason, f.step) for f in failed] == [("unscripted", "explore")]
    assert reply == "Tell me more."
    assert run.row["judgements"]["engaged"]["response"] == "no"  # the last good result holds


def test_leaving_a_step_takes_its_notes_and_runs_the_transitions_actions() -> None:
    run = in_explore(Run())
    run.llm.says("note:summary:SUMMARY", "Wants to walk more.")
    run.say("one")
    run.say("two")
    run.llm.judges("engaged", response="yes", reason="keen")

    run.say("I'm ready to plan")

    assert run.data(StepEntered)[-1].step == "goodbye"
    assert [(n.note, n.values, n.step) for n in run.data(NoteTaken)] == [
        ("summary", {"SUMMARY": "Wants to walk more."}, "explore")
    ]
    assert run.row["notes"] == {"SUMMARY": "Wants to walk more."}
    assert (
        "CLIENT: I'm ready to plan"
        in run.llm.call("note:summary:SUMMARY")["messages"][0]["content"]
    )
    alert = run.data(AlertRaised)[-1]
    assert (alert.severity, alert.kind) == ("info", "condition")
    assert alert.summary.endswith("The participant is engaged and ready to plan.")
