"""The issue's mistakes made in the shipped PHQ-9 and EMA designs, one per copy: each is
refused by the validator at the file and the line of the mistake, with a message that says
what is wrong; the correct numeric template validates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.instruments.administration import attach
from bot.interventions.validation.validate import validate_folder

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"
PHQ9_WHEN = "when: answered.phq9 and (instruments.phq9.last.items.i9 > 0 or "
PHQ9_SAY = "{{ instruments.phq9.last.band }}); this is"
EMA_WINDOWS = 'windows: ["08:00-12:00", "12:00-16:00", "16:00-21:00"]'

# name: (intervention, file, text, replacement, what the message says)
CORPUS: dict[str, tuple[str, str, str, str, str]] = {
    "threshold-past-the-top-of-the-score": (
        "phq9-checkin",
        "steps/between.md",
        "instruments.phq9.last.total >= 20)",
        "instruments.phq9.last.total >= 30)",
        "`instruments.phq9.last.total >= 30` can never be true: "
        "`instruments.phq9.last.total` is 0 to 27",
    ),
    "item-threshold-every-answer-passes": (
        "phq9-checkin",
        "steps/between.md",
        PHQ9_WHEN,
        "when: answered.phq9 and (instruments.phq9.last.items.i9 >= 0 or ",
        "`instruments.phq9.last.items.i9 >= 0` is always true",
    ),
    "template-band-not-among-the-bands": (
        "phq9-checkin",
        "steps/between.md",
        PHQ9_SAY,
        '{{ instruments.phq9.last.band }}){% if instruments.phq9.last.band == "sever" %}!'
        "{% endif %}; this is",
        "'sever' is not an option of `instruments.phq9.last.band`",
    ),
    "template-band-by-its-number": (
        "phq9-checkin",
        "steps/between.md",
        PHQ9_SAY,
        "{{ instruments.phq9.last.band }}){% if instruments.phq9.last.band == 4 %}!"
        "{% endif %}; this is",
        "`instruments.phq9.last.band` is one of",
    ),
    "window-inside-quiet-hours-without-defer": (
        "ema-craving",
        "steps/welcome.md",
        EMA_WINDOWS,
        'windows: ["07:00-12:00", "12:00-16:00", "16:00-21:00"]',
        "the window 07:00-12:00 overlaps quiet hours 22:00-08:00; move it, or declare "
        "`quiet_hours: defer`",
    ),
    "schedule-from-an-unknown-event": (
        "phq9-checkin",
        "steps/welcome.md",
        "from: enrollment",
        "from: phq9.complete",
        "no event 'phq9.complete'; did you mean 'phq9.completed'?",
    ),
    "abandoned-of-an-undeclared-instrument": (
        "phq9-checkin",
        "steps/between.md",
        "when: abandoned.phq9",
        "when: abandoned.phq",
        "no value 'abandoned.phq'",
    ),
    "unquoted-yes-and-no-options": (
        "ema-craving",
        "questions/smoked.md",
        "answer: yesno",
        "answer: yesno\noptions: [yes, no]",
        "quote them: 'yes', 'no'",
    ),
    "relapse-on-a-yes-written-as-text": (
        "ema-craving",
        "steps/rating.md",
        "when: answered.smoked and measurements.smoked == true",
        'when: answered.smoked and measurements.smoked == "yes"',
        '`measurements.smoked` is yes/no (or none) and `"yes"` is text',
    ),
}


def _line_of(lines: list[str], text: str, before: int | None = None) -> int:
    """The number of the last line holding `text` (up to line `before`)."""
    return max(n for n, written in enumerate(lines[:before], 1) if text in written)


def _template_key(lines: list[str]) -> int:
    return _line_of(lines, "say:")  # a template's problems are given at its key's line


def _action(lines: list[str]) -> int:
    """A `repeat:` problem is given at its action's first line (the `- administer:`)."""
    repeat = _line_of(lines, "repeat:")
    return _line_of(lines, "- administer:", before=repeat)


# where the problem is given, when it is not the line of the replacement itself
AT = {
    "template-band-not-among-the-bands": _template_key,
    "template-band-by-its-number": _template_key,
    "window-inside-quiet-hours-without-defer": _action,
    "schedule-from-an-unknown-event": _action,
}


def _variant(tmp_path: Path, slug: str, file: str, text: str, replacement: str) -> Path:
    folder = tmp_path / "interventions" / slug
    shutil.copytree(SHIPPED / slug, folder)
    path = folder / file
    source = path.read_text(encoding="utf-8")
    assert source.count(text) >= 1, f"{file} no longer holds {text!r}"
    path.write_text(source.replace(text, replacement, 1), encoding="utf-8")
    return folder


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_mistake_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    slug, file, text, replacement, said = CORPUS[name]
    folder = _variant(tmp_path, slug, file, text, replacement)
    lines = (folder / file).read_text(encoding="utf-8").splitlines()
    first = replacement.splitlines()[-1 if "options:" in replacement else 0]
    line = _line_of(lines, first)

    found_all = validate_folder(folder, attach=attach)
    problems = [(Path(p.file).name, p.line, p.message) for p in found_all]

    assert problems, f"{name}: validated"
    found = [(where, at) for where, at, message in problems if said in message]
    assert found, problems
    assert found[0] == (Path(file).name, AT[name](lines) if name in AT else line)


def test_the_correct_numeric_template_validates(tmp_path: Path) -> None:
    folder = _variant(
        tmp_path,
        "phq9-checkin",
        "steps/between.md",
        PHQ9_SAY,
        "{{ instruments.phq9.last.band }}){% if instruments.phq9.last.total >= 20 %}!"
        "{% endif %}; this is",
    )
    assert validate_folder(folder, attach=attach) == []
