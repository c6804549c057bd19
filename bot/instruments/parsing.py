"""Reading SMS replies to an instrument: one answer ("2", "several days", "yes", "sí", "não",
"skip") or, for all-at-once administration, every answer in one message ("1 2 1 0 3 0 0 1 2",
"1,2,1,0,...", or "121030012" when every answer is one character). A reply that is no answer
comes back with the reason, naming the bad positions, for the re-ask."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from bot.instruments.checks import single_characters
from bot.instruments.format import Answer, Instrument, Item
from bot.instruments.scoring import Value

T = TypeVar("T")
# Normalised (lower case, accents dropped): English, Spanish, French, Portuguese.
YES = frozenset("yes y yeah yep yup ya sure si sim oui ouais".split())
NO = frozenset("no n nope nah non nao".split())
SKIP = frozenset(
    {
        "skip",
        "pass",
        "skip it",
        "rather not say",
        "prefer not to say",
        "-",
        "saltar",
        "paso",
        "omitir",
        "passer",
        "pular",
    }
)
NO_SKIP = "this question cannot be skipped"
_INTEGER = re.compile(r"(?<![\w.,])-?\d+(?![\w]|[.,]\d)")
_NUMBER = re.compile(r"(?<![\w.,])-?\d+(?:[.,]\d+)?(?!\w)")
_OUT_OF = re.compile(r"^\s*(-?\d+)\s*(?:/|out of|of)\s*\d+\b")
_CLAUSE = re.compile(r"[.!?,;:\n]")
_SEPARATORS = re.compile(r"[\s,;|]+")


@dataclass(frozen=True)
class Reading:
    """What a reply to one item said: its `value`, a skip, or (`problem`) why it is none."""

    value: Value | None = None
    skipped: bool = False
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class Readings:
    """What an all-at-once reply said: each item's value (None: skipped), or the problem and
    the 1-based positions of the bad answers (empty when the count itself is wrong)."""

    values: dict[str, Value | None] = field(default_factory=dict)
    problem: str | None = None
    positions: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.problem is None


def normalise(text: str) -> str:
    """Lower case, accents and apostrophes dropped, anything but letters, digits and '-'
    made one space."""
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(char for char in text if not unicodedata.combining(char))
    text = text.replace("'", "").replace("\u2019", "")
    return " ".join(re.sub(r"[^0-9a-z-]+", " ", text).split())


def parse_answer(instrument: Instrument, item: Item | str, reply: str) -> Reading:
    """One item's answer from a reply (one-per-message administration)."""
    item = instrument.item(item) if isinstance(item, str) else item
    answer = instrument.answer_of(item)
    forms = _candidates(reply)
    if any(form in SKIP for form in forms):
        return _skip(instrument)
    if answer.type == "yes/no":
        return _yes_no(forms) or Reading(problem="not an answer: reply yes or no")
    if answer.type == "choice":
        return _choice(answer, forms, reply) or Reading(problem=_expected(answer))
    return _numeric(answer, forms, reply)


def parse_all(instrument: Instrument, reply: str) -> Readings:
    """Every item's answer from one reply, in item order (all-at-once administration)."""
    items = instrument.items
    tokens = [token for token in _SEPARATORS.split(reply.strip()) if token]
    joined = "".join(tokens)
    if (
        len(tokens) != len(items)
        and len(joined) == len(items)
        and _run_together(instrument, joined)
    ):
        tokens = list(joined)
    if len(tokens) != len(items):
        return Readings(problem=_count_problem(len(tokens), len(items)))
    values: dict[str, Value | None] = {}
    bad: list[str] = []
    positions: list[int] = []
    for position, (item, token) in enumerate(zip(items, tokens, strict=True), 1):
        reading = _code(instrument, item, token)
        if reading.ok:
            values[item.id] = reading.value
        else:
            positions.append(position)
            why = "but it cannot be skipped" if reading.problem == NO_SKIP else None
            bad.append(f"answer {position} is {token!r}, {why or _wanted(instrument, item)}")
    if bad:
        return Readings(problem="; ".join(bad), positions=tuple(positions))
    return Readings(values=values)


def _code(instrument: Instrument, item: Item, token: str) -> Reading:
    """One answer of an all-at-once reply: a code, never words."""
    answer = instrument.answer_of(item)
    form = normalise(token) or token
    if form in SKIP:
        return _skip(instrument)
    if answer.type == "yes/no":
        found = _yes_no([form]) or _yes_no(["yes" if form == "1" else "no" if form == "0" else ""])
        return found or Reading(problem="not yes or no (y/n, 1/0)")
    if answer.type == "choice":
        return _choice(answer, [form], token) or Reading(problem=_expected(answer))
    return _numeric(answer, [form], token, alone=True)


def _skip(instrument: Instrument) -> Reading:
    if instrument.administration.skip == "allowed":
        return Reading(skipped=True)
    return Reading(problem=NO_SKIP)


def _yes_no(forms: list[str]) -> Reading | None:
    for form in forms:
        if form in YES:
            return Reading(value=True)
        if form in NO:
            return Reading(value=False)
    return None


def _choice(answer: Answer, forms: list[str], reply: str) -> Reading | None:
    options = answer.options or {}
    codes = {normalise(code): code for code in options}
    labels = {normalise(label): code for code, label in options.items()}
    numbered = not any(code.isdigit() for code in codes)
    for form in forms:
        if form in codes:
            return Reading(value=codes[form])
        if numbered and form.isdigit() and 1 <= int(form) <= len(options):
            return Reading(value=list(options)[int(form) - 1])
        if form in labels:
            return Reading(value=labels[form])
    named = _labels_in(labels, normalise(reply))
    return Reading(value=named.pop()) if len(named) == 1 else None


def _numeric(answer: Answer, forms: list[str], reply: str, alone: bool = False) -> Reading:
    """A scale's code or a number: the one number in the reply, or a scale label's words."""
    low, high = answer.range()
    labels = {normalise(label): code for code, label in (answer.codes or {}).items()}
    named = {labels[form] for form in forms if form in labels}
    named = named or (set() if alone else _labels_in(labels, normalise(reply)))
    pattern = _NUMBER if answer.type == "number" else _INTEGER
    out_of = _OUT_OF.match(reply)
    numbers = [out_of[1]] if out_of else pattern.findall(reply)
    if alone and numbers and numbers[0] != reply.strip():
        numbers = []
    if len(numbers) > 1 or len(named) > 1:
        return Reading(problem=f"more than one answer in the reply; {_range(answer)}")
    if not numbers and not named:
        return Reading(problem=f"not an answer: {_range(answer)}")
    value = next(iter(named)) if named else _as_number(numbers[0])
    if numbers and named and _as_number(numbers[0]) != value:
        return Reading(problem=f"the number and the words disagree; {_range(answer)}")
    if (low is not None and value < low) or (high is not None and value > high):
        return Reading(problem=f"{value:g} is out of range; {_range(answer)}")
    return Reading(value=value)


def _labels_in(labels: Mapping[str, T], reply: str) -> set[T]:
    """The codes whose label is written, whole words, inside the reply."""
    padded = f" {reply} "
    return {code for label, code in labels.items() if label and f" {label} " in padded}


def _candidates(reply: str) -> list[str]:
    """The reply, normalised, and its first clause ("Yes, twice" -> "yes")."""
    whole = normalise(reply)
    first = normalise(_CLAUSE.split(reply.strip(), maxsplit=1)[0])
    return [form for form in dict.fromkeys((whole, first)) if form]


def _as_number(text: str) -> int | float:
    number = float(text.replace(",", "."))
    return int(number) if number.is_integer() else number


def _range(answer: Answer) -> str:
    low, high = answer.range()
    if low is None and high is None:
        return "reply with a number"
    if low is None or high is None:
        bound = f"at least {low:g}" if high is None else f"at most {high:g}"
        return f"reply with a number, {bound}"
    return f"reply with a number from {low:g} to {high:g}"


def _expected(answer: Answer) -> str:
    shown = ", ".join(f"{code} ({label})" for code, label in (answer.options or {}).items())
    return f"not one of the options: {shown}"


def _wanted(instrument: Instrument, item: Item) -> str:
    """What an all-at-once answer to `item` should have been."""
    answer = instrument.answer_of(item)
    skip = " or - to skip" if instrument.administration.skip == "allowed" else ""
    if answer.type == "yes/no":
        return f"not y or n (1 or 0){skip}"
    if answer.type == "choice":
        return f"not one of {', '.join(answer.options or {})}{skip}"
    return "not " + _range(answer).removeprefix("reply with ") + skip


def _count_problem(found: int, wanted: int) -> str:
    if found < wanted:
        missing = ", ".join(str(n) for n in range(found + 1, wanted + 1))
        where = f"answer {missing} is" if found + 1 == wanted else f"answers {missing} are"
        return f"{_answers(found)} for {wanted} questions: {where} missing"
    return f"{_answers(found)} for {wanted} questions: {found - wanted} too many"


def _answers(count: int) -> str:
    return "1 answer" if count == 1 else f"{count} answers"


def _run_together(instrument: Instrument, joined: str) -> bool:
    """Whether `joined` reads one character per item: separators are optional, every item's
    answers are one character, and `joined` is mostly codes ("12103001x" is, to name the bad
    ninth answer; "2notatall" is not)."""
    if instrument.administration.separators == "required":
        return False
    codes: set[str] = set()
    for item in instrument.items:
        answer = instrument.answer_of(item)
        if not single_characters(instrument, answer):
            return False
        codes |= set(answer.options or {}) if answer.type == "choice" else set("0123456789yn")
    return 2 * sum(char in codes for char in joined.lower()) > len(joined)
