"""The slips YAML lets through, repaired where they are found and said once in the author's
words, and pydantic's own paths said as the author wrote the keys."""

from __future__ import annotations

from pydantic import ValidationError

from bot.core.author_errors import closest_branches, worded
from bot.interventions.language.format import Judgement
from bot.interventions.language.loader import parse_yaml


def test_unquoted_yes_and_no_are_kept_as_written_and_said_once_a_line() -> None:
    slips: list[tuple[int, str]] = []

    meta, _ = parse_yaml("options: [yes, no]\nflag: yes\nkeys:\n  yes: a\n", 10, slips)

    assert meta == {"options": ["yes", "no"], "flag": True, "keys": {"yes": "a"}}
    assert slips == [
        (10, "`yes`, `no` unquoted are read as true or false (YAML 1.1); quote them: 'yes', 'no'"),
        (13, "the key `yes` unquoted is read as true or false (YAML 1.1); quote it: 'yes'"),
    ]


def test_the_key_on_of_a_decision_s_when_is_text_as_written_with_no_slip() -> None:
    slips: list[tuple[int, str]] = []

    meta, _ = parse_yaml("when:\n  on: message.received\n", 1, slips)

    assert meta == {"when": {"on": "message.received"}} and slips == []


def test_a_comma_inside_a_value_in_braces_is_put_back_into_the_value() -> None:
    slips: list[tuple[int, str]] = []

    meta, _ = parse_yaml("reason: {type: text, description: short, clear, and kind}\n", 1, slips)

    assert meta == {"reason": {"type": "text", "description": "short, clear, and kind"}}
    assert [line for line, _ in slips] == [1, 1]


def test_without_a_list_for_slips_the_data_is_what_yaml_reads() -> None:
    meta, _ = parse_yaml("options: [yes, no]\nd: {a: b, c}\n", 1)

    assert meta == {"options": [True, False], "d": {"a": "b", "c": None}}


def test_of_a_unions_branches_only_the_one_written_is_said_in_the_authors_words() -> None:
    data = {"title": "x", "result": {"urge": {"type": "choice", "options": {1: "a", "b": "c"}}}}
    try:
        Judgement.model_validate(data)
    except ValidationError as exc:
        found = [worded(e) for e in closest_branches(exc.errors(include_url=False))]
    else:
        raise AssertionError("the numeric key validated")

    assert found == [
        (
            ("result", "urge", "options", "1"),
            "`result.urge.options`: the key `1` should be text (quote it: '1')",
        )
    ]
