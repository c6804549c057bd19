"""The validator sees an intervention's instruments (through bot.instruments' attach): their
results are typed names, `administer:` must name a declared instrument, `answered.*` exists
for each question and instrument, and a `repeat:` is checked as a recurring schedule."""

from __future__ import annotations

from pathlib import Path

from bot.instruments.administration import attach
from bot.interventions.validation.validate import validate_folder

CONFIG = 'title: X\nversion: 1\nroot: hi\ninstruments: [phq9]\nquiet_hours: "22:00-08:00"\n'


def _problems(tmp_path: Path, front: str) -> list[str]:
    folder = tmp_path / "interventions" / "x"
    (folder / "steps").mkdir(parents=True)
    (folder / "intervention.yaml").write_text(CONFIG)
    (folder / "steps" / "hi.md").write_text(f"---\ntitle: Hi\nsay: Hi\n{front}---\n")
    return [f"{p.line}: {p.message}" for p in validate_folder(folder, attach=attach)]


def test_a_correct_administration_and_its_results_validate(tmp_path: Path) -> None:
    front = (
        "on_enter:\n  - administer: phq9\n    repeat: {every: 2 weeks, until: {count: 6}}\n"
        "transitions:\n  - to: hi\n    when: answered.phq9 and "
        "(instruments.phq9.last.items.i9 > 0 or instruments.phq9.last.band == 'severe')\n"
    )
    assert _problems(tmp_path, front) == []


def test_a_misspelt_result_name_is_refused(tmp_path: Path) -> None:
    front = "transitions:\n  - to: hi\n    when: instruments.phq9.last.totl >= 20\n"
    assert _problems(tmp_path, front) == [
        "6: condition `instruments.phq9.last.totl >= 20`: no value 'instruments.phq9.last.totl'; "
        "did you mean 'instruments.phq9.last.total'?"
    ]


def test_an_undeclared_instrument_is_refused(tmp_path: Path) -> None:
    problems = _problems(tmp_path, "on_enter:\n  - administer: gad7\nend: true\n")
    assert len(problems) == 1 and "no instrument 'gad7'" in problems[0]


def test_a_band_that_is_not_one_of_the_instruments_is_refused(tmp_path: Path) -> None:
    front = "transitions:\n  - to: hi\n    when: instruments.phq9.last.band == 'sever'\n"
    problems = _problems(tmp_path, front)
    assert len(problems) == 1 and "'sever'" in problems[0]


def test_a_repeat_window_in_quiet_hours_without_defer_is_refused(tmp_path: Path) -> None:
    front = (
        "on_enter:\n  - administer: phq9\n    repeat: {every: 1 day, windows: ['07:00-10:00']}\n"
        "end: true\n"
    )
    problems = _problems(tmp_path, front)
    assert len(problems) == 1 and "overlaps quiet hours 22:00-08:00" in problems[0]
    assert _problems(tmp_path / "2", front.replace("']}", "'], quiet_hours: defer}")) == []


def test_a_repeat_that_is_not_a_schedule_is_refused(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path, "on_enter:\n  - administer: phq9\n    repeat: {evry: 1 day}\nend: true\n"
    )
    assert problems and all("repeat:" in p for p in problems)


def test_a_threshold_beyond_the_instruments_range_is_refused(tmp_path: Path) -> None:
    front = "transitions:\n  - to: hi\n    when: instruments.phq9.last.total >= 30\n"
    problems = _problems(tmp_path, front)
    assert len(problems) == 1 and "27" in problems[0], problems
