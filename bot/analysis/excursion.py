"""Causal excursion effects of a micro-randomised decision: WCLS for a continuous outcome
(Boruvka et al. 2018, additive scale) and EMEE for a yes/no outcome (Qian et al. 2021, log
relative risk), defined as the R package MRTAnalysis defines them (github.com/tqian/
MRTAnalysis_R-package, `R/wcls.R` and `R/emee.R`).

Both use the available decision points only; weight each by p̃(chosen) / p(chosen), p being the
logged probability of the option chosen and p̃ a constant numerator probability per option (the
mean logged probability unless given; MRTAnalysis's `numerator_prob`); centre each option's
indicator as A − p̃; and estimate the variance with a sandwich clustered by participant.

- WCLS: weighted least squares of Y on the controls (intercept, control variables and the
  moderators, as R's `control + I(A - p̃) * (moderators)` expands) and (A − p̃)·(1, moderators).
  statsmodels' WLS gives the estimate and its cluster-robust covariance.
- EMEE: the root of Σ W·e^{−A·X'β}·(Y − e^{Z'α + A·X'β})·(Z; (A − p̃)·X) = 0. Because Z holds X
  and p̃ is constant, the (A − p̃)·X rows may be replaced by A·X, so that for a fixed β in the
  weight it is a Poisson GLM's score with variance weights W·e^{−A·X'β}: the GLM is refitted
  with the weight of its last β until β stops moving. The sandwich is then taken from the
  estimating function itself (its Jacobian includes the derivative of e^{−A·X'β}, as
  MRTAnalysis's M_n does; a GLM's own covariance would leave that out).

Small samples: both covariances carry statsmodels' cluster factor G/(G−1)·(N−1)/(N−K) and use
t quantiles with G − 1 degrees of freedom. MRTAnalysis reports the plain sandwich with normal
quantiles and a Mancl–DeRouen ("hat" matrix) adjusted one with t(G − p − q); with tens of
participants the three differ by a few per cent of the standard error.

More than two options (A, B, nothing): one fit with an indicator per non-reference option, each
centred by its own p̃, and W = p̃(chosen)/p(chosen) with p̃(reference) = 1 − Σ p̃; each option's
coefficients are its contrast against the reference. With two options this is the binary case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.sandwich_covariance import S_crosssection
from statsmodels.tools.numdiff import approx_fprime

EFFECT = "(effect)"  # the term of the effect where every moderator is 0
Method = Literal["wcls", "emee"]
Arms = Mapping[str, tuple[str, str | float]]  # option -> (its 0/1 column, its probability)
_TOLERANCE = 1e-10
_MAX_REFITS = 200


@dataclass(frozen=True)
class Coefficient:
    """One term of an effect: `EFFECT`, or a moderator (the change of the effect per unit of
    it). EMEE's are log relative risks; `ratio` holds the exp() of estimate, low and high."""

    term: str
    estimate: float
    se: float
    low: float  # the 95% confidence interval
    high: float
    p_value: float
    ratio: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Estimate:
    """The excursion effect of one option against the reference, and what it rests on."""

    method: Method
    option: str
    reference_prob: float  # p̃, this option's numerator probability
    coefficients: tuple[Coefficient, ...]
    n_participants: int  # those with an available decision point
    n_decisions: int
    n_available: int

    def term(self, name: str = EFFECT) -> Coefficient:
        """The coefficient of `name` (the effect itself by default)."""
        return next(c for c in self.coefficients if c.term == name)


def wcls(
    frame: pd.DataFrame,
    outcome: str,
    treatment: str,
    rand_prob: str | float,
    availability: str,
    id: str,
    moderators: Sequence[str] = (),
    control_vars: Sequence[str] = (),
    reference_prob: float | None = None,
) -> Estimate:
    """The additive excursion effect of a 0/1 `treatment` on a continuous `outcome`."""
    return _one("wcls", frame, outcome, treatment, rand_prob, availability, id, moderators,
                control_vars, reference_prob)  # fmt: skip


def emee(
    frame: pd.DataFrame,
    outcome: str,
    treatment: str,
    rand_prob: str | float,
    availability: str,
    id: str,
    moderators: Sequence[str] = (),
    control_vars: Sequence[str] = (),
    reference_prob: float | None = None,
) -> Estimate:
    """The excursion effect (log relative risk) of a 0/1 `treatment` on a 0/1 `outcome`."""
    return _one("emee", frame, outcome, treatment, rand_prob, availability, id, moderators,
                control_vars, reference_prob)  # fmt: skip


def _one(
    method: Method,
    frame: pd.DataFrame,
    outcome: str,
    treatment: str,
    rand_prob: str | float,
    availability: str,
    id: str,
    moderators: Sequence[str],
    control_vars: Sequence[str],
    reference_prob: float | None,
) -> Estimate:
    """`wcls`/`emee`: one 0/1 treatment, as `excursion_effects` estimates it."""
    arms = {treatment: (treatment, rand_prob)}
    tilde = {} if reference_prob is None else {treatment: reference_prob}
    found = excursion_effects(method, frame, outcome, arms, availability, id, moderators,
                              control_vars, tilde)  # fmt: skip
    return found[treatment]


def excursion_effects(
    method: Method,
    frame: pd.DataFrame,
    outcome: str,
    arms: Arms,
    availability: str,
    id: str,
    moderators: Sequence[str] = (),
    control_vars: Sequence[str] = (),
    reference_probs: Mapping[str, float] | None = None,
) -> dict[str, Estimate]:
    """Each option's effect against the reference (the points where no arm's column is 1),
    from one fit; ValueError for data the estimators cannot use."""
    design = _Design.build(frame, outcome, arms, availability, id, moderators, control_vars,
                           reference_probs or {})  # fmt: skip
    params, cov = _wcls(design) if method == "wcls" else _emee(design)
    groups = int(design.groups.max()) + 1
    quantile = float(stats.t.ppf(0.975, groups - 1))
    width = len(design.effect_names)
    start = design.controls.shape[1]
    found: dict[str, Estimate] = {}
    for k, option in enumerate(arms):
        terms = []
        for j, term in enumerate(design.effect_names):
            at = start + k * width + j
            estimate, se = float(params[at]), float(np.sqrt(cov[at, at]))
            low, high = estimate - quantile * se, estimate + quantile * se
            p_value = float(2 * stats.t.sf(abs(estimate / se), groups - 1))
            ratio = None
            if method == "emee":
                ratio = (float(np.exp(estimate)), float(np.exp(low)), float(np.exp(high)))
            terms.append(Coefficient(term, estimate, se, low, high, p_value, ratio))
        found[option] = Estimate(method, option, design.tilde[k], tuple(terms), groups,
                                 len(frame), len(design.y))  # fmt: skip
    return found


@dataclass(frozen=True)
class _Design:
    """The available points as arrays: outcome, participant codes, controls Z, effect terms X,
    each arm's indicator and its centred value, and the weights."""

    y: np.ndarray
    groups: np.ndarray
    controls: np.ndarray
    effect: np.ndarray
    effect_names: tuple[str, ...]
    chosen: np.ndarray
    centred: np.ndarray
    weight: np.ndarray
    tilde: tuple[float, ...]

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        outcome: str,
        arms: Arms,
        availability: str,
        id: str,
        moderators: Sequence[str],
        control_vars: Sequence[str],
        reference_probs: Mapping[str, float],
    ) -> _Design:
        rows = frame.loc[frame[availability].astype(bool).to_numpy()]
        if rows.empty:
            raise ValueError("no available decision point to analyse")
        y = rows[outcome].to_numpy(dtype=float)
        if np.isnan(y).any():
            raise ValueError(f"{outcome} is missing at {int(np.isnan(y).sum())} available points")
        chosen = np.column_stack(
            [rows[column].to_numpy(dtype=float) for column, _ in arms.values()]
        )
        probs = np.column_stack([_probability(rows, given) for _, given in arms.values()])
        if not np.isin(chosen, (0.0, 1.0)).all() or (chosen.sum(axis=1) > 1).any():
            raise ValueError("each point chooses one option: arm columns are 0/1, at most one 1")
        if np.isnan(probs).any() or (probs <= 0).any() or (probs.sum(axis=1) >= 1).any():
            raise ValueError("the logged probabilities must lie in (0, 1), the reference's too")
        references = len(rows) - int(chosen.sum())
        for k, option in enumerate(arms):
            if chosen[:, k].sum() == 0 or references == 0:
                raise ValueError(f"{option!r} and the reference must each be chosen at least once")
        for name in moderators:
            if rows[name].nunique() < 2:
                raise ValueError(
                    f"the moderator {name!r} does not vary: its effect has no estimate"
                )
        tilde = tuple(float(reference_probs.get(o, probs[:, k].mean())) for k, o in enumerate(arms))
        if min(tilde) <= 0 or sum(tilde) >= 1:
            raise ValueError(f"numerator probabilities {tilde} leave the reference none")
        reference = 1 - chosen.sum(axis=1)
        p_chosen = (chosen * probs).sum(axis=1) + reference * (1 - probs.sum(axis=1))
        t_chosen = chosen @ np.array(tilde) + reference * (1 - sum(tilde))
        controls = ["const", *control_vars, *(m for m in moderators if m not in control_vars)]
        effect = np.column_stack(
            [np.ones(len(rows)), *(rows[m].to_numpy(float) for m in moderators)]
        )
        return cls(
            y=y,
            groups=pd.factorize(rows[id])[0],
            controls=np.column_stack(
                [np.ones(len(rows)), *(rows[c].to_numpy(float) for c in controls[1:])]
            ),
            effect=effect,
            effect_names=(EFFECT, *moderators),
            chosen=chosen,
            centred=chosen - np.array(tilde),
            weight=t_chosen / p_chosen,
            tilde=tilde,
        )

    def columns(self, arm: np.ndarray) -> np.ndarray:
        """The controls, then each arm's value (indicator or centred) times the effect terms."""
        return np.column_stack(
            [self.controls, *(arm[:, [k]] * self.effect for k in range(arm.shape[1]))]
        )

    def cluster_factor(self, parameters: int) -> float:
        """statsmodels' small-sample factor of a clustered sandwich, G/(G−1)·(N−1)/(N−K)."""
        groups, n = int(self.groups.max()) + 1, len(self.y)
        return groups / (groups - 1) * (n - 1) / (n - parameters)


def _probability(rows: pd.DataFrame, given: str | float) -> np.ndarray:
    if isinstance(given, str):
        return rows[given].to_numpy(dtype=float)
    return np.full(len(rows), float(given))


def _wcls(design: _Design) -> tuple[np.ndarray, np.ndarray]:
    model = sm.WLS(design.y, design.columns(design.centred), weights=design.weight)
    fit = model.fit(cov_type="cluster", cov_kwds={"groups": design.groups})
    return np.asarray(fit.params), np.asarray(fit.cov_params())


def _emee(design: _Design) -> tuple[np.ndarray, np.ndarray]:
    exog = design.columns(design.chosen)
    q = design.controls.shape[1]
    params = np.zeros(exog.shape[1])
    for _ in range(_MAX_REFITS):
        weights = design.weight * np.exp(-(exog[:, q:] @ params[q:]))
        model = sm.GLM(design.y, exog, family=sm.families.Poisson(), var_weights=weights)
        fitted = np.asarray(
            model.fit(start_params=params, tol=1e-13, tol_criterion="params").params
        )
        moved = float(np.abs(fitted - params).max())
        params = fitted
        if moved < _TOLERANCE:
            break
    else:
        raise ValueError("EMEE did not converge (the effect may be too large to estimate)")
    scores = _emee_scores(design, params)
    jacobian = approx_fprime(params, lambda theta: _emee_scores(design, theta).sum(axis=0),
                             centered=True)  # fmt: skip
    bread = np.linalg.inv(jacobian)
    meat = S_crosssection(scores, design.groups)
    return params, bread @ meat @ bread.T * design.cluster_factor(len(params))


def _emee_scores(design: _Design, theta: np.ndarray) -> np.ndarray:
    """Each point's term of EMEE's estimating function, W·e^{−A·X'β}·r·(Z; (A − p̃)·X)."""
    q = design.controls.shape[1]
    treated = design.columns(design.chosen)[:, q:] @ theta[q:]
    residual = design.y - np.exp(design.controls @ theta[:q] + treated)
    factor = design.weight * np.exp(-treated) * residual
    return factor[:, None] * design.columns(design.centred)
