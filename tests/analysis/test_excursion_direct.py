"""WCLS and EMEE against a direct computation of their definitions (MRTAnalysis's R/wcls.R and
R/emee.R), on data shaped like MRTAnalysis's `data_mimicHeartSteps` example."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from bot.analysis.excursion import EFFECT, emee, wcls

MODERATOR = "logstep_pre30min"


def heartsteps_like(seed: int, users: int = 37, points: int = 210) -> pd.DataFrame:
    """The shape of `data_mimicHeartSteps`: userid, decision_point, logstep_30min (and a 0/1
    `walked`), logstep_pre30min, intervention drawn with probability rand_prob, avail."""
    rng = np.random.default_rng(seed)
    n = users * points
    pre = rng.normal(2, 1, n)
    rand_prob = np.where(pre > 2, 0.7, 0.4)
    treated = (rng.random(n) < rand_prob).astype(int)
    avail = (rng.random(n) < 0.8).astype(int)
    steps = 1 + 0.4 * pre + treated * (0.3 - 0.1 * pre) + rng.normal(0, 1, n)
    walked = (rng.random(n) < 0.2 * np.exp(0.1 * pre + treated * (0.3 - 0.05 * pre))).astype(int)
    return pd.DataFrame(
        {
            "userid": np.repeat(np.arange(users), points),
            "decision_point": np.tile(np.arange(points), users),
            "logstep_30min": steps,
            "walked": walked,
            MODERATOR: pre,
            "intervention": treated,
            "rand_prob": rand_prob,
            "avail": avail,
        }
    )


class Direct:
    """The definitions computed by hand: Z = (1, moderator), X = (1, moderator)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        rows = frame[frame["avail"] == 1]
        self.a = rows["intervention"].to_numpy(float)
        p = rows["rand_prob"].to_numpy(float)
        self.tilde = float(p.mean())
        self.weight = np.where(self.a == 1, self.tilde / p, (1 - self.tilde) / (1 - p))
        self.x = np.column_stack([np.ones(len(rows)), rows[MODERATOR].to_numpy(float)])
        self.ids = rows["userid"].to_numpy()
        self.rows = rows

    def sandwich(self, bread: np.ndarray, scores: np.ndarray, parameters: int) -> np.ndarray:
        users = np.unique(self.ids)
        meat = sum(np.outer(s, s) for s in (scores[self.ids == u].sum(axis=0) for u in users))
        g, n = len(users), len(self.ids)
        factor = g / (g - 1) * (n - 1) / (n - parameters)
        inverse = np.linalg.inv(bread)
        return inverse @ meat @ inverse.T * factor

    def wcls(self, outcome: str) -> tuple[np.ndarray, np.ndarray]:
        y = self.rows[outcome].to_numpy(float)
        design = np.column_stack([self.x, (self.a - self.tilde)[:, None] * self.x])
        weighted = design * self.weight[:, None]
        beta = np.linalg.solve(design.T @ weighted, weighted.T @ y)
        scores = weighted * (y - design @ beta)[:, None]
        return beta, self.sandwich(design.T @ weighted, scores, 4)

    def emee(self, outcome: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The root of MRTAnalysis's `estimating_equation` and its M_n (analytic derivative)."""
        y, a, x, ca = self.rows[outcome].to_numpy(float), self.a, self.x, self.a - self.tilde

        def scores(theta: np.ndarray) -> np.ndarray:
            alpha, beta = theta[:2], theta[2:]
            residual = y - np.exp(x @ alpha + a * (x @ beta))
            factor = np.exp(-a * (x @ beta)) * residual * self.weight
            return factor[:, None] * np.column_stack([x, ca[:, None] * x])

        root = optimize.root(lambda t: scores(t).sum(axis=0), np.zeros(4), tol=1e-14)
        alpha, beta = root.x[:2], root.x[2:]
        pre = np.exp(-a * (x @ beta)) * self.weight
        residual = y - np.exp(x @ alpha + a * (x @ beta))
        d = pre[:, None] * np.column_stack([x, ca[:, None] * x])
        dr = -np.exp(x @ alpha + a * (x @ beta))[:, None] * np.column_stack([x, a[:, None] * x])
        dd = np.zeros((len(y), 4, 4))
        dd[:, :2, 2:] = -(pre * a)[:, None, None] * np.einsum("ni,nj->nij", x, x)
        dd[:, 2:, 2:] = -(pre * a * ca)[:, None, None] * np.einsum("ni,nj->nij", x, x)
        mn = (dd * residual[:, None, None]).sum(axis=0) + d.T @ dr
        return root.x, self.sandwich(mn, scores(root.x), 4), scores(root.x).sum(axis=0)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return heartsteps_like(seed=11)


def test_wcls_equals_weighted_least_squares_with_a_participant_sandwich(
    frame: pd.DataFrame,
) -> None:
    found = wcls(frame, "logstep_30min", "intervention", "rand_prob", "avail", "userid",
                 moderators=[MODERATOR])  # fmt: skip
    beta, cov = Direct(frame).wcls("logstep_30min")
    got = [(c.estimate, c.se) for c in found.coefficients]
    want = [(beta[2], np.sqrt(cov[2, 2])), (beta[3], np.sqrt(cov[3, 3]))]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9)


def test_emee_solves_mrtanalysis_estimating_equation_with_its_sandwich(frame: pd.DataFrame) -> None:
    found = emee(frame, "walked", "intervention", "rand_prob", "avail", "userid",
                 moderators=[MODERATOR])  # fmt: skip
    theta, cov, at_root = Direct(frame).emee("walked")
    assert np.abs(at_root).max() < 1e-8  # the direct solve did find the root
    got = [(c.estimate, c.se) for c in found.coefficients]
    want = [(theta[2], np.sqrt(cov[2, 2])), (theta[3], np.sqrt(cov[3, 3]))]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9)


def test_emee_reports_the_risk_ratio_as_the_exponent_of_the_log_ratio(frame: pd.DataFrame) -> None:
    found = emee(frame, "walked", "intervention", "rand_prob", "avail", "userid").term(EFFECT)
    assert found.ratio == pytest.approx(tuple(np.exp([found.estimate, found.low, found.high])))


def test_counts_say_participants_decision_points_and_available_points(frame: pd.DataFrame) -> None:
    found = wcls(frame, "logstep_30min", "intervention", "rand_prob", "avail", "userid")
    assert found.n_decisions == len(frame)
    assert found.n_available == int(frame["avail"].sum())
    assert found.n_participants == frame.loc[frame["avail"] == 1, "userid"].nunique()


def test_a_moderator_that_does_not_vary_is_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="does not vary"):
        wcls(frame.assign(same=1.0), "logstep_30min", "intervention", "rand_prob", "avail",
             "userid", moderators=["same"])  # fmt: skip


def test_an_option_never_chosen_is_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="chosen at least once"):
        emee(frame.assign(never=0), "walked", "never", "rand_prob", "avail", "userid")


def test_probabilities_outside_zero_and_one_are_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        wcls(frame, "logstep_30min", "intervention", 1.0, "avail", "userid")
