"""Reading study.yaml: a valid study loads, and each broken one is refused at its file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.language.types import Type
from bot.interventions.validation.validate import intervention_folders
from bot.studies.checks import ArmInterventions
from bot.studies.format import Minimisation, Stratified
from bot.studies.loader import STUDY, StudyError, load_study, read_study

INTERVENTIONS = {"habit-coach", "walk-control"}
ARMS = """\
arms:
  coach:
    intervention: habit-coach
  control:
    intervention: walk-control
"""
STAGE2 = """\
title: SMART
baseline:
  level: {type: choice, options: [low, high]}
arms:
  coach: {intervention: habit-coach}
  control: {intervention: walk-control}
  boost: {intervention: habit-coach}
allocation:
  method: simple
  ratio: {coach: 1, control: 1}
stage2:
  at: {after: 28d}
  after: [coach]
  when: baseline.level == "low"
  allocation:
    method: simple
    ratio: {coach: 1, boost: 1}
"""

# (what is broken, study.yaml, the line, a phrase of the message)
BROKEN = [
    ("unknown arm intervention", "title: T\narms:\n  coach:\n    intervention: habit-coch\n"
     "  control:\n    intervention: walk-control\nallocation:\n  method: simple\n"
     "  ratio: {coach: 1, control: 1}\n", 4, "did you mean 'habit-coach'"),
    ("ratio of 0", f"title: T\n{ARMS}allocation:\n  method: simple\n  ratio:\n    coach: 0\n"
     "    control: 1\n", 10, "a ratio is a whole number, 1 or more"),
    ("stratum field not declared", f"title: T\n{ARMS}allocation:\n  method: stratified\n"
     "  ratio: {coach: 1, control: 1}\n  block_sizes: [4]\n  strata:\n    - sex\n", 12,
     "stratum field `sex` is not a declared baseline field"),
    ("block size not a multiple of the ratio sum", f"title: T\n{ARMS}allocation:\n"
     "  method: blocks\n  ratio: {coach: 1, control: 2}\n  block_sizes:\n    - 3\n    - 4\n",
     12, "block size 4 is not a multiple of the ratio's sum (3)"),
    ("arm variable of the wrong type", "title: T\nvariables:\n  tone: {type: choice, options: "
     "[gentle, firm]}\narms:\n  coach:\n    intervention: habit-coach\n    variables:\n"
     "      tone: loud\n  control:\n    intervention: walk-control\n    variables: {tone: firm}\n"
     "allocation:\n  method: simple\n  ratio: {coach: 1, control: 1}\n", 8,
     "variable `tone`: 'loud' is not one of 'gentle', 'firm'"),
    ("duplicate arm", f"title: T\n{ARMS}  coach:\n    intervention: walk-control\nallocation:\n"
     "  method: simple\n  ratio: {coach: 1, control: 1}\n", 7,
     "`arms.coach` is written twice (first at line 3)"),
    ("minimisation factor not a baseline field", f"title: T\n{ARMS}allocation:\n"
     "  method: minimisation\n  ratio: {coach: 1, control: 1}\n  factors: [age]\n", 10,
     "minimisation factor `age` is not a declared baseline field"),
    ("minimisation probability of 0.5", f"title: T\nbaseline:\n  sex: {{type: bool}}\n{ARMS}"
     "allocation:\n  method: minimisation\n  ratio: {coach: 1, control: 1}\n  factors: [sex]\n"
     "  probability: 0.5\n", 13, "must be above 0.5 and at most 1"),
    ("minimisation probability above 1", f"title: T\nbaseline:\n  sex: {{type: bool}}\n{ARMS}"
     "allocation:\n  method: minimisation\n  ratio: {coach: 1, control: 1}\n  factors: [sex]\n"
     "  probability: 1.2\n", 13, "must be above 0.5 and at most 1, not 1.2"),
    ("stratified over free text", f"title: T\nbaseline:\n  job: {{type: text}}\n{ARMS}"
     "allocation:\n  method: stratified\n  ratio: {coach: 1, control: 1}\n  block_sizes: [2]\n"
     "  strata: [job]\n", 13, "stratum field `job` is text: only a choice or bool field"),
    ("stratified over an optional field", "title: T\nbaseline:\n  sex: {type: bool, optional: "
     f"true}}\n{ARMS}allocation:\n  method: stratified\n  ratio: {{coach: 1, control: 1}}\n"
     "  block_sizes: [2]\n  strata: [sex]\n", 13, "stratum field `sex` is optional"),
    ("unknown key", f"title: T\nseed: 1234\n{ARMS}allocation:\n  method: simple\n"
     "  ratio: {coach: 1, control: 1}\n", 2, "unknown key `seed`"),
    ("missing arms", "title: T\nallocation:\n  method: simple\n  ratio: {coach: 1, control: 1}\n",
     1, "`arms` is required"),
    ("stage-2 option naming no arm", STAGE2.replace("{coach: 1, boost: 1}", "{coach: 1, "
     "bost: 1}"), 17, "stage-2 option `bost` names no arm"),
    ("stage-2 arm that is no stage-1 arm", STAGE2.replace("after: [coach]", "after: [boost]"), 13,
     "`boost` is no stage-1 arm"),
    ("stage-2 condition over an undeclared field", STAGE2.replace("baseline.level", "baseline.lvl"),
     14, "unknown name `baseline.lvl`"),
    ("stage-2 condition of the wrong type", STAGE2.replace('"low"', "3"), 14, "`stage2.when`"),
    ("stage-2 condition that is no condition", STAGE2.replace('== "low"', "=== 1"), 14,
     "not a valid condition"),
    ("stage-2 trigger with both a step and a time", STAGE2.replace("{after: 28d}", "{after: 28d, "
     "step: review}"), 12, "either at a `step` or `after` a time"),
    ("unknown allocation method", f"title: T\n{ARMS}allocation:\n  method: urn\n"
     "  ratio: {coach: 1, control: 1}\n", 8, "unknown method 'urn'"),
    ("a ratio of one arm", f"title: T\n{ARMS}allocation:\n  method: simple\n  ratio:\n"
     "    coach: 1\n", 9, "at least two arms to randomise between"),
    ("an arm in no ratio", f"title: T\n{ARMS}  extra:\n    intervention: habit-coach\n"
     "allocation:\n  method: simple\n  ratio: {coach: 1, control: 1}\n", 7,
     "arm `extra` is in no ratio"),
    ("an undeclared arm variable", f"title: T\n{ARMS}    variables: {{tone: firm}}\nallocation:\n"
     "  method: simple\n  ratio: {coach: 1, control: 1}\n", 7, "`tone` is not declared"),
    ("an arm without a required variable", "title: T\nvariables:\n  tone: {type: text}\n"
     f"{ARMS}    variables: {{tone: firm}}\nallocation:\n  method: simple\n"
     "  ratio: {coach: 1, control: 1}\n", 5, "arm `coach` gives no value for the variable `tone`"),
    ("invalid YAML", f"title: T\n{ARMS}allocation:\n  method: [simple\n", 9, "invalid YAML"),
]  # fmt: skip


def write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "trial"
    folder.mkdir()
    (folder / STUDY).write_text(text)
    return folder


@pytest.mark.parametrize(
    ("text", "line", "phrase"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_a_broken_study_is_refused_at_its_line(
    tmp_path: Path, text: str, line: int, phrase: str
) -> None:
    folder = write(tmp_path, text)

    with pytest.raises(StudyError) as refused:
        load_study(folder, INTERVENTIONS)

    where = f"{folder / STUDY}:{line}: "
    assert any(str(p).startswith(where) and phrase in str(p) for p in refused.value.problems), (
        "\n".join(str(p) for p in refused.value.problems)
    )


def test_the_shipped_walk_pilot_loads_as_stratified_blocks() -> None:
    root = Path(__file__).resolve().parents[2]
    shipped = {folder.name for folder in intervention_folders(root / "interventions")}

    study = load_study(root / "studies" / "walk-pilot", shipped)

    assert isinstance(study.allocation, Stratified)
    assert study.allocation.strata == ["activity_level"]
    assert {arm.intervention for arm in study.arms.values()} == INTERVENTIONS


def test_a_smart_study_with_a_second_stage_loads(tmp_path: Path) -> None:
    study = load_study(write(tmp_path, STAGE2), INTERVENTIONS)

    assert study.stage2 is not None and set(study.stage2.allocation.ratio) == {"coach", "boost"}


def test_a_stage2_condition_is_typed_against_the_interventions_names(tmp_path: Path) -> None:
    text = STAGE2.replace('baseline.level == "low"', "judgements.walked.days < 2")
    names = {"habit-coach": {"judgements.walked.days": Type("text", optional=True)}}
    catalogue = ArmInterventions(frozenset(INTERVENTIONS), names=names)

    _, problems = read_study(write(tmp_path, text), catalogue)

    assert [p.line for p in problems] == [14] and "judgements.walked.days" in problems[0].message


def test_a_stage2_condition_over_an_unknown_intervention_name_is_refused(tmp_path: Path) -> None:
    text = STAGE2.replace('baseline.level == "low"', "judgements.walkd.days < 2")
    names = {"habit-coach": {"judgements.walked.days": Type("integer", optional=True)}}
    catalogue = ArmInterventions(frozenset(INTERVENTIONS), names=names)

    _, problems = read_study(write(tmp_path, text), catalogue)

    assert ["unknown name `judgements.walkd.days`" in p.message for p in problems] == [True]


def test_a_stage2_step_must_be_a_step_of_the_first_arms_intervention(tmp_path: Path) -> None:
    text = STAGE2.replace("{after: 28d}", "{step: reviw}")
    catalogue = ArmInterventions(frozenset(INTERVENTIONS), steps={"habit-coach": {"review"}})

    _, problems = read_study(write(tmp_path, text), catalogue)

    assert [(p.line, "`reviw` is no step of 'habit-coach'" in p.message) for p in problems] == [
        (12, True)
    ]


def test_a_folder_without_study_yaml_is_refused(tmp_path: Path) -> None:
    _, problems = read_study(tmp_path, INTERVENTIONS)

    assert [p.message for p in problems] == [f"no {STUDY} in this folder"]


def test_minimisation_defaults_to_a_probability_of_eight_tenths(tmp_path: Path) -> None:
    text = f"title: T\nbaseline:\n  sex: {{type: bool}}\n{ARMS}allocation:\n"
    text += "  method: minimisation\n  ratio: {coach: 1, control: 1}\n  factors: [sex]\n"

    study = load_study(write(tmp_path, text), INTERVENTIONS)

    assert isinstance(study.allocation, Minimisation) and study.allocation.probability == 0.8


def test_the_full_example_in_the_documentation_loads(tmp_path: Path) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "studies.md").read_text()
    example = docs.split("```yaml\n", 1)[1].split("```", 1)[0]

    study = load_study(write(tmp_path, example), INTERVENTIONS)

    assert study.blinded and study.stage2 is not None and len(study.arms) == 3
