"""The typed result of an administration: the names under instruments.<name>.last.* with
their kinds and bounds (for the range-aware type checker), their values, and the row of
instruments.csv."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.instruments.format import Instrument
from bot.instruments.loader import load_instruments
from bot.instruments.result import COLUMNS, Result, last_values, result_types, row
from bot.instruments.scoring import score
from bot.interventions.language.types import Type, value_problem

SHIPPED = load_instruments()
PHQ9 = SHIPPED["phq9"]
BASE = "instruments.phq9.last"
STARTED = datetime(2026, 3, 1, 17, 0, tzinfo=UTC)
ENDED = datetime(2026, 3, 1, 17, 6, tzinfo=UTC)


def _result(instrument: Instrument, answers: dict[str, Any], name: str = "phq9") -> Result:
    return Result(
        name, 2, 1, "completed", "all-at-once", STARTED, ENDED, score(instrument, answers)
    )


def _mixed() -> Instrument:
    return Instrument.model_validate(
        {
            "title": "Mixed",
            "citation": "test",
            "items": [
                {"id": "sad", "text": "Sad?", "answer": {"type": "yes/no"}},
                {"id": "kind", "text": "K", "answer": {"type": "choice", "options": ["a", "b"]}},
                {"id": "hours", "text": "H", "answer": {"type": "number", "min": 0, "max": 24}},
            ],
            "scoring": {"subscales": {"mood": ["sad"]}},
        }
    )


def test_the_total_is_bounded_by_the_score_range() -> None:
    assert result_types("phq9", PHQ9)[f"{BASE}.total"] == Type(
        "integer", optional=True, bounds=(0, 27)
    )


def test_an_item_is_bounded_by_its_answer_range() -> None:
    assert result_types("phq9", PHQ9)[f"{BASE}.items.i9"].bounds == PHQ9.item_range("i9") == (0, 3)


def test_the_band_is_a_choice_of_the_band_names() -> None:
    band = result_types("phq9", PHQ9)[f"{BASE}.band"]
    assert (band.kind, band.options) == ("choice", tuple(b.name for b in PHQ9.bands))


def test_count_is_never_none() -> None:
    assert result_types("phq9", PHQ9)[f"{BASE}.count"] == Type("integer", bounds=(0, None))


def test_items_are_typed_by_their_answers_and_subscales_are_named() -> None:
    types = result_types("mixed", _mixed())
    base = "instruments.mixed.last"
    assert types[f"{base}.items.sad"].kind == "yes/no"
    assert types[f"{base}.items.kind"].options == ("a", "b")
    assert types[f"{base}.items.hours"].bounds == (0, 24)
    assert types[f"{base}.subscales.mood.total"].bounds == (0, 1)


def test_every_value_fits_its_declared_type() -> None:
    instrument = _mixed()
    values = last_values(
        "mixed", instrument, _result(instrument, {"sad": True, "kind": "b", "hours": 7.5}, "mixed")
    )
    types = result_types("mixed", instrument)
    assert set(values) == set(types)
    assert {name: value_problem(values[name], types[name]) for name in types} == dict.fromkeys(
        types
    )


def test_before_any_administration_only_count_has_a_value() -> None:
    values = last_values("phq9", PHQ9, None)
    assert {name: value for name, value in values.items() if value is not None} == {
        f"{BASE}.count": 0
    }


def test_the_last_values_carry_the_total_band_items_and_time() -> None:
    answers = {
        item.id: code for item, code in zip(PHQ9.items, [1, 2, 1, 0, 3, 0, 0, 1, 2], strict=True)
    }
    values = last_values("phq9", PHQ9, _result(PHQ9, answers))
    assert values[f"{BASE}.total"] == sum(answers.values())
    assert (values[f"{BASE}.band"], values[f"{BASE}.items.i9"]) == ("moderate", 2)
    assert (values[f"{BASE}.administered_at"], values[f"{BASE}.count"]) == (ENDED.isoformat(), 1)


def test_the_row_has_exactly_the_documented_columns() -> None:
    answers = {item.id: 1 for item in PHQ9.items}
    assert list(row(_result(PHQ9, answers), "p1", "demo", "Europe/Paris")) == [
        c.name for c in COLUMNS
    ]


def test_the_row_holds_the_answers_as_json_and_the_local_end_time() -> None:
    answers = {item.id: 1 for item in PHQ9.items} | {"i9": None}
    written = row(_result(PHQ9, answers), "p1", "demo", "Europe/Paris")
    assert json.loads(written["answers"]) == {f"i{n}": 1 for n in range(1, 9)}
    assert (written["missing"], written["total"], written["complete"]) == ("i9", None, False)
    assert written["ended_local"] == "2026-03-01T18:06:00+01:00"


def test_every_column_is_described() -> None:
    assert all(column.description for column in COLUMNS)


def test_the_docs_list_every_column_and_every_result_name() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "instruments.md").read_text()
    suffixes = {name.split(".last.", 1)[1].split(".")[0] for name in result_types("x", _mixed())}
    assert [c.name for c in COLUMNS if f"| `{c.name}` |" not in docs] == []
    assert [s for s in sorted(suffixes) if f"instruments.<name>.last.{s}" not in docs] == []
