"""What an administration sends: each item with how to answer it, all items in one message
with an example the all-at-once parser reads, and when it re-asks or is abandoned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.instruments.asking import (
    abandon_at,
    all_at_once_message,
    answer_hint,
    item_message,
    may_reask,
    next_item,
)
from bot.instruments.format import Answer, Instrument
from bot.instruments.loader import load_instruments
from bot.instruments.parsing import parse_all

SHIPPED = load_instruments()
PHQ9 = SHIPPED["phq9"]


def test_the_first_item_comes_after_the_instructions_with_its_codes() -> None:
    assert item_message(PHQ9, PHQ9.items[0], first=True).splitlines() == [
        "Over the last 2 weeks, how often have you been bothered by any of the following problems?",
        "Little interest or pleasure in doing things",
        "Reply 0 Not at all, 1 Several days, 2 More than half the days, 3 Nearly every day",
    ]


def test_later_items_are_sent_without_the_instructions() -> None:
    assert item_message(PHQ9, PHQ9.items[1], first=False).splitlines()[0] == PHQ9.items[1].text


def test_a_scale_labelled_at_its_ends_shows_its_anchors() -> None:
    craving = SHIPPED["craving"]
    assert answer_hint(craving.answer_of(craving.items[0])) == (
        "Reply 0 (No craving at all) to 10 (The strongest craving you can imagine)"
    )


def test_a_choice_of_labels_is_numbered() -> None:
    answer = Answer.model_validate({"type": "choice", "options": ["Beer", "Wine"]})
    assert answer_hint(answer) == "Reply 1 Beer, 2 Wine"


def test_the_all_at_once_example_is_a_reply_the_parser_reads() -> None:
    for instrument in (PHQ9, SHIPPED["gad7"], _mixed()):
        example = all_at_once_message(instrument).rsplit("e.g. ", 1)[1]
        assert parse_all(instrument, example).ok, example


def test_the_next_item_is_the_first_not_yet_done() -> None:
    assert next_item(PHQ9, {"i1", "i2", "i4"}) == PHQ9.items[2]
    assert next_item(PHQ9, {item.id for item in PHQ9.items}) is None


def test_an_unreadable_reply_is_reasked_as_often_as_the_instrument_says() -> None:
    assert [may_reask(PHQ9, n) for n in range(3)] == [True, False, False]  # reask: 1


def test_silence_abandons_after_the_instruments_minutes() -> None:
    sent = datetime(2026, 3, 1, 17, 0, tzinfo=UTC)
    assert abandon_at(SHIPPED["craving"], sent) == sent + timedelta(minutes=30)


def _mixed() -> Instrument:
    items: list[dict[str, Any]] = [
        {"id": "a", "text": "A", "answer": {"type": "yes/no"}},
        {"id": "b", "text": "B", "answer": {"type": "choice", "options": ["Beer", "Wine"]}},
        {"id": "c", "text": "C", "answer": {"type": "scale", "min": 1, "max": 5}},
    ]
    return Instrument.model_validate({"title": "T", "citation": "c", "items": items})
