"""A participant's baseline values checked against the study's declared fields."""

from __future__ import annotations

from bot.studies.baseline import baseline_problems
from tests.studies.studies import study

TRIAL = study({"method": "simple", "ratio": {"a": 1, "b": 1}})


def test_complete_baseline_values_have_no_problem() -> None:
    assert baseline_problems(TRIAL, {"level": "low", "sex": "f", "age": "old"}) == []


def test_a_missing_value_is_required() -> None:
    assert baseline_problems(TRIAL, {"level": "low", "sex": "f"}) == ["`age` is required"]


def test_a_value_outside_the_choice_is_refused() -> None:
    problems = baseline_problems(TRIAL, {"level": "medium", "sex": "f", "age": "old"})

    assert problems == ["`level`: 'medium' is not one of 'low', 'high'"]


def test_an_undeclared_value_is_refused() -> None:
    problems = baseline_problems(TRIAL, {"level": "low", "sex": "f", "age": "old", "bmi": 22})

    assert problems == ["`bmi` is not a baseline field of the study"]
