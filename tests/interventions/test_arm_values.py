"""`arm.<variable>`, `arm.name` and `participant.arm` in an intervention's conditions and
templates: typed from the variables of the studies whose arms run it, checked at file:line by
the validator, and read through the interpreter, so one intervention serves two arms with
different values."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.interventions.language.loader import load_intervention
from bot.interventions.language.types import Type, name_types
from bot.store.event_types.studies import ParticipantAllocated
from tests.interventions.variants import GOOD, problems
from tests.modules.step_harness import Run

STUDY = """title: Two tones
variables:
  reminder_tone: {type: choice, options: [gentle, firm]}
  nudges: {type: int, min: 0}
arms:
  soft: {intervention: good, variables: {reminder_tone: gentle, nudges: 1}}
  hard: {intervention: good, variables: {reminder_tone: firm, nudges: 3}}
allocation: {method: simple, ratio: {soft: 1, hard: 1}}
"""
GREETING = '"Hi! Tone {{ arm.reminder_tone }}, arm {{ arm.name }} ({{ participant.arm }}). Ready?"'
HURRY = "  - to: goodbye\n    when: arm.nudges > 2\n"


def folder(tmp_path: Path, *, study: str | None = STUDY, greeting: str = GREETING) -> Path:
    """The good fixture as interventions/good beside studies/two-tones (or no study)."""
    made = tmp_path / "interventions" / "good"
    shutil.copytree(GOOD, made)
    welcome = made / "steps" / "welcome.md"
    text = welcome.read_text().replace(
        "\"Hi {{ participant.name or 'there' }}! Ready to start?\"", greeting
    )
    welcome.write_text(text.replace("transitions:\n", "transitions:\n" + HURRY))
    if study is not None:
        (tmp_path / "studies" / "two-tones").mkdir(parents=True)
        (tmp_path / "studies" / "two-tones" / "study.yaml").write_text(study)
    return made


def allocated(arm: str) -> ParticipantAllocated:
    return ParticipantAllocated(
        study="two-tones",
        arm=arm,
        method="simple",
        sequence="s1",
        number=0,
        probabilities={"soft": 0.5, "hard": 0.5},
        conditional={"soft": 0.5, "hard": 0.5},
        seed="f" * 16,
    )


def run_in(made: Path, arm: str) -> Run:
    run = Run(made)
    run.record([allocated(arm)])
    return run


def test_one_intervention_greets_each_arm_with_its_own_values(tmp_path: Path) -> None:
    made = folder(tmp_path)

    soft, hard = run_in(made, "soft"), run_in(made, "hard")

    assert soft.start() == "Hi! Tone gentle, arm soft (soft). Ready?"
    assert hard.start() == "Hi! Tone firm, arm hard (hard). Ready?"


def test_a_condition_on_an_arm_variable_moves_only_that_arms_participants(
    tmp_path: Path,
) -> None:
    made = folder(tmp_path)
    soft, hard = run_in(made, "soft"), run_in(made, "hard")
    soft.start(), hard.start()

    soft.say("hello")
    hard.say("hello")

    assert hard.step == "goodbye"
    assert soft.step != "goodbye"


def test_the_arm_variables_are_typed_as_the_study_declares_them(tmp_path: Path) -> None:
    types = name_types(load_intervention(folder(tmp_path)))

    assert types["arm.reminder_tone"] == Type("choice", ("gentle", "firm"))
    assert types["arm.nudges"].kind == "integer" and types["arm.nudges"].bounds == (0, None)
    assert types["arm.name"] == Type("choice", ("hard", "soft"))


def test_an_intervention_with_arm_variables_validates(tmp_path: Path) -> None:
    assert problems(folder(tmp_path)) == []


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (
            "arm.nudge > 2",
            "steps/welcome.md:11: condition `arm.nudge > 2`: no arm variable 'nudge'; "
            "did you mean 'nudges'?",
        ),
        (
            'arm.nudges == "many"',
            'steps/welcome.md:11: condition `arm.nudges == "many"`:',
        ),
    ],
)
def test_an_unknown_or_mistyped_arm_variable_is_a_validate_problem_at_its_line(
    tmp_path: Path, condition: str, expected: str
) -> None:
    made = folder(tmp_path)
    welcome = made / "steps" / "welcome.md"
    welcome.write_text(welcome.read_text().replace("arm.nudges > 2", condition))

    found = problems(made)

    assert len(found) == 1 and found[0].startswith(expected), found


def test_an_unknown_arm_variable_in_a_template_is_a_validate_problem(tmp_path: Path) -> None:
    made = folder(tmp_path, greeting='"Tone {{ arm.tone }}"')

    found = problems(made)

    assert len(found) == 1 and found[0].startswith("steps/welcome.md:"), found
    assert "tone" in found[0]


def test_arm_values_in_an_intervention_no_study_runs_are_a_validate_problem(
    tmp_path: Path,
) -> None:
    found = problems(folder(tmp_path, study=None, greeting='"Ready?"'))

    assert found == [
        "steps/welcome.md:11: condition `arm.nudges > 2`: `arm.nudges`: no study's arm runs "
        "this intervention (arm values come from studies/<slug>/study.yaml)"
    ]
