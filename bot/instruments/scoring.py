"""Scoring one administration: each scored item's value (yes is 1, no is 0; reverse-scored
items flipped within their range), the total by the instrument's method (sum or mean), the
mean item score, subscales, and the band the total falls in. A total needs every item it
counts: with one missing it is None (never a silent partial sum)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.instruments.format import Band, Instrument, Item

Value = int | float | bool | str


@dataclass(frozen=True)
class Subtotal:
    """The score of a subscale (or of the whole instrument): None while an item is missing."""

    total: int | float | None
    mean: float | None
    band: str | None
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Score:
    """An administration's answers (item id: value; a skipped or unanswered item is absent)
    and what they add up to."""

    items: Mapping[str, Value]
    total: int | float | None
    mean: float | None
    band: str | None
    subscales: Mapping[str, Subtotal] = field(default_factory=dict)
    missing: tuple[str, ...] = ()  # every item without an answer, scored or not

    @property
    def complete(self) -> bool:
        return not self.missing


def score(instrument: Instrument, answers: Mapping[str, Value | None]) -> Score:
    """Score `answers` (item id: value as `parsing` reads it; None for a skipped item).
    ValueError for an unknown item or a value its answer does not allow."""
    given: dict[str, Value] = {}
    for item_id, value in answers.items():
        item = instrument.item(item_id) if _known(instrument, item_id) else None
        if item is None:
            raise ValueError(f"{item_id!r} is not an item of this instrument")
        if value is not None:
            _check(instrument, item, value)
            given[item_id] = value
    whole = _subtotal(instrument, None, given)
    subscales = {name: _subtotal(instrument, name, given) for name in instrument.scoring.subscales}
    missing = tuple(item.id for item in instrument.items if item.id not in given)
    return Score(given, whole.total, whole.mean, whole.band, subscales, missing)


def item_score(instrument: Instrument, item: Item, value: Value) -> int | float:
    """What an answer adds to a score: yes 1, no 0, a number itself; flipped if reversed."""
    number = int(value) if isinstance(value, bool) else value
    if not isinstance(number, int | float):
        raise ValueError(f"item {item.id!r} is a choice and is not scored")
    if item.reverse:
        bounds = instrument.reverse_bounds(item)
        if bounds is None:
            raise ValueError(f"item {item.id!r} is reverse-scored without a range")
        number = bounds[0] + bounds[1] - number
    return _whole(number)


def band_of(bands: Sequence[Band], value: float, integral: bool) -> str | None:
    """The band `value` falls in (see checks.band_problems for the edges), None if none."""
    top = max((band.max for band in bands), default=None)
    for band in bands:
        upper = value <= band.max if integral or band.max == top else value < band.max
        if band.min <= value and upper:
            return band.name
    return None


def _subtotal(instrument: Instrument, subscale: str | None, given: Mapping[str, Value]) -> Subtotal:
    items = instrument.scored(subscale)
    missing = tuple(item.id for item in items if item.id not in given)
    if missing or not items:
        return Subtotal(None, None, None, missing)
    values = [item_score(instrument, item, given[item.id]) for item in items]
    mean = sum(values) / len(values)
    total = _whole(mean if instrument.scoring.method == "mean" else sum(values))
    bands = instrument.bands_of(subscale)
    return Subtotal(total, mean, band_of(bands, total, instrument.integral(subscale)))


def _known(instrument: Instrument, item_id: str) -> bool:
    return any(item.id == item_id for item in instrument.items)


def _check(instrument: Instrument, item: Item, value: Value) -> None:
    answer = instrument.answer_of(item)
    if answer.type == "yes/no":
        fits = isinstance(value, bool)
    elif answer.type == "choice":
        fits = isinstance(value, str) and value in (answer.options or {})
    else:
        fits = _in_range(instrument, item, value)
    if not fits:
        raise ValueError(f"{value!r} is not an answer to item {item.id!r} ({answer.type})")


def _in_range(instrument: Instrument, item: Item, value: Value) -> bool:
    answer = instrument.answer_of(item)
    if isinstance(value, bool | str):
        return False
    if answer.type == "scale" and not float(value).is_integer():
        return False
    low, high = answer.range()
    return (low is None or value >= low) and (high is None or value <= high)


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
