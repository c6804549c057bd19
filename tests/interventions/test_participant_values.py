"""`participant.turns` (the messages the intervention has answered, every step and visit) and
`participant.flagged` (the crisis screen flagged a message since the intervention last
replied), as conditions and templates see them."""

from __future__ import annotations

from pathlib import Path

from bot.interventions.interpreter.context import data
from bot.interventions.language.loader import load_intervention
from bot.store.event_types.alerts import AlertRaised
from tests.interventions.variants import problems, variant
from tests.modules.step_harness import Run

CBT = Path(__file__).resolve().parents[2] / "interventions" / "cbt-reframe"


def participant(run: Run) -> dict:
    return data(load_intervention(CBT), run.row, run.now, run.events)["participant"]


def crisis_alert() -> AlertRaised:
    return AlertRaised(alert_id="a1", kind="crisis", summary="flagged", rule="en.suicide.direct")


def test_participant_turns_counts_every_step_while_step_turns_counts_this_visit() -> None:
    run = Run(CBT)
    run.start()
    for n in range(5):
        run.say(f"message {n}")  # judgements unscripted: warm-up's budget moves on after 3

    assert run.step == "clarify" and run.row["step_counters"]["turns"] == 1
    assert participant(run)["turns"] == 5


def test_flagged_holds_from_a_crisis_alert_until_the_intervention_replies() -> None:
    run = Run(CBT)
    run.start()
    assert participant(run)["flagged"] is False

    run.record([crisis_alert()])
    assert participant(run)["flagged"] is True

    run.say("sorry")  # the step moves to the summary and replies
    assert run.step == "summary" and participant(run)["flagged"] is False


def test_a_misspelt_participant_value_is_found_by_the_validator(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/goodbye.md",
        replace=("end: true", "transitions:\n  - to: welcome\n    when: participant.flaged"),
    )

    assert problems(folder) == [
        "steps/goodbye.md:5: condition `participant.flaged`: no participant value 'flaged'; "
        "did you mean 'flagged'?"
    ]
