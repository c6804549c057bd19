"""Declared broadcasts in study.yaml: a valid schedule loads, and each broken one is refused at
its file:line (an unknown arm or step, a message and a step or neither, a weekly schedule
without its weekday, a clock that is no HH:MM, an end before the start, a profile condition
over an unknown field or of the wrong type, a message that is no template, an unknown key)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from bot.interventions.language.types import Type
from bot.studies.checks import ArmInterventions
from bot.studies.loader import STUDY, load_study, read_study
from bot.studies.schema import study_schema

HEAD = """\
title: T
arms:
  coach: {intervention: habit-coach}
  control: {intervention: walk-control}
allocation:
  method: simple
  ratio: {coach: 1, control: 1}
broadcasts:
  weekly-tip:
"""
GOOD = """\
    filter:
      arm: control
      condition: profile.intensity == "high"
    message: "Hi {{ participant.name or 'there' }}: walk today."
    schedule:
      every: week
      weekday: monday
      time: "09:00"
    start: 2027-01-04
    end: 2027-03-29
"""
CATALOGUE = ArmInterventions(
    frozenset({"habit-coach", "walk-control"}),
    names={
        "habit-coach": {"profile.intensity": Type("choice", ("low", "high"), optional=True)},
        "walk-control": {"profile.intensity": Type("choice", ("low", "high"), optional=True)},
    },
    steps={"walk-control": ["welcome", "tip", "goodbye"], "habit-coach": []},
)

# (what is broken, the declaration's lines, the line of study.yaml, a phrase of the message)
BROKEN = [
    ("an unknown arm", GOOD.replace("arm: control", "arm: contrl"), 11, "no arm `contrl`"),
    ("a step the arm's intervention lacks", GOOD.replace(
        "message: \"Hi {{ participant.name or 'there' }}: walk today.\"", "step: tips"), 13,
        "no step `tips` in 'walk-control'"),
    ("a message and a step", GOOD.replace("    schedule:", "    step: tip\n    schedule:"), 9,
     "a `message` or starts a `step`, one"),
    ("neither a message nor a step", GOOD.replace(
        "    message: \"Hi {{ participant.name or 'there' }}: walk today.\"\n", ""), 9,
     "a `message` or starts a `step`, one"),
    ("a weekly schedule without its weekday", GOOD.replace("      weekday: monday\n", ""), 14,
     "needs its `weekday`"),
    ("a daily schedule with a weekday", GOOD.replace("every: week", "every: day"), 14,
     "a daily broadcast has no `weekday`"),
    ("a clock that is no HH:MM", GOOD.replace('"09:00"', '"9am"'), 17, "not a local time HH:MM"),
    ("an unquoted clock YAML reads as a number", GOOD.replace('"09:00"', "18:30"), 17,
     'quote the time: "18:30"'),
    ("an end before the start", GOOD.replace("2027-03-29", "2026-12-28"), 9,
     "`end` (2026-12-28) is before `start` (2027-01-04)"),
    ("a condition over an unknown profile field", GOOD.replace(
        "profile.intensity", "profile.intensty"), 12, "unknown name `profile.intensty`"),
    ("a condition of the wrong type", GOOD.replace('== "high"', "> 3"), 12,
     "options have no order"),
    ("a condition that is no condition", GOOD.replace('== "high"', "=== 1"), 12,
     "not a valid condition"),
    ("a message that is no template", GOOD.replace("{{ participant.name", "{{ participant.name }"),
     13, "broadcast `weekly-tip`: the message, line 1"),
    ("an unknown key", GOOD.replace("    start:", "    every: week\n    start:"), 18,
     "unknown key `broadcasts.weekly-tip.every`"),
    ("an unknown weekday", GOOD.replace("monday", "mondays"), 16, "weekday"),
]  # fmt: skip


def write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "trial"
    folder.mkdir()
    (folder / STUDY).write_text(text)
    return folder


def test_a_declared_weekly_broadcast_loads(tmp_path: Path) -> None:
    study = load_study(write(tmp_path, HEAD + GOOD), CATALOGUE)

    declared = study.broadcasts["weekly-tip"]
    assert (declared.filter.arm, declared.schedule.weekday, declared.schedule.time) == (
        "control",
        "monday",
        "09:00",
    )
    assert (declared.start, declared.end) == (date(2027, 1, 4), date(2027, 3, 29))


@pytest.mark.parametrize(
    ("text", "line", "phrase"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_a_broken_declared_broadcast_is_refused_at_its_line(
    tmp_path: Path, text: str, line: int, phrase: str
) -> None:
    folder = write(tmp_path, HEAD + text)

    _, problems = read_study(folder, CATALOGUE)

    where = f"{folder / STUDY}:{line}: "
    assert any(str(p).startswith(where) and phrase in str(p) for p in problems), "\n".join(
        str(p) for p in problems
    )


def test_the_json_schema_describes_declared_broadcasts() -> None:
    schema = study_schema()
    declared = schema["$defs"]["DeclaredBroadcast"]
    assert {"filter", "message", "step", "schedule", "start", "end"} <= set(declared["properties"])
    clock = schema["$defs"]["BroadcastSchedule"]["properties"]["time"]
    assert clock["pattern"].startswith("^") and "monday" in str(
        schema["$defs"]["BroadcastSchedule"]["properties"]["weekday"]
    )
