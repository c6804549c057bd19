"""The type checker accepts conditions that use each value as its type, and the evaluator
turns what can still go wrong at run time into an error, never an exception."""

# ruff: noqa: E501  (the checker's messages are compared whole, one per line)
from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.language.expressions import compile_condition
from bot.interventions.language.typecheck import (
    assignable,
    condition_type_problems,
    expression_type,
    literal_type,
)
from bot.interventions.language.types import INTEGER, NUMBER, TEXT, WEEKDAYS, YES_NO, Type
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


# The checker's every message (make mutation: each branch of bot/interventions/language/typecheck.py)

TYPES = {
    "profile.goal": TEXT.maybe(),
    "step.turns": INTEGER,
    "step.minutes": NUMBER,
    "participant.local_time": Type("time"),
    "participant.local_date": Type("date"),
    "participant.weekday": Type("choice", WEEKDAYS),
    "participant.mood": Type("choice", ("low", "high")),
    "participant.flagged": YES_NO,
    "notes.TOPICS": Type("list", item=TEXT, optional=True),
    "judgements.mood.score": Type("integer", optional=True),
}
ROOTS = ["profile", "step", "participant", "notes", "judgements"]


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "step.turns",
            [
                "a condition must be yes or no, but `step.turns` is an integer (compare it with something, e.g. `!= none`)"
            ],
        ),
        (
            "step.turns + 1",
            [
                "a condition must be yes or no, but `step.turns + 1` is an integer (compare it with something, e.g. `!= none`)"
            ],
        ),
        ("-profile.goal == 1", ["'-' works on numbers, but `profile.goal` is text (or none)"]),
        ("-step.turns < 0", []),
        ("step.turns - step.minutes > 1", []),
        ('[1, "a"] == step.turns', ['the list `[1, "a"]` mixes values of types integer, text']),
        (
            "[1, 2.5] == step.turns",
            [
                "'==' compares values of one type, but `[1, 2.5]` is a list of number and `step.turns` is an integer"
            ],
        ),
        (
            "[] == step.turns",
            [
                "'==' compares values of one type, but `[]` is a list of any and `step.turns` is an integer"
            ],
        ),
        (
            "not step.turns",
            [
                "'not' works on yes/no values, but `step.turns` is an integer (compare it with something first)"
            ],
        ),
        (
            "step.turns and participant.flagged",
            [
                "'and' works on yes/no values, but `step.turns` is an integer (compare it with something first)"
            ],
        ),
        ("step.turns in [1, 2]", []),
        ('"x" in notes.TOPICS', []),
        (
            "step.turns in notes.TOPICS",
            [
                "'in' looks for a value in a list of its type, but `step.turns` is an integer and `notes.TOPICS` is a list of text (or none)"
            ],
        ),
        (
            "step.turns in profile.goal",
            [
                "'in' looks for text in text here, but `step.turns` is an integer and `profile.goal` is text (or none)"
            ],
        ),
        (
            "step.turns in step.minutes",
            [
                "'in' needs a list or text on its right, but `step.turns` is an integer and `step.minutes` is number"
            ],
        ),
        ('"walk" in profile.goal', []),
        (
            'participant.weekday in ["Monday", "Funday"]',
            [
                "'Funday' not an option of `participant.weekday`: `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday' and `[\"Monday\", \"Funday\"]` is a list of text"
            ],
        ),
        ('participant.weekday not in ["Monday"]', []),
        ("step.turns == none", ["`step.turns` is an integer and is never none"]),
        ("profile.goal == none", []),
        ("none == step.turns", ["`step.turns` is an integer and is never none"]),
        (
            'participant.weekday == "Funday"',
            [
                "'Funday' is not an option of `participant.weekday`: `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday' and `\"Funday\"` is text"
            ],
        ),
        ('participant.weekday == "Monday"', []),
        (
            '"Funday" != participant.weekday',
            [
                "'Funday' is not an option of `participant.weekday`: `\"Funday\"` is text and `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'"
            ],
        ),
        (
            "participant.weekday == participant.mood",
            [
                "'==' compares choices that share no option: `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday' and `participant.mood` is one of 'low', 'high'"
            ],
        ),
        (
            'participant.flagged == "true"',
            [
                "'==' compares values of one type, but `participant.flagged` is yes/no and `\"true\"` is text (write true or false, without quotes)"
            ],
        ),
        (
            'step.turns == "3"',
            [
                "'==' compares values of one type, but `step.turns` is an integer and `\"3\"` is text"
            ],
        ),
        ("step.turns == 2.5", []),
        (
            'participant.local_time < "9am"',
            [
                "'<' compares numbers, dates or times, but `participant.local_time` is time and `\"9am\"` is text"
            ],
        ),
        ('participant.local_time < "09:00"', []),
        ('participant.local_date >= "2026-01-01"', []),
        (
            'participant.local_date == "2026-1-1"',
            [
                "'==' compares values of one type, but `participant.local_date` is date and `\"2026-1-1\"` is text"
            ],
        ),
        ('participant.local_date == "2026-01-01"', []),
        (
            'participant.weekday < "Monday"',
            [
                "'<' compares numbers, dates or times, but `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday' and `\"Monday\"` is text; options have no order"
            ],
        ),
        (
            "participant.mood > 1",
            [
                "'>' compares numbers, dates or times, but `participant.mood` is one of 'low', 'high' and `1` is an integer; options have no order"
            ],
        ),
        ('notes.TOPICS[0] == "a"', []),
        ("step.turns[0] == 1", ["`step.turns` is an integer, not a list: it has no item [0]"]),
        ("step.turns.x == 1", ["`step.turns` is an integer: it has no `.x`"]),
        ("notes.TOPICS[0].x == 1", ["`notes.TOPICS[0]` is text (or none): it has no `.x`"]),
        ('notes.TOPICS["a"] == 1', ["`notes.TOPICS` is a list of text (or none): it has no `.a`"]),
        (
            "judgements.mood.score.x == 1",
            ["`judgements.mood.score` is an integer (or none): it has no `.x`"],
        ),
        ("judgements.unknown == 1", []),
        (
            "participant.local_time > participant.local_date",
            [
                "'>' compares numbers, dates or times, but `participant.local_time` is time and `participant.local_date` is date"
            ],
        ),
        (
            "step.turns == participant.weekday",
            [
                "'==' compares values of one type, but `step.turns` is an integer and `participant.weekday` is one of 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'"
            ],
        ),
        ("participant.weekday == profile.goal", []),
        ("-1 < step.turns", []),
        ('notes.TOPICS == ["a", "b"]', []),
        (
            '1 < step.turns <= "a"',
            [
                "'<=' compares numbers, dates or times, but `step.turns` is an integer and `\"a\"` is text"
            ],
        ),
        (
            "profile.goal + step.turns > 1",
            [
                "'+' works on numbers, but `profile.goal` is text (or none) and `step.turns` is an integer"
            ],
        ),
        (
            "step.turns - participant.flagged > 1",
            [
                "'-' works on numbers, but `step.turns` is an integer and `participant.flagged` is yes/no"
            ],
        ),
        ("participant.local_time < participant.local_time", []),
        ("participant.local_date >= participant.local_date", []),
        ('profile.goal in ["a", "b"]', []),
        ("participant.mood in notes.TOPICS", []),
    ],
)
def test_each_misuse_is_said_with_the_type_of_each_side(source: str, said: list[str]) -> None:
    assert condition_type_problems(compile_condition(source, ROOTS), TYPES) == said


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("step.turns + 1", "an integer"),
        ("step.turns - step.minutes", "number"),
        ("-step.turns", "an integer"),
        ("-2.5", "number"),
        ('["a", "b"]', "a list of text"),
        ("[1, 2.5]", "a list of number"),
        ("profile.goal", "text (or none)"),
        ("notes.TOPICS[1]", "text (or none)"),
        ("judgements.unknown", "a value"),
        ("step.turns > 1", "yes/no"),
    ],
)
def test_the_type_of_a_set_expression(source: str, shown: str) -> None:
    found, said = expression_type(compile_condition(source, ROOTS), TYPES)
    assert (str(found), said) == (shown, [])


def test_a_negative_number_keeps_its_value_and_other_values_have_none() -> None:
    assert expression_type(compile_condition("-3", ROOTS), TYPES)[0].literal == -3
    assert expression_type(compile_condition("-step.turns", ROOTS), TYPES)[0].literal is None


@pytest.mark.parametrize(
    ("value", "shown", "literal"),
    [(None, "none", None), (True, "yes/no", True), (3, "an integer", 3), (2.5, "number", 2.5)]
    + [("x", "text", "x")],
)
def test_the_type_of_a_yaml_value(value: object, shown: str, literal: object) -> None:
    found = literal_type(value)
    assert (str(found), found.literal) == (shown, literal)


PICK = Type("choice", ("a", "b"))


@pytest.mark.parametrize(
    ("value", "target", "why"),
    [
        (Type("any"), TEXT, None),
        (TEXT, Type("any"), None),
        (Type("none"), TEXT, "it is text and cannot be none"),
        (Type("none"), TEXT.maybe(), None),
        (INTEGER, NUMBER, None),
        (NUMBER, INTEGER, "it is an integer, and the value is number"),
        (Type("choice", ("a", "c")), PICK, "it is one of 'a', 'b', and the value may be 'c'"),
        (Type("choice", ("a",)), PICK, None),
        (literal_type("a"), PICK, None),
        (literal_type("z"), PICK, "it is one of 'a', 'b'"),
        (PICK, TEXT, None),
        (TEXT, PICK, "it is one of 'a', 'b', and the value is text"),
        (literal_type("2026-01-01"), Type("date"), None),
        (literal_type("2026-1-1"), Type("date"), "it is a date"),
        (literal_type("09:00"), Type("time"), None),
        (YES_NO, TEXT, "it is text, and the value is yes/no"),
        (TEXT, TEXT, None),
        (PICK, PICK, None),
        (TEXT, NUMBER, "it is number, and the value is text"),
        (INTEGER, Type("date"), "it is date, and the value is an integer"),
        (literal_type("x"), YES_NO, "it is yes/no, and the value is text"),
    ],
)
def test_what_may_be_stored_in_a_field(value: Type, target: Type, why: str | None) -> None:
    assert assignable(value, target) == why
