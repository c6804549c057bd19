"""A `repeat:`'s `from:` names an event of the intervention (enrollment, an instrument's
completion, a step entered, a profile date); anything else is refused at the action's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.instruments.administration import attach
from bot.interventions.validation.validate import validate_folder

CONFIG = (
    'title: X\nversion: 1\nroot: hi\ninstruments: [phq9]\nquiet_hours: "22:00-08:00"\n'
    "profile:\n  quit_date: {type: date, description: The day they quit}\n"
    "  goal: {type: text, description: Their goal}\n"
)


def _problems(tmp_path: Path, start: str) -> list[str]:
    folder = tmp_path / "interventions" / "x"
    (folder / "steps").mkdir(parents=True)
    (folder / "intervention.yaml").write_text(CONFIG)
    front = (
        "on_enter:\n  - administer: phq9\n"
        f"    repeat: {{every: 2 weeks, from: {start}, until: {{count: 3}}}}\nend: true\n"
    )
    (folder / "steps" / "hi.md").write_text(f"---\ntitle: Hi\nsay: Hi\n{front}---\n")
    found = validate_folder(folder, attach=attach)
    return [f"{Path(p.file).name}:{p.line}: {p.message}" for p in found]


@pytest.mark.parametrize(
    "start", ["enrollment", "phq9.completed", "hi.entered", "profile.quit_date"]
)
def test_each_kind_of_start_validates(tmp_path: Path, start: str) -> None:
    assert _problems(tmp_path, start) == []


@pytest.mark.parametrize(
    ("start", "said"),
    [
        ("phq9.complete", "no event 'phq9.complete'; did you mean 'phq9.completed'?"),
        ("gad7.completed", "no event 'gad7.completed'"),
        ("welcome.entered", "no event 'welcome.entered'"),
        ("profile.quit_day", "no event 'profile.quit_day'; did you mean 'profile.quit_date'?"),
        ("the first answer", "no event 'the first answer'"),
    ],
)
def test_an_unknown_event_is_refused_at_the_actions_line(
    tmp_path: Path, start: str, said: str
) -> None:
    [problem] = _problems(tmp_path, start)
    assert problem.startswith("hi.md:5: repeat: `from: "), problem
    assert said in problem
    assert "a schedule counts from enrollment, <instrument>.completed, <step>.entered" in problem


def test_a_profile_field_that_is_not_a_date_is_refused(tmp_path: Path) -> None:
    assert _problems(tmp_path, "profile.goal") == [
        "hi.md:5: repeat: `from: profile.goal`: profile.goal is text (or none), not a date; a "
        "schedule counts from a profile field declared with `type: date`"
    ]
