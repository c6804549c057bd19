"""What an administration sends and when it moves on (pure: text and times, no sending):
an item's message with how to answer it, the all-at-once message, the next item to ask,
whether an unreadable reply is asked again, and when silence abandons the administration."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from bot.instruments.format import Answer, Instrument, Item


def item_message(instrument: Instrument, item: Item, first: bool) -> str:
    """One item, one message: the instructions before the first item, the item, the hint."""
    parts = [instrument.instructions] if first and instrument.instructions else []
    parts += [item.text, answer_hint(instrument.answer_of(item))]
    return "\n".join(parts)


def all_at_once_message(instrument: Instrument) -> str:
    """Every item numbered in one message, how to answer, and an example reply."""
    parts = [instrument.instructions] if instrument.instructions else []
    parts += [f"{n}. {item.text}" for n, item in enumerate(instrument.items, 1)]
    hints = dict.fromkeys(answer_hint(instrument.answer_of(item)) for item in instrument.items)
    if len(hints) == 1:
        parts.append(next(iter(hints)))
    example = " ".join(
        _example(instrument.answer_of(item), n) for n, item in enumerate(instrument.items)
    )
    parts.append(f"Reply with {len(instrument.items)} answers in order, e.g. {example}")
    return "\n".join(parts)


def answer_hint(answer: Answer) -> str:
    """How to answer: "Reply 0 Not at all, 1 Several days, ...", "Reply yes or no", ..."""
    low, high = answer.range()
    codes = answer.codes or {}
    if answer.type == "yes/no":
        return "Reply yes or no"
    if answer.type == "choice":
        options = answer.options or {}
        listed = [f"{n} {label}" for n, label in enumerate(options.values(), 1)]
        if any(code != label for code, label in options.items()):
            listed = [f"{code} {label}" for code, label in options.items()]
        return "Reply " + ", ".join(listed)
    if low is not None and high is not None and set(codes) == set(range(int(low), int(high) + 1)):
        return "Reply " + ", ".join(f"{code} {label}" for code, label in sorted(codes.items()))
    if low is not None and high is not None:
        return f"Reply {_anchored(low, codes)} to {_anchored(high, codes)}"
    return "Reply with a number"


def next_item(instrument: Instrument, done: Collection[str]) -> Item | None:
    """The first item neither answered nor skipped (None: the administration is complete)."""
    return next((item for item in instrument.items if item.id not in done), None)


def may_reask(instrument: Instrument, reasked: int) -> bool:
    """Whether an unreadable reply is asked again, `reasked` times having been already."""
    return reasked < instrument.administration.reask


def abandon_at(instrument: Instrument, last_sent: datetime) -> datetime:
    """When the administration is abandoned if nothing is answered after `last_sent`."""
    return last_sent + timedelta(minutes=instrument.administration.abandon_after_minutes)


def _anchored(value: float, codes: dict[int, str]) -> str:
    label = codes.get(int(value)) if float(value).is_integer() else None
    return f"{value:g} ({label})" if label else f"{value:g}"


def _example(answer: Answer, position: int) -> str:
    """An answer for the example reply, varied so it reads as one answer per item."""
    if answer.type == "yes/no":
        return "y" if position % 2 == 0 else "n"
    if answer.type == "choice":
        options = answer.options or {}
        numbered = all(code == label for code, label in options.items())
        codes = [str(n) for n in range(1, len(options) + 1)] if numbered else list(options)
        return codes[position % len(codes)]
    low, high = answer.range()
    low, high = int(low or 0), int(high if high is not None else 9)
    return str(low + position % (high - low + 1))
