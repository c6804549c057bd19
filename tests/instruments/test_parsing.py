"""Reading SMS replies: one answer by its code, its label's words or yes/no in four
languages; all answers in one message, spaced, comma-separated or run together; and the
reason a reply is no answer, naming the bad positions."""

from __future__ import annotations

from typing import Any

import pytest

from bot.instruments.format import Instrument
from bot.instruments.loader import load_instruments
from bot.instruments.parsing import parse_all, parse_answer

SHIPPED = load_instruments()
PHQ9 = SHIPPED["phq9"]
LISTED = [1, 2, 1, 0, 3, 0, 0, 1, 2]


def _instrument(answer: dict[str, Any], count: int = 1, **rules: Any) -> Instrument:
    return Instrument.model_validate(
        {
            "title": "Test",
            "citation": "test",
            "answer": answer,
            "items": [{"id": f"i{n}", "text": f"Item {n}"} for n in range(1, count + 1)],
            "administration": {"mode": "all-at-once", **rules},
        }
    )


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("2", 2),
        (" 3. ", 3),
        ("Several days", 1),
        ("nearly every day!", 3),
        ("2 - more than half the days", 2),
        ("I'd say 1", 1),
        ("0/3", 0),
    ],
)
def test_a_scale_answer_is_read_from_its_code_or_its_label(reply: str, code: int) -> None:
    assert parse_answer(PHQ9, "i1", reply).value == code


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("7", "7 is out of range; reply with a number from 0 to 3"),
        ("1 2", "more than one answer in the reply; reply with a number from 0 to 3"),
        ("2 not at all", "the number and the words disagree; reply with a number from 0 to 3"),
        ("maybe", "not an answer: reply with a number from 0 to 3"),
        ("skip", "this question cannot be skipped"),
    ],
)
def test_a_reply_that_is_no_scale_answer_says_why(reply: str, problem: str) -> None:
    assert parse_answer(PHQ9, "i1", reply).problem == problem


@pytest.mark.parametrize("reply", ["yes", "Y", "Yes, twice", "sí", "si", "oui", "Sim"])
def test_yes_is_read_in_english_spanish_french_and_portuguese(reply: str) -> None:
    assert parse_answer(_instrument({"type": "yes/no"}), "i1", reply).value is True


@pytest.mark.parametrize("reply", ["no", "N", "nope", "non", "não", "Nao"])
def test_no_is_read_in_english_spanish_french_and_portuguese(reply: str) -> None:
    assert parse_answer(_instrument({"type": "yes/no"}), "i1", reply).value is False


def test_a_skip_is_read_when_the_instrument_allows_it() -> None:
    reading = parse_answer(SHIPPED["craving"], "craving", "skip")
    assert (reading.ok, reading.skipped, reading.value) == (True, True, None)


@pytest.mark.parametrize(("reply", "code"), [("w", "w"), ("2", "w"), ("Wine", "w")])
def test_a_choice_is_read_by_its_code_its_number_or_its_label(reply: str, code: str) -> None:
    instrument = _instrument({"type": "choice", "options": {"b": "Beer", "w": "Wine"}})
    assert parse_answer(instrument, "i1", reply).value == code


def test_a_number_answer_may_have_decimals() -> None:
    instrument = _instrument({"type": "number", "min": 0, "max": 24})
    assert parse_answer(instrument, "i1", "about 7.5 hours").value == 7.5


@pytest.mark.parametrize(
    "reply",
    ["1 2 1 0 3 0 0 1 2", "1,2,1,0,3,0,0,1,2", "1, 2; 1 0 3 0 0 1 2", "121030012", "121 030 012"],
)
def test_all_answers_are_read_from_one_message(reply: str) -> None:
    readings = parse_all(PHQ9, reply)
    assert list(readings.values.values()) == LISTED


def test_the_bad_positions_of_an_all_at_once_reply_are_named() -> None:
    readings = parse_all(PHQ9, "1 2 1 0 7 0 0 x 2")
    assert readings.positions == (5, 8)
    assert readings.problem == (
        "answer 5 is '7', not a number from 0 to 3; answer 8 is 'x', not a number from 0 to 3"
    )


def test_a_run_together_reply_names_its_bad_digit() -> None:
    assert parse_all(PHQ9, "121030014").problem == "answer 9 is '4', not a number from 0 to 3"


def test_too_few_answers_name_the_missing_positions() -> None:
    assert parse_all(PHQ9, "1 2 1 0 3 0 0").problem == (
        "7 answers for 9 questions: answers 8, 9 are missing"
    )


def test_too_many_answers_are_counted() -> None:
    assert (
        parse_all(PHQ9, "1 2 1 0 3 0 0 1 2 3").problem == "10 answers for 9 questions: 1 too many"
    )


def test_words_are_not_split_into_letters() -> None:
    assert parse_all(PHQ9, "2notatall").problem == (
        "1 answer for 9 questions: answers 2, 3, 4, 5, 6, 7, 8, 9 are missing"
    )


def test_two_digit_codes_are_read_when_separated() -> None:
    instrument = _instrument({"type": "scale", "min": 0, "max": 10}, 3, separators="required")
    assert list(parse_all(instrument, "10 2 0").values.values()) == [10, 2, 0]


def test_separators_required_stops_a_reply_being_read_digit_by_digit() -> None:
    instrument = _instrument({"type": "scale", "min": 0, "max": 10}, 3, separators="required")
    assert parse_all(instrument, "102").problem == (
        "1 answer for 3 questions: answers 2, 3 are missing"
    )


def test_a_dash_skips_an_item_when_skips_are_allowed() -> None:
    instrument = _instrument({"type": "yes/no"}, 3, skip="allowed")
    assert parse_all(instrument, "y - 0").values == {"i1": True, "i2": None, "i3": False}


def test_a_dash_is_refused_when_skips_are_not_allowed() -> None:
    instrument = _instrument({"type": "yes/no"}, 3)
    assert parse_all(instrument, "y - 0").problem == "answer 2 is '-', but it cannot be skipped"
