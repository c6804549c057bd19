"""Over 10,000 decision points of walk-mrt, decided as a decision timer decides them
(bot.interventions.interpreter.decide, at the times walk-mrt's schedule gives 1,000
participants over two days, with the deployment's seed): the options' frequencies pass a
chi-square test against the probabilities logged (and a draw skewed from them fails it),
every point is a row of decisions.csv from `tandem export` (the unavailable ones with their
reason), and every draw is reproduced: deciding the points again gives the same events,
`tandem decisions check` recomputes each one from the seed, and `tandem replay --check` finds
the rows as stored."""

from __future__ import annotations

import csv
import uuid
from collections import Counter
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from scipy import stats

from bot.cli.main import cli
from bot.core.localtime import QuietHours
from bot.interventions.interpreter.decide import Point, decide
from bot.interventions.interpreter.decision_draws import choose
from bot.interventions.interpreter.decision_schedule import occasion_after
from bot.interventions.interpreter.decision_timers import draw_seed
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import load_intervention
from bot.store.event_store import EventStore
from bot.store.event_types.decisions import DecisionMade
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import participant_stream
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
DECISION = "walk_prompt"
START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
PARTICIPANTS, POINTS = 1_000, 10  # two days of 5 points each
QUIET = QuietHours(time(10, 24), time(12, 48))  # walk-mrt's second window
SEED = draw_seed(TEST_MASTER_KEY)
OPTIONS = ("nothing", "suggest")
AS_CSV = {True: "true", False: "false"}


def pid(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"tandem-test:ten-thousand:{n}"))


def row(n: int) -> dict[str, Any]:
    """Participant n's row: one in ten has texted STOP, one in twenty-five is paused."""
    return {
        "participant_id": pid(n), "status": "paused" if n % 25 == 3 else "active",
        "opted_out": n % 10 == 7, "channel": "sms", "phone": f"+141555{n:05d}",
        "timezone": "UTC", "intervention": "walk-mrt", "current_step": "welcome",
        "enrolled_at": START, "profile": {},
    }  # fmt: skip


def points_of(walk: Intervention, n: int) -> list[DecisionMade]:
    """Participant n's first POINTS points as their decision timers decide them, each at the
    time the timer the point before set for it."""
    found = occasion_after(walk.decisions[DECISION], DECISION, row(n), START, None)
    assert found is not None
    point, made = Point(DECISION, found.index, found.due_utc, START), []
    for _ in range(POINTS):
        events = decide(walk, point, row(n), [], point.scheduled_for, SEED, QUIET)
        made.append(next(e for e in events if isinstance(e, DecisionMade)))
        (timer,) = [e for e in events if isinstance(e, TimerScheduled) and e.kind == "decision"]
        point = Point(DECISION, int(timer.payload["index"]), timer.due_at, START)
    return made


def chi_square(points: list[DecisionMade]) -> float:
    """The p-value of the options' counts against the sums of their logged probabilities."""
    available = [p for p in points if p.available]
    counts = Counter(p.option for p in available)
    expected = [sum(p.probabilities[o] for p in available) for o in OPTIONS]
    return float(stats.chisquare([counts[o] for o in OPTIONS], expected).pvalue)


@pytest.fixture(scope="module")
def walk() -> Intervention:
    return load_intervention(WALK)


@pytest.fixture(scope="module")
def decided(walk: Intervention) -> dict[int, list[DecisionMade]]:
    return {n: points_of(walk, n) for n in range(PARTICIPANTS)}


def test_the_options_pass_a_chi_square_test_against_the_logged_probabilities(
    decided: dict[int, list[DecisionMade]],
) -> None:
    points = [p for made in decided.values() for p in made]
    assert len(points) == 10_000
    assert sum(p.available for p in points) > 6_000
    assert chi_square(points) > 0.01


def test_a_draw_skewed_from_the_logged_probabilities_fails_it(
    decided: dict[int, list[DecisionMade]],
) -> None:
    """The same points, each option chosen by u^1.15 instead of u (40% -> 45% `nothing`)."""
    skewed = [
        p.model_copy(update={"option": choose(p.probabilities, p.u**1.15)}) if p.u else p
        for made in decided.values()
        for p in made
    ]
    assert chi_square(skewed) < 0.001


def test_deciding_the_points_again_reproduces_every_draw(
    walk: Intervention, decided: dict[int, list[DecisionMade]]
) -> None:
    for n in (0, 7, 28, 999):
        assert [p.model_dump() for p in points_of(walk, n)] == [p.model_dump() for p in decided[n]]


def tandem(*args: str, url: str) -> Result:
    env = {"DATABASE_URL": url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    return CliRunner().invoke(cli, list(args), env=env)


# 10,000 points once, on SQLite: export, check and replay are the same code on PostgreSQL,
# whose paths their own tests run.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_point_is_a_row_of_decisions_csv_and_every_draw_checks(
    store: EventStore,
    database_url: str,
    decided: dict[int, list[DecisionMade]],
    tmp_path: Path,
) -> None:
    for n, made in decided.items():
        person = enrolled(
            phone=f"+141555{n:05d}", participant_id=pid(n), timezone="UTC", intervention="walk-mrt"
        )
        store.append(participant_stream(pid(n)), [person, *made])
    written = tandem("export", "--out", str(tmp_path / "out"), "--no-progress", url=database_url)
    assert written.exit_code == 0, written.output
    with (tmp_path / "out" / "decisions.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 10_000
    logged = {(pid(n), p.index): p for n, made in decided.items() for p in made}
    assert {(r["participant_id"], int(r["index"])) for r in rows} == set(logged)
    reasons: Counter[str] = Counter()
    for r in rows:
        point = logged[(r["participant_id"], int(r["index"]))]
        assert r["available"] == AS_CSV[point.available]
        assert (r["option"] or None) == point.option
        assert (r["unavailable_reason"] or None) == point.unavailable_reason
        if point.available:
            assert float(r["p_suggest"]) == point.probabilities["suggest"]
            assert float(r["draw"]) == point.u
        reasons[r["unavailable_reason"] or "available"] += 1
    assert {"opted_out", "paused", "quiet_hours"} <= set(reasons)

    checked = tandem("decisions", "check", url=database_url)
    assert checked.exit_code == 0, checked.output
    assert "0 mismatch(es) in 10000 decision point(s)" in checked.output
    replayed = tandem("replay", "--check", url=database_url)
    assert replayed.exit_code == 0 and "0 differences" in replayed.output, replayed.output
