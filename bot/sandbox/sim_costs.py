"""LLM calls and what they cost, for the simulation report (`tandem simulate --prices FILE`):
the report's `llm` section, counted from the run's `llm.called` events and priced with the
table of bot.sandbox.sim_prices; and the `llm_personas` section, the LLM personas' own calls
(they are not events of the run: bot.sandbox.persona_llm counts them).

A model the run used with no declared price is listed as unpriced with its tokens, never
costed at 0; without `--prices` every model is unpriced.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.sandbox.sim_facts import Facts
    from bot.sandbox.sim_prices import PriceTable


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


def personas(facts: Facts) -> dict[str, Any] | None:
    """Per LLM persona: the model, the replies the LLM wrote, the calls that failed (the
    persona sent nothing for those) and the tokens; None when no persona is an LLM one."""
    run = facts.run
    if not run.writers:
        return None
    out: dict[str, Any] = {}
    for name, writer in sorted(run.writers.items()):
        out[name] = {
            "model": run.personas[name].model or run.cohort.settings.model,
            "calls": writer.calls,
            "failed": writer.failed,
            "prompt_tokens": writer.prompt_tokens,
            "completion_tokens": writer.completion_tokens,
            **{f"failed: {k}": v for k, v in sorted(writer.errors.items())},
        }
    return out
