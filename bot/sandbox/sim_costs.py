"""LLM calls and what they cost, for the simulation report (`tandem simulate --prices FILE`):
the price table (YAML: each model's input and output price per million tokens, every problem
at file:line) and the report's `llm` section, counted from the run's `llm.called` events.

A model the run used with no declared price is listed as unpriced with its tokens, never
costed at 0; without `--prices` every model is unpriced.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.author_errors import worded
from bot.interventions.language.intervention import Source
from bot.interventions.language.loader import parse_yaml
from bot.interventions.language.problems import InterventionError, Problem

if TYPE_CHECKING:
    from bot.sandbox.sim_report import Facts

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


def llm(facts: Facts) -> dict[str, Any]:
    """LLM calls by purpose and model: calls, failed calls, tokens in and out, and the cost
    of each model's tokens from the price table (unpriced models listed with their tokens)."""
    by_purpose: dict[tuple[str, str], dict[str, int]] = defaultdict(_zero)
    by_model: dict[str, dict[str, int]] = defaultdict(_zero)
    for events in facts.events:
        for e in events:
            if e.event_type != "llm.called":
                continue
            data = e.data.model_dump()
            for row in (by_purpose[(data["purpose"], data["model"])], by_model[data["model"]]):
                row["calls"] += 1
                row["failed"] += not data["ok"]
                row["tokens_in"] += data["prompt_tokens"] or 0
                row["tokens_out"] += data["completion_tokens"] or 0
    if not by_model:
        return {"calls": 0, "note": "no LLM calls"}
    prices: PriceTable | None = facts.prices
    models: dict[str, dict[str, Any]] = {}
    for model, row in sorted(by_model.items()):
        cost = prices.cost(model, row["tokens_in"], row["tokens_out"]) if prices else None
        models[model] = {**row, "cost": cost, "priced": cost is not None}
    unpriced = [m for m, row in models.items() if not row["priced"]]
    priced = [row["cost"] for row in models.values() if row["priced"]]
    return {
        "calls": sum(r["calls"] for r in by_model.values()),
        "failed": sum(r["failed"] for r in by_model.values()),
        "tokens_in": sum(r["tokens_in"] for r in by_model.values()),
        "tokens_out": sum(r["tokens_out"] for r in by_model.values()),
        "by_purpose": [
            {"purpose": purpose, "model": model, **row}
            for (purpose, model), row in sorted(by_purpose.items())
        ],
        "by_model": models,
        "currency": prices.currency if prices else None,
        "cost": round(sum(priced), 6) if priced else None,
        "unpriced_models": unpriced,
        "prices": "declared" if prices else "none given (--prices FILE)",
    }


def _zero() -> dict[str, int]:
    return {"calls": 0, "failed": 0, "tokens_in": 0, "tokens_out": 0}
