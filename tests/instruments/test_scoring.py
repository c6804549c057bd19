"""Scoring: hand-worked PHQ-9 and GAD-7 administrations with their published bands, reverse
scoring, yes/no items, the mean method, subscales, and totals withheld while items are
missing."""

from __future__ import annotations

from typing import Any

import pytest

from bot.instruments.format import Instrument
from bot.instruments.loader import load_instruments
from bot.instruments.scoring import score

SHIPPED = load_instruments()


def _answers(name: str, codes: list[int]) -> dict[str, Any]:
    return {item.id: code for item, code in zip(SHIPPED[name].items, codes, strict=True)}


def _instrument(**overrides: Any) -> Instrument:
    written: dict[str, Any] = {
        "title": "Test",
        "citation": "test",
        "answer": {"type": "scale", "min": 1, "max": 5},
        "items": [{"id": "a", "text": "A"}, {"id": "b", "text": "B", "reverse": True}],
    }
    return Instrument.model_validate(written | overrides)


@pytest.mark.parametrize(
    ("codes", "total", "band"),
    [
        ([1, 2, 1, 0, 3, 0, 0, 1, 2], 1 + 2 + 1 + 0 + 3 + 0 + 0 + 1 + 2, "moderate"),
        ([0, 1, 1, 0, 1, 0, 0, 1, 0], 0 + 1 + 1 + 0 + 1 + 0 + 0 + 1 + 0, "minimal"),
        ([1, 1, 1, 0, 1, 0, 0, 1, 0], 1 + 1 + 1 + 0 + 1 + 0 + 0 + 1 + 0, "mild"),
        ([3, 3, 2, 2, 2, 2, 2, 2, 1], 3 + 3 + 2 + 2 + 2 + 2 + 2 + 2 + 1, "moderately severe"),
        ([3, 3, 3, 2, 2, 2, 2, 2, 1], 3 + 3 + 3 + 2 + 2 + 2 + 2 + 2 + 1, "severe"),
        ([3] * 9, 27, "severe"),
    ],
)
def test_phq9_totals_and_bands_follow_kroenke_2001(codes: list[int], total: int, band: str) -> None:
    result = score(SHIPPED["phq9"], _answers("phq9", codes))
    assert (result.total, result.band, result.complete) == (total, band, True)


@pytest.mark.parametrize(
    ("codes", "total", "band"),
    [
        ([2, 1, 1, 0, 2, 1, 3], 2 + 1 + 1 + 0 + 2 + 1 + 3, "moderate"),
        ([1, 1, 1, 1, 0, 0, 0], 1 + 1 + 1 + 1, "minimal"),
        ([1, 1, 1, 1, 1, 0, 0], 1 + 1 + 1 + 1 + 1, "mild"),
        ([3, 3, 3, 3, 3, 0, 0], 3 * 5, "severe"),
    ],
)
def test_gad7_totals_and_bands_follow_spitzer_2006(codes: list[int], total: int, band: str) -> None:
    result = score(SHIPPED["gad7"], _answers("gad7", codes))
    assert (result.total, result.band) == (total, band)


def test_a_reverse_scored_item_is_flipped_within_its_range() -> None:
    # a: 2 counts 2; b: 2 on a 1-5 scale counts 1 + 5 - 2 = 4
    assert score(_instrument(), {"a": 2, "b": 2}).total == 2 + 4


def test_scoring_reverse_gives_the_range_items_are_flipped_within() -> None:
    instrument = _instrument(scoring={"reverse": {"min": 0, "max": 6}})
    assert score(instrument, {"a": 2, "b": 2}).total == 2 + (0 + 6 - 2)


def test_yes_counts_one_and_a_reversed_yes_counts_nothing() -> None:
    instrument = _instrument(answer={"type": "yes/no"})
    assert score(instrument, {"a": True, "b": True}).total == 1 + 0
    assert score(instrument, {"a": False, "b": False}).total == 0 + 1


def test_the_mean_method_scores_the_mean_and_bands_it() -> None:
    bands = [{"name": "low", "min": 1, "max": 3}, {"name": "high", "min": 3, "max": 5}]
    instrument = _instrument(scoring={"method": "mean"}, bands=bands)
    result = score(instrument, {"a": 4, "b": 3})  # 4 and 1 + 5 - 3 = 3: mean 3.5
    assert (result.total, result.mean, result.band) == (3.5, 3.5, "high")


def test_a_missing_item_withholds_the_total_but_not_a_complete_subscale() -> None:
    items = [{"id": n, "text": n} for n in ("a", "b", "c")]
    instrument = _instrument(items=items, scoring={"subscales": {"ab": ["a", "b"]}})
    result = score(instrument, {"a": 1, "b": 2, "c": None})
    assert (result.total, result.missing, result.complete) == (None, ("c",), False)
    assert result.subscales["ab"].total == 1 + 2


def test_a_choice_item_is_recorded_but_not_counted() -> None:
    items = [
        {"id": "a", "text": "A"},
        {"id": "kind", "text": "K", "answer": {"type": "choice", "options": ["beer", "wine"]}},
    ]
    result = score(_instrument(items=items), {"a": 4, "kind": "wine"})
    assert (result.total, result.items["kind"]) == (4, "wine")


def test_an_answer_outside_the_item_range_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="not an answer to item 'a'"):
        score(_instrument(), {"a": 6, "b": 1})


def test_an_unknown_item_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="'z' is not an item"):
        score(_instrument(), {"z": 1})
