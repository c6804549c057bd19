"""The price table for `tandem simulate --prices FILE` (YAML: each model's input and output
price per million tokens, every problem at file:line); bot.sandbox.sim_costs prices the run's
LLM calls with it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.author_errors import worded
from bot.interventions.language.intervention import Source
from bot.interventions.language.loader import parse_yaml
from bot.interventions.language.problems import InterventionError, Problem

MILLION = 1_000_000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(Strict):
    """One model's price per million tokens: prompt (`input`) and completion (`output`)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable(Strict):
    """docs/prices.example.yaml: the currency and each model's price per million tokens."""

    currency: str = Field("USD", min_length=1)
    per_million_tokens: dict[str, Price] = Field(min_length=1)

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float | None:
        """What the tokens cost with this model's price; None for a model with none."""
        price = self.per_million_tokens.get(model)
        if price is None:
            return None
        return round((tokens_in * price.input + tokens_out * price.output) / MILLION, 6)


class PricesError(InterventionError):
    """A price table that cannot be used; `problems` says why, each at file:line."""


def read_prices(path: Path) -> PriceTable:
    """The price table in `path`; PricesError lists every problem at file:line."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PricesError([Problem(file, 1, f"cannot read the file: {exc}")]) from None
    try:
        meta, lines = parse_yaml(text, 1)
    except ValueError as exc:
        raise PricesError([Problem(file, getattr(exc, "line", 1), str(exc))]) from None
    source = Source(file, lines, 1, text=text)
    try:
        return PriceTable.model_validate(meta)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            loc, message = worded(error)
            problems.append(Problem(file, source.line(*loc) or 1, message))
        raise PricesError(problems) from None
