"""The type checker accepts conditions that use each value as its type, and the evaluator
turns what can still go wrong at run time into an error, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.expressions import compile_condition
from tests.interventions.variants import problems, variant

WHEN_YES = 'when: judgements.ready.answer == "yes"'


@pytest.mark.parametrize(
    "condition",
    [
        'judgements.ready.answer in ["yes", "unsure"]',
        "step.turns + 1 > 2 and step.minutes - 0.5 >= 1",
        'participant.local_time >= "09:00" and participant.weekday != "Sunday"',
        "profile.goal != none and profile.started == true",
        'notes.SUMMARY != "" or measurements.mood <= 3',
        'profile.goal != none and "walk" in profile.goal',
        'step.name == "explore" or not participant.flagged',
    ],
)
def test_a_condition_that_uses_each_value_as_its_type_validates(
    tmp_path: Path, condition: str
) -> None:
    folder = variant(tmp_path, "steps/welcome.md", replace=(WHEN_YES, f"when: {condition}"))

    assert problems(folder) == []


def test_a_time_compared_with_text_that_is_not_a_time_is_refused(tmp_path: Path) -> None:
    condition = 'participant.local_time >= "9am"'
    folder = variant(tmp_path, "steps/welcome.md", replace=(WHEN_YES, f"when: {condition}"))

    assert problems(folder) == [
        f"steps/welcome.md:11: condition `{condition}`: '>=' compares numbers, dates or times, "
        'but `participant.local_time` is time and `"9am"` is text'
    ]


def test_an_index_past_the_end_of_a_list_is_an_error_not_an_exception() -> None:
    condition = compile_condition('notes.TOPICS[2] == "sleep"', ["notes"])

    found = condition.check({"notes": {"TOPICS": ["walk", "sleep"]}})

    assert (found.value, found.error) == (False, "'notes.TOPICS[2]' is not set")


def test_a_text_index_with_a_minus_is_refused_when_compiled() -> None:
    with pytest.raises(ValueError, match=r"\[\.\.\.\] needs a fixed text key or whole number"):
        compile_condition('notes.TOPICS[-"a"] == 1', ["notes"])
