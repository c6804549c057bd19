"""Decision files in an intervention folder: the loader reads them into `decisions`, and
`validate_folder` reports their problems, types and references at file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.interventions.language.loader import load_intervention
from bot.interventions.validation.validate import validate_folder

FIXTURE = Path(__file__).parent / "fixtures" / "good"
GOOD = """---
description: A tip, or nothing, once in each window.
when:
  windows: ["09:00-12:00", "14:00-18:00"]
  per_day: 1
available: step.turns > 2
options:
  - name: nothing
    probability: 0.5
  - name: tip
    send: "A short walk after lunch helps, {{ participant.name }}."
    probability: 0.5
outcome:
  ask: mood
  after: 1h
  window: 3h
moderators:
  turns:
    type: int
    value: step.turns
---
For the researchers: why a tip.
"""


def folder_with(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "coach"
    shutil.copytree(FIXTURE, folder)
    (folder / "decisions").mkdir()
    (folder / "decisions" / "walk_tip.md").write_text(text)
    return folder


def line_of(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith(start))


def test_the_loader_reads_a_decision_file_into_the_interventions_decisions(
    tmp_path: Path,
) -> None:
    intervention = load_intervention(folder_with(tmp_path, GOOD))
    decision = intervention.decisions["walk_tip"]
    assert [o.name for o in decision.options] == ["nothing", "tip"]
    assert "decision:walk_tip:send:options.1" in intervention.compiled
    assert validate_folder(intervention.folder) == []


def test_validate_folder_reports_a_bad_sum_at_the_options_line(tmp_path: Path) -> None:
    text = GOOD.replace("probability: 0.5\n  - name: tip", "probability: 0.6\n  - name: tip")
    problems = validate_folder(folder_with(tmp_path, text))
    assert [(Path(p.file).name, p.line) for p in problems if "sum to 1.1" in p.message] == [
        ("walk_tip.md", line_of(text, "options:"))
    ]


def test_validate_folder_types_availability_with_the_interventions_checker(
    tmp_path: Path,
) -> None:
    text = GOOD.replace("available: step.turns > 2", "available: step.turns")
    problems = validate_folder(folder_with(tmp_path, text))
    found = [p.line for p in problems if "`available` must be yes or no" in p.message]
    assert found == [line_of(text, "available:")]


def test_validate_folder_refuses_an_unknown_question_and_step(tmp_path: Path) -> None:
    text = GOOD.replace("ask: mood", "ask: moood").replace(
        '    send: "A short', '    start: welcom\n    #"A short'
    )
    problems = validate_folder(folder_with(tmp_path, text))
    said = {(p.line, p.message.split(";")[0]) for p in problems}
    assert (line_of(text, "ask:"), "no question 'moood'") in said
    assert (line_of(text, "start:"), "no step 'welcom'") in said


def test_a_broken_template_of_an_option_is_a_problem_at_its_line(tmp_path: Path) -> None:
    text = GOOD.replace("{{ participant.name }}", "{{ participant.nmae }}")
    problems = validate_folder(folder_with(tmp_path, text))
    assert [p.line for p in problems if "participant.nmae" in p.message] == [line_of(text, "send:")]
