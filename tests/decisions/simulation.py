"""A simulated micro-randomised trial of walk-mrt on the real engine (bot.sandbox.cohort):
personas who rate their stress each morning and, asked an hour after a decision point whether
they walked (or for how many minutes), answer from known probabilities in which the point's
suggestion multiplies the chance of a walk (adds minutes) by an amount that depends on the
morning's stress, the moderator. The truths the analysis must find are computed here from the
same probabilities over the points the run made available.

The trial runs walk-mrt's decision with fixed times and a 90-minute outcome window (`variant`),
so that no point's window holds the next point's question and the design's truths need not
account for questions cut off by the next one; walk-mrt's own random times and 3-hour window,
where they are, are tested in test_simulation.py and test_outcome_questions.py.

`TANDEM_SIMULATION=full` runs the issue's 60 participants x 28 days; the default is 16 x 5.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
from click.testing import CliRunner

from bot.cli.main import cli
from bot.core.config import load_settings
from bot.reporting.decision_rows import decision_rows
from bot.sandbox.cohort import Cohort, Delivered
from bot.store.event_types.decisions import DecisionMade, DecisionOutcome

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)  # a Monday, 06:00 in the participants' UTC
DECISION = "walk_prompt"
SUGGESTION = "How about a short walk now?"
STRESS_QUESTION = "How stressed do you feel"
WALKED_QUESTION = "did you walk in the last 30 minutes"
MINUTES_QUESTION = "how many minutes did you walk"
ASKED_AFTER = timedelta(minutes=60)  # walk_prompt's `outcome: after:`
MINUTES = """---
title: Minutes walked
description: A number outcome of the walk decision (the simulation's variant).
text: "Quick question: how many minutes did you walk in the last hour? Reply with a number."
answer: scale
min: 0
max: 200
answer_window: 2h
llm: false
thanks: "Thanks, noted."
---
"""


@dataclass(frozen=True)
class Design:
    """How many participants over how many days."""

    participants: int
    days: int

    @classmethod
    def chosen(cls) -> Design:
        """The issue's 60 x 28 with TANDEM_SIMULATION=full, else a CI-sized 16 x 5."""
        return cls(60, 28) if os.environ.get("TANDEM_SIMULATION") == "full" else cls(16, 5)


@dataclass(frozen=True)
class Effect:
    """The truth built in. Yes/no: P(walk | not prompted) = base + 0.02 x stress, multiplied
    when prompted by exp(log_rr + log_rr_per_stress x stress). Minutes: Poisson(level +
    stress), plus Poisson(minutes + minutes_per_stress x stress) when prompted."""

    log_rr: float = 0.0
    log_rr_per_stress: float = 0.0
    minutes: float = 0.0
    minutes_per_stress: float = 0.0

    def risk_ratio(self, stress: float) -> float:
        return math.exp(self.log_rr + self.log_rr_per_stress * stress)

    def added_minutes(self, stress: float) -> float:
        return self.minutes + self.minutes_per_stress * stress


# A suggestion doubles the chance of a walk at stress 0, less as stress rises (about 1.4 over
# the trial's stress ratings), and adds 6 minutes at stress 0, half a minute less per point.
EFFECT = Effect(log_rr=math.log(2.0), log_rr_per_stress=-0.08, minutes=6.0, minutes_per_stress=-0.5)
NULL = Effect()


@dataclass
class Walker:
    """One simulated participant: their own level of stress, chance of a walk and minutes."""

    n: int
    seed: int
    effect: Effect
    rng: random.Random = field(init=False)
    stress_level: float = field(init=False)
    base: float = field(init=False)  # P(walk | not prompted) at stress 0
    level: float = field(init=False)  # mean minutes unprompted at stress 0
    stress: int | None = field(default=None, init=False)  # the morning's rating, as answered
    prompted_at: list[datetime] = field(default_factory=list, init=False)
    answers: dict[datetime, float] = field(default_factory=dict, init=False)  # by point
    ratings: dict[date, int] = field(default_factory=dict, init=False)  # stress, by day

    def __post_init__(self) -> None:
        self.rng = random.Random(f"walker:{self.seed}:{self.n}")
        self.stress_level = self.rng.uniform(2, 8)
        self.base = self.rng.uniform(0.30, 0.45)
        self.level = self.rng.uniform(5, 20)

    def p_walk(self, stress: float, prompted: bool) -> float:
        """The chance of answering yes: the design's truth."""
        p0 = self.base + 0.02 * stress
        return p0 * self.effect.risk_ratio(stress) if prompted else p0

    def mean_minutes(self, stress: float, prompted: bool) -> float:
        return self.level + stress + (self.effect.added_minutes(stress) if prompted else 0.0)

    def receive(self, message: Delivered) -> str | None:
        if SUGGESTION in message.text:
            self.prompted_at.append(message.at)
            return None
        if STRESS_QUESTION in message.text:
            noisy = self.stress_level + self.rng.gauss(0, 1.5)
            self.stress = min(10, max(0, round(noisy)))
            self.ratings[message.at.date()] = self.stress
            return str(self.stress)
        if WALKED_QUESTION in message.text or MINUTES_QUESTION in message.text:
            # The question comes an hour after its point: prompted if that point suggested.
            point = message.at - ASKED_AFTER
            prompted = any(abs(at - point) < timedelta(seconds=1) for at in self.prompted_at)
            stress = float(self.stress if self.stress is not None else 0)
            if WALKED_QUESTION in message.text:
                walked = self.rng.random() < self.p_walk(stress, prompted)
                self.answers[point] = float(walked)
                return "1" if walked else "2"
            added = self.effect.added_minutes(stress) if prompted else 0.0
            minutes = _poisson(self.rng, self.level + stress)
            minutes += _poisson(self.rng, added) if prompted else 0
            self.answers[point] = float(minutes)
            return str(minutes)
        return None


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's; the means here are below 40)."""
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


# walk-mrt's decision as the trial runs it: five fixed times, two of them 105 minutes after
# the one before (unavailable after a suggestion: the 2-hour rule), and an outcome window
# that closes before the next point's question.
TIMES = '  times: ["08:00", "09:45", "12:00", "14:30", "16:15"]'
CHANGES = {
    '  windows: ["08:00-10:24", "10:24-12:48", "12:48-15:12", "15:12-17:36", "17:36-20:00"]\n'
    "  per_day: 1": TIMES,
    "  window: 3h": "  window: 90m",
}


def variant(folder: Path, outcome: str) -> Path:
    """walk-mrt copied under `folder` with the trial's times and window, asking `walked`
    (yes/no) or `minutes` (a number)."""
    target = folder / ("walk-yes-no" if outcome == "yes/no" else "walk-minutes")
    shutil.copytree(WALK, target)
    (target / "questions" / "minutes.md").write_text(MINUTES)
    decision = target / "decisions" / f"{DECISION}.md"
    text = decision.read_text()
    changes = dict(CHANGES)
    if outcome == "number":
        changes["ask: walked"] = "ask: minutes"
    for old, new in changes.items():
        if old not in text:
            raise AssertionError(f"walk_prompt.md no longer has {old!r}: update the variant")
        text = text.replace(old, new)
    decision.write_text(text)
    return target


@dataclass
class Run:
    """A finished simulation: its rows, its personas and the analysis's JSON answers."""

    outcome: str  # "yes/no" or "number"
    design: Design
    effect: Effect
    seed: int
    rows: pd.DataFrame
    walkers: list[Walker]
    participant_ids: list[str]
    intervention: Path
    made: list[tuple[str, DecisionMade]]  # every decision.made, with its participant
    marginal: dict[str, Any]
    moderated: dict[str, Any]
    seconds: float

    def truth(self) -> float:
        """The marginal effect the design gives over the points the run made available:
        log(sum of P(yes | prompted) / sum of P(yes | not)) for yes/no (EMEE's estimand),
        the mean of the added minutes for a number (WCLS's)."""
        by_id = dict(zip(self.participant_ids, self.walkers, strict=True))
        points = self.rows.loc[self.rows["available"].astype(bool)]
        stress = points["mod_stress"].astype(float)
        walkers = [by_id[pid] for pid in points["participant"]]
        if self.outcome == "yes/no":
            p1 = sum(w.p_walk(s, True) for w, s in zip(walkers, stress, strict=True))
            p0 = sum(w.p_walk(s, False) for w, s in zip(walkers, stress, strict=True))
            return math.log(p1 / p0)
        return float(stress.map(self.effect.added_minutes).mean())

    def conditional(self) -> dict[str, float]:
        """The moderated model's true terms: the effect at stress 0 and its change per point."""
        if self.outcome == "yes/no":
            return {"(effect)": self.effect.log_rr, "stress": self.effect.log_rr_per_stress}
        return {"(effect)": self.effect.minutes, "stress": self.effect.minutes_per_stress}


def simulate(outcome: str, effect: Effect, design: Design, seed: int, folder: Path) -> Run:
    """Run the design on the engine and analyse it with `tandem analyze decisions`."""
    started = time.perf_counter()
    walkers = [Walker(n, seed, effect) for n in range(design.participants)]
    intervention = variant(folder, outcome)
    with cohort_of(intervention, walkers, seed) as cohort:
        cohort.run_until(START + timedelta(days=design.days))
        rows, made = rows_of(cohort), made_of(cohort)
        marginal = analyze(cohort.database_url)
        moderated = analyze(cohort.database_url, "stress")
        ids = list(cohort.participant_ids)
    seconds = time.perf_counter() - started
    return Run(
        outcome, design, effect, seed, rows, walkers, ids, intervention, made, marginal,
        moderated, seconds,
    )  # fmt: skip


def cohort_of(intervention: Path, walkers: Sequence[Walker], seed: int) -> Cohort:
    """The walkers enrolled in `intervention` at START (no LLM, no safety classifier)."""
    settings = load_settings({"SAFETY_CLASSIFIER": "off"}, env_file=None)
    cohort = Cohort(settings, str(intervention), walkers, START, seed=seed)
    cohort.enroll()
    return cohort


def rows_of(cohort: Cohort) -> pd.DataFrame:
    """decisions.csv's rows of the cohort, as `tandem analyze decisions` builds them."""
    types = (DecisionMade.event_type, DecisionOutcome.event_type)
    return pd.DataFrame(decision_rows(cohort.store.read_all(event_types=types)))


def made_of(cohort: Cohort) -> list[tuple[str, DecisionMade]]:
    """Every `decision.made` of the cohort with its participant's id, in order."""
    events = cohort.store.read_all(event_types=(DecisionMade.event_type,))
    return [(str(e.participant_id), e.data) for e in events if isinstance(e.data, DecisionMade)]


def analyze(database_url: str, *moderators: str) -> dict[str, Any]:
    """`tandem analyze decisions walk_prompt --json [--moderator ...]` on the run's database."""
    flags = [arg for name in moderators for arg in ("--moderator", name)]
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": None}
    result = CliRunner().invoke(cli, ["analyze", "decisions", DECISION, "--json", *flags], env=env)
    if result.exit_code != 0:
        raise AssertionError(f"tandem analyze decisions failed: {result.output}")
    found: dict[str, Any] = json.loads(result.output)
    return found


def terms(analysis: dict[str, Any], option: str = "suggest") -> dict[str, dict[str, float]]:
    """The option's coefficients by term."""
    return {c["term"]: c for c in analysis["options"][option]["coefficients"]}


def covers(term: dict[str, float], value: float) -> bool:
    return term["ci_low"] <= value <= term["ci_high"]


def chi_square(rows: pd.DataFrame, options: Sequence[str]) -> tuple[float, float]:
    """(statistic, p-value) of the options' counts over the available points against the sums
    of their logged probabilities (k - 1 degrees of freedom)."""
    from scipy import stats

    points = rows.loc[rows["available"].astype(bool)]
    observed = [float((points["option"] == o).sum()) for o in options]
    expected = [float(points[f"p_{o}"].astype(float).sum()) for o in options]
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))
    return statistic, float(stats.chi2.sf(statistic, len(options) - 1))


def summary(runs: Sequence[Run]) -> str:
    """Each run's truth and estimates (95% CI), for docs/decisions.md and docs/performance.md."""
    lines = []
    for run in runs:
        kind = "effect" if run.effect != NULL else "no effect"
        lines.append(
            f"{run.outcome} outcome, {kind}: {run.design.participants} participants x "
            f"{run.design.days} days, {len(run.rows)} points, "
            f"{int(run.rows['available'].astype(bool).sum())} available, {run.seconds:.0f} s"
        )
        truths = [("marginal", run.marginal, {"(effect)": run.truth()}),
                  ("moderated", run.moderated, run.conditional())]  # fmt: skip
        for model, analysis, truth in truths:
            for term, found in terms(analysis).items():
                lines.append(
                    f"  {model:<9} {term:<9} truth {truth[term]:7.3f}  estimate "
                    f"{found['estimate']:7.3f}  95% CI {found['ci_low']:7.3f} to "
                    f"{found['ci_high']:7.3f}"
                    + (
                        f"  (RR {found['risk_ratio']:.2f}, {found['rr_ci_low']:.2f} to "
                        f"{found['rr_ci_high']:.2f}; truth {math.exp(truth[term]):.2f})"
                        if "risk_ratio" in found
                        else ""
                    )  # fmt: skip
                )
    return "\n".join(lines)
