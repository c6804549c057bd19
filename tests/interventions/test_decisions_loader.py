"""Decision files in an intervention folder: the loader reads them into `decisions`, and
`validate_folder` reports their problems, types and references at file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
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


# Broken one way at a time, through `tandem interventions validate` on the folder: exit 1, and
# the problem printed at the decision file's line (the replacement's first line, or the first
# line starting with `at`; "last: x": the last line starting with x).
REFUSED = [
    ("probability: 0.5\n  - name: tip", "probability: 0.7\n  - name: tip", "sum to 1.2",
     "options:"),
    ("    probability: 0.5\n  - name: tip", "    probability: 0\n  - name: tip",
     "is 0, outside the bounds 0.1-0.9", None),
    ("  window: 3h", "  window: 30m", "must be longer than the question's delay (after 1h)", None),
    ("  turns:\n    type: int\n    value: step.turns", "  turns: step.turns",
     "moderator `turns` has no type", None),
    ("available: step.turns > 2", "available: step.turns", "`available` must be yes or no", None),
    ("    type: int", "    type: bool", "must be yes or no, but `step.turns` is integer", "value:"),
    ("  per_day: 1", "  per_day: 0", "`per_day` is at least 1", None),
    ('  windows: ["09:00-12:00", "14:00-18:00"]', '  windows: ["09:00-12:00", "11:00-18:00"]',
     "the windows overlap", None),
    ("    probability: 0.5\n  - name: tip", "    probability: participant.name\n  - name: tip",
     "must be a number, but `participant.name` is text", None),
    ("  ask: mood", "  ask: moood", "no question 'moood'", None),
    ("  - name: tip", "  - name: nothing", "used twice", "last: - name: nothing"),
    ("  after: 1h", "  after: 1h\n  within: 1h", "`within` does not go with `ask`", "within:"),
    ("outcome:", "reward: 1\noutcome:", "unknown key `reward`", None),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "phrase", "at"), REFUSED, ids=[r[2] for r in REFUSED])
def test_tandem_interventions_validate_refuses_a_broken_decision_file_at_its_line(
    tmp_path: Path, old: str, new: str, phrase: str, at: str | None
) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    folder = folder_with(tmp_path, text)
    result = CliRunner().invoke(cli, ["interventions", "validate", str(folder)])
    assert result.exit_code == 1, result.output
    if at is not None and at.startswith("last: "):
        line = max(n for n, s in enumerate(text.splitlines(), 1) if s.strip().startswith(at[6:]))
    else:
        line = line_of(text, at or new.strip().splitlines()[0])
    where = f"{folder / 'decisions' / 'walk_tip.md'}:{line}: "
    said = [s for s in result.output.splitlines() if s.startswith(where) and phrase in s]
    assert said and not said[0].startswith(f"{where}warning"), result.output


def test_the_table_refuses_a_dozen_ways_and_the_good_file_validates(tmp_path: Path) -> None:
    assert len(REFUSED) >= 12
    result = CliRunner().invoke(
        cli, ["interventions", "validate", str(folder_with(tmp_path, GOOD))]
    )
    assert result.exit_code == 0 and ": ok" in result.output, result.output
