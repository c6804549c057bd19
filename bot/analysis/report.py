"""One decision's analysis from a frame shaped like decisions.csv: the rows and columns that
feed the estimators, each option's effect against the reference, and how it is shown (a text
table, a JSON-able dict). `tandem analyze decisions` is the glue around these."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bot.analysis.excursion import Estimate, Method, excursion_effects

# decisions.csv: one row per decision point; `p_<option>` per option, `mod_<name>` per moderator.
COLUMNS = (
    "participant", "decision", "index", "utc", "local_time", "day_in_study", "available",
    "unavailable_reason", "option", "outcome_value", "outcome_status",
)  # fmt: skip
_SUM_TOLERANCE = 1e-6  # logged probabilities are rounded when written; a real misfit is larger


@dataclass(frozen=True)
class DecisionAnalysis:
    """Each non-reference option's estimate, from one fit, and the counts behind them."""

    decision: str
    method: Method
    outcome_kind: str  # "yes/no" (EMEE, log relative risk) or "number" (WCLS, additive)
    reference: str
    moderators: tuple[str, ...]
    estimates: dict[str, Estimate]
    n_participants: int
    n_decisions: int
    n_available: int
    n_missing: int  # available points without an outcome, left out of the fit


def analyze_decision(
    frame: pd.DataFrame,
    decision: str,
    moderators: Sequence[str] = (),
    reference: str | None = None,
    outcome_kind: str | None = None,
) -> DecisionAnalysis:
    """The analysis of `decision`: moderators by name (column `mod_<name>`); the reference is
    the first option unless named; the outcome kind comes from the decision file, or else is
    yes/no when every observed outcome is 0 or 1. ValueError says what the data lacks."""
    rows = frame.loc[frame["decision"] == decision]
    if rows.empty:
        raise ValueError(f"no decision points of {decision!r}")
    options = [str(c)[2:] for c in rows.columns if str(c).startswith("p_")]
    reference = reference or (options[0] if options else None)
    if reference not in options or len(options) < 2:
        raise ValueError(f"{decision!r} needs p_<option> columns of 2+ options, {reference!r} one")
    for name in moderators:
        if f"mod_{name}" not in rows.columns:
            raise ValueError(f"no column mod_{name}: {name!r} is not a moderator of {decision!r}")
    available = _truth(rows["available"])
    observed = rows["outcome_status"].astype(str).eq("observed").to_numpy()
    probabilities = rows.loc[available, [f"p_{o}" for o in options]].to_numpy(dtype=float)
    if (np.abs(probabilities.sum(axis=1) - 1) > _SUM_TOLERANCE).any():
        raise ValueError(f"the logged probabilities of {decision!r} do not sum to 1 everywhere")
    values = rows.loc[available & observed, "outcome_value"].astype(float)
    kind = outcome_kind or ("yes/no" if values.isin((0.0, 1.0)).all() else "number")
    method: Method = "emee" if kind == "yes/no" else "wcls"
    arms = [o for o in options if o != reference]
    work = pd.DataFrame(
        {
            "_participant": rows["participant"].to_numpy(),
            "_available": available & observed,
            "_outcome": rows["outcome_value"].astype(float).to_numpy(),
            **{f"_chose_{o}": (rows["option"] == o).astype(int).to_numpy() for o in arms},
            **{f"_p_{o}": rows[f"p_{o}"].astype(float).to_numpy() for o in arms},
            **{name: rows[f"mod_{name}"].astype(float).to_numpy() for name in moderators},
        }
    )
    columns = {o: (f"_chose_{o}", f"_p_{o}") for o in arms}
    found = excursion_effects(
        method, work, "_outcome", columns, "_available", "_participant", moderators
    )
    return DecisionAnalysis(
        decision=decision,
        method=method,
        outcome_kind=kind,
        reference=reference,
        moderators=tuple(moderators),
        estimates=found,
        n_participants=int(rows.loc[available, "participant"].nunique()),
        n_decisions=len(rows),
        n_available=int(available.sum()),
        n_missing=int((available & ~observed).sum()),
    )


def format_estimates(analysis: DecisionAnalysis) -> str:
    """A plain-text table: per option and term, estimate, 95% CI, p (and the risk ratio)."""
    scale = "log risk ratio" if analysis.method == "emee" else "difference"
    lines = [
        f"{analysis.decision}: {analysis.method.upper()} ({analysis.outcome_kind} outcome, "
        f"{scale}), each option against {analysis.reference!r}",
        f"{'option':<14}{'term':<18}{'estimate':>10}  {'95% CI':<22}{'p':>8}"
        + ("  risk ratio (95% CI)" if analysis.method == "emee" else ""),
    ]
    for option, estimate in analysis.estimates.items():
        for c in estimate.coefficients:
            row = (f"{option:<14}{c.term:<18}{c.estimate:>10.3f}  "
                   f"{f'{c.low:.3f} to {c.high:.3f}':<22}{_p(c.p_value):>8}")  # fmt: skip
            if c.ratio is not None:
                row += f"  {c.ratio[0]:.2f} ({c.ratio[1]:.2f} to {c.ratio[2]:.2f})"
            lines.append(row)
    counts = (f"{analysis.n_participants} participants, {analysis.n_decisions} decision "
              f"points, {analysis.n_available} available")  # fmt: skip
    if analysis.n_missing:
        counts += f" ({analysis.n_missing} without an outcome, left out)"
    return "\n".join([*lines, counts])


def estimates_json(analysis: DecisionAnalysis) -> dict[str, Any]:
    """The same as `format_estimates`, as plain JSON values."""
    options = {}
    for option, estimate in analysis.estimates.items():
        terms = []
        for c in estimate.coefficients:
            term: dict[str, Any] = {"term": c.term, "estimate": c.estimate, "se": c.se}
            term.update(ci_low=c.low, ci_high=c.high, p_value=c.p_value)
            if c.ratio is not None:
                term.update(risk_ratio=c.ratio[0], rr_ci_low=c.ratio[1], rr_ci_high=c.ratio[2])
            terms.append(term)
        options[option] = {"reference_prob": estimate.reference_prob, "coefficients": terms}
    return {
        "decision": analysis.decision,
        "method": analysis.method,
        "outcome_kind": analysis.outcome_kind,
        "reference": analysis.reference,
        "moderators": list(analysis.moderators),
        "n_participants": analysis.n_participants,
        "n_decisions": analysis.n_decisions,
        "n_available": analysis.n_available,
        "n_missing": analysis.n_missing,
        "options": options,
    }


def _truth(column: pd.Series) -> np.ndarray:
    """A yes/no column as read from a CSV (bools, 0/1, or the words true/false)."""
    if column.dtype == bool:
        return column.to_numpy()
    words = column.astype(str).str.strip().str.lower()
    return words.isin(("true", "1", "1.0", "yes")).to_numpy()


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else ("nan" if math.isnan(value) else f"{value:.3f}")
