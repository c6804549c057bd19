"""Range-aware checking: a condition over declared ranges and options that can never be true,
or is always true, is refused, whether written alone or composed with and, or and not; and
a warning (a judgement the step does not run) is shown without stopping the intervention."""

# ruff: noqa: E501  (the checker's messages are compared whole, one per line)
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import interventions as _commands  # noqa: F401  (registers the commands)
from bot.cli.root import cli
from bot.interventions.language.expressions import compile_condition
from bot.interventions.language.typecheck import condition_type_problems
from bot.interventions.language.types import Type
from bot.interventions.validation.catalogue import Catalogue
from tests.interventions.variants import problems, variant

TYPES = {
    "a.total": Type("integer", optional=True, bounds=(0, 27)),
    "a.i9": Type("integer", optional=True, bounds=(0, 3)),
    "a.level": Type("choice", ("none", "low", "high"), optional=True),
    "a.flag": Type("yes/no", optional=True),
    "a.x": Type("number", bounds=(0, 10)),
    "a.turns": Type("integer", bounds=(0, None)),
}


def said(source: str) -> list[str]:
    return condition_type_problems(compile_condition(source, ("a",)), TYPES)


@pytest.mark.parametrize(
    "source",
    [
        "a.total >= 20 or a.i9 > 0",
        "a.total >= 27",
        "a.x >= 10",
        "a.turns > 500",
        'a.level != "high" and a.level != "low"',
        "a.i9 in [1, 2, 3]",
        "a.i9 + a.total >= 30",
        "a.flag and a.total > 3",
        "a.i9 != none",
    ],
)
def test_a_condition_that_can_be_true_and_false_validates(source: str) -> None:
    assert said(source) == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("a.total >= 30", "`a.total >= 30` can never be true: `a.total` is 0 to 27"),
        ("30 <= a.total", "`30 <= a.total` can never be true: `a.total` is 0 to 27"),
        ("a.x > 10", "`a.x > 10` can never be true: `a.x` is 0 to 10"),
        (
            "a.i9 + a.total > 30",
            "`a.i9 + a.total > 30` can never be true: `a.i9` is 0 to 3; `a.total` is 0 to 27",
        ),
        ("a.i9 > 1 and a.i9 < 1", "`a.i9 > 1 and a.i9 < 1` can never be true: `a.i9` is 0 to 3"),
        ("a.flag and not a.flag", "`a.flag and not a.flag` can never be true: `a.flag` is yes/no"),
        (
            'a.level != "high" and a.level != "low" and a.level != "none"',
            "`a.level != \"high\" and a.level != \"low\" and a.level != \"none\"` can never be true: `a.level` is one of 'none', 'low', 'high'",
        ),
        ("a.turns >= 0", "`a.turns >= 0` is always true: `a.turns` is at least 0"),
        (
            "a.i9 >= 0",
            "`a.i9 >= 0` is always true: `a.i9` is 0 to 3 (whenever `a.i9` has a value; to ask whether it has one, write `a.i9 != none`)",
        ),
        (
            "a.i9 < 2 or a.i9 >= 2",
            "`a.i9 < 2 or a.i9 >= 2` is always true: `a.i9` is 0 to 3 (whenever",
        ),
        ("not (a.i9 >= 0)", "`a.i9 >= 0` is always true"),
        ("a.total >= 30 or a.total > 3", "`a.total >= 30` can never be true"),
    ],
)
def test_a_condition_constant_over_the_declared_ranges_is_refused(
    source: str, message: str
) -> None:
    found = said(source)

    assert len(found) == 1, found
    assert found[0].startswith(message), found[0]


def test_each_constant_part_is_said_once_and_a_type_problem_alone() -> None:
    assert said("a.total >= 30 or a.i9 >= 0") == [
        "`a.total >= 30` can never be true: `a.total` is 0 to 27",
        "`a.i9 >= 0` is always true: `a.i9` is 0 to 3 (whenever `a.i9` has a value; to ask whether it has one, write `a.i9 != none`)",
    ]
    assert said('a.total >= "30" or a.i9 >= 0') == [
        "'>=' compares numbers, dates or times, but `a.total` is an integer (or none) and `\"30\"` is text"
    ]


WARNED = ('when: judgements.ready.answer == "yes"', 'when: judgements.engaged.response == "yes"')


def test_a_warning_is_printed_and_the_intervention_still_validates(tmp_path: Path) -> None:
    folder = variant(tmp_path, "steps/welcome.md", replace=WARNED)

    result = CliRunner().invoke(cli, ["interventions", "validate", str(folder)])

    assert result.exit_code == 0, result.output
    assert f"{folder}/steps/welcome.md:11: warning: transition to 'explore'" in result.output
    assert f"{folder}: ok (1 warning(s))\n" in result.output
    assert Catalogue(tmp_path).problems("good") == []


def test_an_error_next_to_the_warning_still_fails(tmp_path: Path) -> None:
    variant(tmp_path, "steps/welcome.md", replace=WARNED)
    folder = variant(tmp_path, "steps/explore.md", replace=("to: goodbye", "to: goodby"))

    result = CliRunner().invoke(cli, ["interventions", "validate", str(folder)])

    assert result.exit_code == 1
    assert [str(p.message)[:13] for p in Catalogue(tmp_path).problems("good")] == ["no step 'good"]


def test_a_numeric_test_on_a_declared_integer_profile_field_validates(tmp_path: Path) -> None:
    variant(
        tmp_path,
        "intervention.yaml",
        replace=("profile:\n", "profile:\n  phq_total: {type: int, min: 0, max: 27}\n"),
    )
    folder = variant(
        tmp_path,
        "steps/goodbye.md",
        replace=("Goodbye!", "Goodbye{% if profile.phq_total >= 20 %}, take care{% endif %}!"),
    )

    assert problems(folder) == []


def test_the_same_test_past_the_declared_maximum_is_refused(tmp_path: Path) -> None:
    variant(
        tmp_path,
        "intervention.yaml",
        replace=("profile:\n", "profile:\n  phq_total: {type: int, min: 0, max: 27}\n"),
    )
    folder = variant(
        tmp_path,
        "steps/goodbye.md",
        replace=("Goodbye!", "Goodbye{% if profile.phq_total >= 30 %}, take care{% endif %}!"),
    )

    assert problems(folder) == [
        "steps/goodbye.md:4: template: condition `profile.phq_total >= 30`: "
        "`profile.phq_total >= 30` can never be true: `profile.phq_total` is 0 to 27"
    ]
