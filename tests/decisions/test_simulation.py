"""A simulated micro-randomised trial on the real engine (tests/decisions/simulation.py):
`tandem analyze decisions` recovers the known effects and their moderation, finds none where
there is none, the draws follow the logged probabilities (and a skewed draw is caught), every
decision point is in the rows, and a second run reproduces every draw. Seeded; the default is
a CI-sized design, `TANDEM_SIMULATION=full` the issue's 60 participants x 28 days."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from bot.interventions.interpreter import decide
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.interventions.interpreter.decision_schedule import occasion_after
from bot.interventions.interpreter.decision_timers import draw_seed
from bot.interventions.language.loader import load_intervention
from tests.decisions.simulation import (
    DECISION,
    EFFECT,
    NULL,
    START,
    WALK,
    Design,
    Run,
    Walker,
    chi_square,
    cohort_of,
    covers,
    made_of,
    rows_of,
    simulate,
    summary,
    terms,
    variant,
)

SEED = 20261207
DESIGN = Design.chosen()
FULL = os.environ.get("TANDEM_SIMULATION") == "full"
OPTIONS = ("nothing", "suggest")
EFFECT_TERM = "(effect)"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """The four trials: each outcome with the effect and without; the full design's
    estimates are written out (`pytest -s`) for docs/decisions.md."""
    folder = tmp_path_factory.mktemp("trial")
    found = {
        f"{outcome} {kind}": simulate(outcome, effect, DESIGN, SEED, folder / kind / outcome[:3])
        for outcome in ("yes/no", "number")
        for kind, effect in (("effect", EFFECT), ("null", NULL))
    }
    yield found
    if FULL:
        sys.stdout.write("\n" + summary(list(found.values())) + "\n")


def test_emee_recovers_the_marginal_risk_ratio_of_the_design(runs: dict[str, Run]) -> None:
    """The marginal truth is log(sum P(yes | prompted) / sum P(yes | not)) over the available
    points, not the risk ratio at any one stress rating."""
    run = runs["yes/no effect"]
    found, truth = terms(run.marginal)[EFFECT_TERM], run.truth()
    assert covers(found, truth)
    assert abs(truth - EFFECT.log_rr) > 0.2  # the conditional ratio at stress 0 is another
    if FULL:
        assert found["ci_low"] > 0  # the effect is detected


def test_emee_with_the_moderator_recovers_the_conditional_ratio(runs: dict[str, Run]) -> None:
    run = runs["yes/no effect"]
    found = terms(run.moderated)
    for term, truth in run.conditional().items():
        assert covers(found[term], truth), term
    if FULL:
        assert found["stress"]["ci_high"] < 0  # the moderation is detected


def test_wcls_recovers_the_mean_added_minutes(runs: dict[str, Run]) -> None:
    run = runs["number effect"]
    found = terms(run.marginal)[EFFECT_TERM]
    assert covers(found, run.truth())
    assert found["ci_low"] > 0


def test_wcls_with_the_moderator_recovers_the_conditional_effect(runs: dict[str, Run]) -> None:
    run = runs["number effect"]
    found = terms(run.moderated)
    for term, truth in run.conditional().items():
        assert covers(found[term], truth), term
    if FULL:
        assert found["stress"]["ci_high"] < 0


@pytest.mark.parametrize("outcome", ["yes/no", "number"])
def test_without_an_effect_every_interval_covers_the_null(
    runs: dict[str, Run], outcome: str
) -> None:
    run = runs[f"{outcome} null"]
    assert run.truth() == 0
    for analysis in (run.marginal, run.moderated):
        for term, found in terms(analysis).items():
            assert covers(found, 0.0), (analysis["moderators"], term)


def test_the_moderator_is_the_stress_rating_the_persona_gave_that_morning(
    runs: dict[str, Run],
) -> None:
    for run in runs.values():
        by_id = dict(zip(run.participant_ids, run.walkers, strict=True))
        for pid, point in run.made:
            rated = by_id[pid].ratings[point.scheduled_for.date()]
            assert point.moderators == {"stress": rated}


def test_each_observed_outcome_is_the_answer_to_its_own_points_question(
    runs: dict[str, Run],
) -> None:
    """And a participant got the suggestion exactly where the row says it was chosen."""
    for run in runs.values():
        by_id = dict(zip(run.participant_ids, run.walkers, strict=True))
        available = run.rows.loc[run.rows["available"].astype(bool)]
        assert set(available["outcome_status"]) == {"observed"}
        for pid, utc, option, value in zip(
            available["participant"], available["utc"], available["option"],
            available["outcome_value"], strict=True,
        ):  # fmt: skip
            at = pd.Timestamp(utc).to_pydatetime()
            assert by_id[pid].answers[at] == value
            assert (at in by_id[pid].prompted_at) == (option == "suggest")


def test_the_options_are_drawn_with_their_logged_probabilities(runs: dict[str, Run]) -> None:
    """A chi-square test of each option's count against the sum of its logged probabilities,
    over every available point of the four trials (over 10,000 in the full design)."""
    rows = pd.concat([run.rows for run in runs.values()], ignore_index=True)
    _, p_value = chi_square(rows, OPTIONS)
    assert p_value > 0.01
    if FULL:
        assert rows["available"].astype(bool).sum() > 10_000


def test_no_decision_point_is_missing_from_the_rows(runs: dict[str, Run]) -> None:
    """Per participant, the points are numbered 0, 1, ... without a gap, and there are as
    many as the schedule gives until the end, unavailable ones included with their reason."""
    end = START + timedelta(days=DESIGN.days)
    for run in runs.values():
        for pid in run.participant_ids:
            mine = run.rows.loc[run.rows["participant"] == pid]
            assert list(mine["index"]) == list(range(len(mine)))
            assert len(mine) == scheduled_points(run, pid, end) == 5 * DESIGN.days
        unavailable = run.rows.loc[~run.rows["available"].astype(bool)]
        assert len(unavailable) > 0 and set(unavailable["unavailable_reason"]) == {"condition"}


def test_every_logged_draw_recomputes_from_the_seed(runs: dict[str, Run]) -> None:
    seed = draw_seed(None)
    for run in runs.values():
        for pid, point in run.made:
            if not point.available:
                assert point.option is None and point.u is None
                continue
            assert point.u == uniform_draw(seed.key, pid, point.decision, point.index)
            assert point.option == choose(point.probabilities, point.u)


def test_a_second_run_with_the_same_seed_reproduces_every_draw(tmp_path: Path) -> None:
    def run() -> list[tuple[str, dict[str, object]]]:
        with cohort_of(WALK, [Walker(n, SEED, EFFECT) for n in range(4)], SEED) as cohort:
            cohort.run_until(START + timedelta(days=2))
            return [(pid, point.model_dump()) for pid, point in made_of(cohort)]

    first, second = run(), run()
    assert len(first) == 4 * 2 * 5
    assert first == second


def test_a_draw_skewed_from_the_logged_probabilities_fails_the_chi_square(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same engine whose draw is squared (u² < 0.4 for 63% of points, not 40%)."""
    original = decide.uniform_draw
    monkeypatch.setattr(decide, "uniform_draw", lambda *args: original(*args) ** 2)
    walkers = [Walker(n, SEED, NULL) for n in range(5)]
    with cohort_of(variant(tmp_path, "yes/no"), walkers, SEED) as cohort:
        cohort.run_until(START + timedelta(days=2))
        rows = rows_of(cohort)
    assert rows["available"].astype(bool).sum() > 30
    assert chi_square(rows, OPTIONS)[1] < 0.01


def test_walk_mrt_as_shipped_records_each_points_own_answer(tmp_path: Path) -> None:
    """walk-mrt's 3 h outcome window often holds the next point's question and its answer:
    each point's outcome is still the answer to its own question
    (tests/decisions/test_outcome_questions.py has the unanswered ones)."""
    walkers = [Walker(n, SEED, EFFECT) for n in range(4)]
    with cohort_of(WALK, walkers, SEED) as cohort:
        cohort.run_until(START + timedelta(days=2))
        rows = rows_of(cohort)
        ids = list(cohort.participant_ids)
    by_id = dict(zip(ids, walkers, strict=True))
    available = rows.loc[rows["available"].astype(bool)]
    for pid, utc, value in zip(
        available["participant"], available["utc"], available["outcome_value"], strict=True
    ):
        assert by_id[pid].answers.get(pd.Timestamp(utc).to_pydatetime()) == value
    held = [
        (at, later)
        for walker in walkers
        for at in walker.answers
        for later in walker.answers
        if at < later and later + timedelta(minutes=60) < at + timedelta(hours=3)
    ]
    assert len(held) >= 3  # windows that held a later point's answer: the case in question


def scheduled_points(run: Run, participant_id: str, end: datetime) -> int:
    """How many points the run's schedule gives the participant from START until `end`."""
    decision = load_intervention(run.intervention).decisions[DECISION]
    participant = {"participant_id": participant_id, "timezone": "UTC"}
    count, last = 0, None
    while (found := occasion_after(decision, DECISION, participant, START, last)) is not None:
        if found.due_utc > end:
            break
        count, last = count + 1, found.index
    return count
