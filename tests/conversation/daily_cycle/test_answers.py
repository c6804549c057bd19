"""The replies the habit questions understand: a small, documented list (pure)."""

from __future__ import annotations

import pytest

from bot.conversation.daily_cycle.answers import choose, moved
from bot.conversation.daily_cycle.questions import (
    DID_YOU_DO_IT_OPTIONS,
    VOCABULARY,
    intensity_options,
)

DID = VOCABULARY["did_you_do_it"]
INTENSITY = VOCABULARY["intensity"]


@pytest.mark.parametrize(
    "text",
    [
        "1",
        "1.",
        " 1 ",
        "done",
        "Done!",
        "DONE.",
        "done 👍",
        "yes I did",
        "Yes, I did it!",
        "did it",
        "Done! It was easy",
        "I'm done",
        "Q: Did you do it? A: Done",
    ],
)
def test_these_replies_mean_done(text: str) -> None:
    assert choose(text, DID_YOU_DO_IT_OPTIONS, DID) == "Done"


@pytest.mark.parametrize(
    "text", ["2", "next time", "Next time!", "not today", "No", "nope", "I didn't", "Not yet."]
)
def test_these_replies_mean_not_done(text: str) -> None:
    assert choose(text, DID_YOU_DO_IT_OPTIONS, DID) == "Next time"


@pytest.mark.parametrize(
    "text",
    ["", "hello", "3", "0", "12", "done nothing today", "I'm done with this study", "Increase"],
)
def test_these_replies_do_not_answer_did_you_do_it(text: str) -> None:
    assert choose(text, DID_YOU_DO_IT_OPTIONS, DID) is None


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("1", "Decrease"),
        ("lower", "Decrease"),
        ("Easier please", "Decrease"),
        ("2", "Keep current"),
        ("keep", "Keep current"),
        ("Same", "Keep current"),
        ("3", "Increase"),
        ("Increase", "Increase"),
        ("harder!", "Increase"),
        ("more", "Increase"),
        ("high", "high"),
        ("Q: How's the intensity? A: Increase", "Increase"),
    ],
)
def test_intensity_replies_at_normal(text: str, answer: str) -> None:
    assert choose(text, intensity_options("normal"), INTENSITY) == answer


def test_a_number_means_the_option_shown_with_it() -> None:
    assert choose("1", intensity_options("low"), INTENSITY) == "Keep current"
    assert choose("3", intensity_options("high"), INTENSITY) is None


@pytest.mark.parametrize(
    ("level", "answer", "after"),
    [
        ("normal", "Increase", "high"),
        ("high", "Increase", "high"),
        ("normal", "Decrease", "low"),
        ("low", "Decrease", "low"),
        ("low", "Keep current", "low"),
        ("high", "Keep current", "high"),
        ("low", "high", "high"),
        ("unknown", "Increase", "high"),
    ],
)
def test_levels_move_one_step_and_stay_within_low_and_high(
    level: str, answer: str, after: str
) -> None:
    assert moved(level, answer) == after
