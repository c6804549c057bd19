"""The instrument format as pydantic models (`instruments/<name>.yaml`), and the ranges its
scores can take. docs/instruments.md explains every key; `checks` holds the rules that span
several keys (bands tiling the score range, item ids, subscales)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

AnswerType = Literal["scale", "choice", "yes/no", "number"]
Range = tuple[float | None, float | None]


def _text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


Text = Annotated[str, BeforeValidator(_text)]


def _labelled(value: Any) -> Any:
    """Options written as a list of labels: each label is its own code."""
    if isinstance(value, list):
        return {_text(label): label for label in value}
    return value


def _items_only(value: Any) -> Any:
    """A subscale written as a bare list of item ids."""
    return {"items": value} if isinstance(value, list) else value


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Answer(Strict):
    """How an item is answered. `scale`: a whole number from `min` to `max`, `codes` giving
    labels (the codes alone fix the range when min/max are not written); `choice`: one of
    `options` (code: label; a list of labels is its own codes), never scored; `yes/no`:
    scored 1 for yes and 0 for no; `number`: any number, within `min`/`max` when given."""

    type: AnswerType
    codes: dict[int, Text] | None = None
    options: Annotated[dict[Text, Text] | None, BeforeValidator(_labelled)] = None
    min: float | None = None
    max: float | None = None

    def range(self) -> Range:
        """The lowest and highest value (yes/no: its score, 0 to 1); None where unbounded."""
        if self.type == "yes/no":
            return (0, 1)
        if self.type == "choice":
            return (None, None)
        low, high = self.min, self.max
        if self.type == "scale" and self.codes:
            low = min(self.codes) if low is None else low
            high = max(self.codes) if high is None else high
        return (_whole(low), _whole(high))


class Item(Strict):
    """One question; `answer` defaults to the instrument's; `reverse` scores it flipped
    within its range; `scored: false` keeps it out of the totals."""

    id: Text
    text: Text
    answer: Answer | None = None
    reverse: bool = False
    scored: bool = True


class Band(Strict):
    """A named part of the score range, `min` to `max` (see `checks.band_problems`)."""

    name: Text
    min: float
    max: float
    description: Text | None = None


class Subscale(Strict):
    items: list[Text]
    bands: list[Band] = []


class Bounds(Strict):
    min: float
    max: float


class Scoring(Strict):
    """`sum` or `mean` of the scored items; `reverse`: the range reverse-scored items are
    flipped within (default: each item's own)."""

    method: Literal["sum", "mean"] = "sum"
    subscales: dict[Text, Annotated[Subscale, BeforeValidator(_items_only)]] = {}
    reverse: Bounds | None = None


class Administration(Strict):
    """How the items are asked: one per message, or all in one message read by the
    all-at-once parser (`separators: required` stops it reading "12103" digit by digit)."""

    mode: Literal["one-per-message", "all-at-once"] = "one-per-message"
    reask: int = Field(1, ge=0, le=5)
    skip: Literal["allowed", "not-allowed"] = "not-allowed"
    separators: Literal["optional", "required"] = "optional"
    abandon_after_minutes: int = Field(120, ge=1)


class Instrument(Strict):
    """A questionnaire: its items, scoring, bands and how it is administered."""

    title: Text
    citation: Text
    licence: Text | None = None
    description: Text | None = None
    instructions: Text | None = None
    answer: Answer | None = None
    items: list[Item]
    scoring: Scoring = Scoring()
    bands: list[Band] = []
    administration: Administration = Administration()

    def item(self, item_id: str) -> Item:
        """The item with this id (KeyError if there is none)."""
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)

    def answer_of(self, item: Item) -> Answer:
        """The item's answer, or the instrument's shared one (`checks` makes sure of one)."""
        answer = item.answer or self.answer
        if answer is None:
            raise ValueError(f"item {item.id!r} has no answer")
        return answer

    def item_range(self, item_id: str) -> Range:
        """The lowest and highest answer to an item as recorded (not reversed)."""
        return self.answer_of(self.item(item_id)).range()

    def scored(self, subscale: str | None = None) -> list[Item]:
        """The items counted in the total (or in `subscale`), in their written order."""
        if subscale is None:
            return [item for item in self.items if item.scored and self._scorable(item)]
        return [self.item(item_id) for item_id in self.scoring.subscales[subscale].items]

    def scored_range(self, item: Item) -> Range:
        """The range of the item's contribution to a score (after reversing)."""
        low, high = self.answer_of(item).range()
        if not item.reverse or low is None or high is None:
            return (low, high)
        flip = self.reverse_bounds(item)
        if flip is None:
            return (None, None)
        return (_whole(flip[0] + flip[1] - high), _whole(flip[0] + flip[1] - low))

    def reverse_bounds(self, item: Item) -> tuple[float, float] | None:
        """The range a reverse-scored item is flipped within, None if it has none."""
        if self.scoring.reverse is not None:
            return (self.scoring.reverse.min, self.scoring.reverse.max)
        low, high = self.answer_of(item).range()
        return None if low is None or high is None else (low, high)

    def score_range(self, subscale: str | None = None) -> Range:
        """The lowest and highest total (or subscale total), by the scoring method; None
        where an item is unbounded."""
        ranges = [self.scored_range(item) for item in self.scored(subscale)]
        return _combined(ranges, self.scoring.method)

    def mean_range(self, subscale: str | None = None) -> Range:
        """The lowest and highest mean item score."""
        return _combined([self.scored_range(item) for item in self.scored(subscale)], "mean")

    def integral(self, subscale: str | None = None) -> bool:
        """Whether the total only takes whole numbers (so bands have whole-number edges)."""
        if self.scoring.method == "mean":
            return False
        return all(self._whole_scores(item) for item in self.scored(subscale))

    def bands_of(self, subscale: str | None = None) -> list[Band]:
        return self.bands if subscale is None else self.scoring.subscales[subscale].bands

    def _scorable(self, item: Item) -> bool:
        answer = item.answer or self.answer
        return answer is not None and answer.type != "choice"

    def _whole_scores(self, item: Item) -> bool:
        answer = self.answer_of(item)
        if answer.type == "number":
            return False
        flip = self.reverse_bounds(item) if item.reverse else (0, 0)
        return flip is not None and all(float(edge).is_integer() for edge in flip)


def _combined(ranges: list[Range], method: str) -> Range:
    if not ranges:
        return (0, 0)
    low, high = _total([low for low, _ in ranges]), _total([high for _, high in ranges])
    if method == "mean":
        low = None if low is None else low / len(ranges)
        high = None if high is None else high / len(ranges)
    return (_whole(low), _whole(high))


def _total(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) if len(known) == len(values) else None


def _whole(value: float | None) -> float | None:
    """A whole number as an int (27, not 27.0), so ranges read as authors wrote them."""
    if value is not None and float(value).is_integer():
        return int(value)
    return value
