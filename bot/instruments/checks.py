"""The rules of an instrument that span several keys: ids, answers that make sense, reverse
scoring with a range, subscales of known items, bands that tile the score range with no gap
or overlap, and an all-at-once reply that can be read. Each problem is (key path, message)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from bot.instruments.format import Answer, Band, Instrument

Path = tuple[Any, ...]
Found = list[tuple[Path, str]]
ITEM_ID = re.compile(r"^[a-z][a-z0-9_]*$")  # items.<id> is a name in conditions


def instrument_problems(instrument: Instrument) -> Found:
    """Everything wrong with a well-formed instrument that no single key shows."""
    found: Found = []
    found += _item_problems(instrument)
    if any(path[-1:] != ("id",) for path, _ in found):
        return found  # scores cannot be ranged until every item has a sound answer
    found += _subscale_problems(instrument)
    if found:
        return found
    found += _bands_of(instrument, None, ("bands",))
    for name in instrument.scoring.subscales:
        found += _bands_of(instrument, name, ("scoring", "subscales", name, "bands"))
    found += _reading_problems(instrument)
    return found


def band_problems(
    bands: Sequence[Band], low: float, high: float, integral: bool
) -> list[tuple[int, str]]:
    """Why `bands` do not tile [low, high] (band index, message). Whole-number scores take
    bands with whole-number edges, each from its `min` to its `max` inclusive, the next
    starting one above; other scores take bands whose `max` is the next band's `min` (a score
    on that edge belongs to the higher band)."""
    found: list[tuple[int, str]] = []
    for index, band in enumerate(bands):
        if band.min > band.max:
            found.append((index, f"band {band.name!r}: `min` {_n(band.min)} is above `max`"))
        elif integral and not (float(band.min).is_integer() and float(band.max).is_integer()):
            found.append(
                (
                    index,
                    f"band {band.name!r}: the score is a whole number, so its "
                    "`min` and `max` must be whole numbers",
                )
            )
    names = [band.name for band in bands]
    for index, name in enumerate(names):
        if name in names[:index]:
            found.append((index, f"band {name!r} is named twice"))
    if found or not bands:
        return found
    order = sorted(range(len(bands)), key=lambda i: (bands[i].min, bands[i].max))
    first, last = bands[order[0]], bands[order[-1]]
    step = 1 if integral else 0
    if first.min > low:
        found.append((order[0], f"{_gap(low - step, first.min, step)} in no band"))
    if first.min < low:
        found.append(
            (
                order[0],
                f"band {first.name!r} starts at {_n(first.min)}, below the "
                f"lowest possible score, {_n(low)}",
            )
        )
    for before, after in zip(order, order[1:], strict=False):
        a, b = bands[before], bands[after]
        if b.min > a.max + step:
            found.append(
                (
                    after,
                    f"{_gap(a.max, b.min, step)} in no band (between {a.name!r} and {b.name!r})",
                )
            )
        elif b.min < a.max + step:
            found.append(
                (
                    after,
                    f"bands {a.name!r} and {b.name!r} overlap: "
                    f"{_scores(b.min, min(a.max, b.max))} in both",
                )
            )
    if last.max < high:
        above = _gap(last.max, high + 1, 1) if step else f"scores above {_n(last.max)} are"
        found.append((order[-1], f"{above} in no band (the highest is {_n(high)})"))
    if last.max > high:
        found.append(
            (
                order[-1],
                f"band {last.name!r} ends at {_n(last.max)}, above the "
                f"highest possible score, {_n(high)}",
            )
        )
    return found


def single_characters(instrument: Instrument, answer: Answer) -> bool:
    """Whether every answer to an item is one character, so "12103" reads digit by digit."""
    if answer.type in ("yes/no",):
        return True
    if answer.type == "choice":
        return all(len(code) == 1 for code in answer.options or {})
    low, high = answer.range()
    return answer.type == "scale" and low is not None and high is not None and 0 <= low <= high <= 9


def _item_problems(instrument: Instrument) -> Found:
    found: Found = []
    if not instrument.items:
        found.append((("items",), "an instrument needs at least one item"))
    if instrument.answer is not None:
        found += [(("answer", *path), text) for path, text in _answer_problems(instrument.answer)]
    seen: dict[str, int] = {}
    for index, item in enumerate(instrument.items):
        here = ("items", index)
        if not ITEM_ID.match(item.id):
            found.append(
                (
                    (*here, "id"),
                    f"item id {item.id!r} must start with a letter and "
                    "use only a-z, 0-9 and _ (it is a name in conditions)",
                )
            )
        if item.id in seen:
            found.append(
                (
                    (*here, "id"),
                    f"item id {item.id!r} is used twice (first by item {seen[item.id] + 1})",
                )
            )
        seen.setdefault(item.id, index)
        if item.answer is None and instrument.answer is None:
            found.append(
                (
                    here,
                    f"item {item.id!r} has no `answer`, and the instrument has no "
                    "shared `answer` for its items",
                )
            )
            continue
        if item.answer is not None:
            found += [((*here, "answer", *p), t) for p, t in _answer_problems(item.answer)]
        answer = instrument.answer_of(item)
        if item.reverse and answer.type == "choice":
            found.append(
                ((*here, "reverse"), f"item {item.id!r} is a choice, which has no order to reverse")
            )
        elif item.reverse and instrument.reverse_bounds(item) is None:
            found.append(
                (
                    (*here, "reverse"),
                    f"item {item.id!r} is reverse-scored but its "
                    "answer has no range: give its `min` and `max`, or `scoring.reverse`",
                )
            )
    return found


def _answer_problems(answer: Answer) -> Found:
    kind, found = answer.type, Found()
    given = {key for key in ("codes", "options", "min", "max") if getattr(answer, key) is not None}
    allowed = {
        "scale": {"codes", "min", "max"},
        "choice": {"options"},
        "yes/no": set(),
        "number": {"min", "max"},
    }[kind]
    for key in sorted(given - allowed):
        found.append(((key,), f"`{key}` does not go with `type: {kind}`"))
    if kind == "choice" and len(answer.options or {}) < 2:
        found.append((("type",), "a choice needs `options` (at least two: code: label)"))
    if kind == "scale" and not answer.codes and (answer.min is None or answer.max is None):
        found.append((("type",), "a scale needs `min` and `max`, or `codes` (code: label)"))
    if kind == "scale":
        for key in ("min", "max"):
            value = getattr(answer, key)
            if value is not None and not float(value).is_integer():
                found.append(((key,), f"a scale's `{key}` must be a whole number"))
    low, high = answer.range()
    if low is not None and high is not None and low >= high and kind != "yes/no":
        found.append((("min",), f"`min` ({_n(low)}) must be below `max` ({_n(high)})"))
    for code in answer.codes or {}:
        if (low is not None and code < low) or (high is not None and code > high):
            found.append(
                (
                    ("codes", code),
                    f"code {code} is outside `min` to `max` ({_n(low)} to {_n(high)})",
                )
            )
    return found


def _subscale_problems(instrument: Instrument) -> Found:
    found: Found = []
    ids = [item.id for item in instrument.items]
    for name, subscale in instrument.scoring.subscales.items():
        here = ("scoring", "subscales", name)
        if not ITEM_ID.match(name):
            found.append(
                (
                    here,
                    f"subscale name {name!r} must start with a letter and use only a-z, 0-9 and _",
                )
            )
        if not subscale.items:
            found.append(((*here, "items"), f"subscale {name!r} names no items"))
        for k, item_id in enumerate(subscale.items):
            if item_id not in ids:
                near = difflib.get_close_matches(item_id, ids, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f" (items: {', '.join(ids)})"
                found.append(
                    (
                        (*here, "items", k),
                        f"subscale {name!r} names item {item_id!r}, which is not an item{hint}",
                    )
                )
            elif item_id in subscale.items[:k]:
                found.append(((*here, "items", k), f"subscale {name!r} names {item_id!r} twice"))
            elif instrument.answer_of(instrument.item(item_id)).type == "choice":
                found.append(
                    (
                        (*here, "items", k),
                        f"subscale {name!r}: item {item_id!r} is a choice, which is not scored",
                    )
                )
    return found


def _bands_of(instrument: Instrument, subscale: str | None, path: Path) -> Found:
    bands = instrument.bands_of(subscale)
    if not bands:
        return []
    owner = "" if subscale is None else f"subscale {subscale!r}: "
    low, high = instrument.score_range(subscale)
    if low is None or high is None:
        scored = instrument.scored(subscale)
        unbounded = next(i for i in scored if None in instrument.scored_range(i))
        message = "bands need a score with a lowest and highest value, but item"
        return [(path, f"{owner}{message} {unbounded.id!r} has no `min` or `max`")]
    found = band_problems(bands, low, high, instrument.integral(subscale))
    return [((*path, index), owner + text) for index, text in found]


def _reading_problems(instrument: Instrument) -> Found:
    rules = instrument.administration
    if rules.mode != "all-at-once" or rules.separators == "required":
        return []
    for item in instrument.items:
        answer = instrument.answer_of(item)
        if not single_characters(instrument, answer):
            low, high = answer.range()
            codes = f"codes {_n(low)} to {_n(high)}" if answer.type != "choice" else "codes"
            return [
                (
                    ("administration", "mode"),
                    f"all-at-once: item {item.id!r} has answers of "
                    f'more than one character ({codes}), so a reply such as "12103" cannot '
                    "be read digit by digit; add `separators: required` under "
                    "`administration`",
                )
            ]
    return []


def _n(value: float | None) -> str:
    return "any" if value is None else f"{value:g}"


def _gap(after: float, before: float, step: int) -> str:
    """The scores strictly between two covered values, in words, with their verb."""
    if step:
        return _scores(after + 1, before - 1)
    return f"scores from {_n(after)} up to {_n(before)} are"


def _scores(low: float, high: float) -> str:
    return f"score {_n(low)} is" if low == high else f"scores {_n(low)} to {_n(high)} are"
