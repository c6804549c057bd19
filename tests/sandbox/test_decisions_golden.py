"""A golden run of walk-mrt's decision points in the sandbox over two simulated days: points
logged at their scheduled times, unavailable ones with their reasons (quiet hours, a staff
takeover, a withdrawal), every draw recomputed from the seed, outcomes recorded or missing."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.conversation import timer_turns
from bot.core.config import load_settings
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.interventions.interpreter.decision_schedule import occasion_after
from bot.interventions.interpreter.decision_timers import draw_seed
from bot.interventions.language.loader import load_intervention
from bot.sandbox.session import Sandbox
from bot.store.event_types.decisions import DecisionMade, DecisionOutcome
from bot.store.event_types.participants import ParticipantWithdrawn
from bot.store.event_types.takeover import TakeoverEnded, TakeoverStarted
from bot.store.events import Event

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)  # Monday 06:00, the participant in UTC
QUESTION = "did you walk in the last 30 minutes"


def seconds(span: timedelta) -> int:
    """A /wait that reaches the end of `span` (due times have microseconds), at least 1s."""
    return max(1, math.ceil(span.total_seconds()))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, list[Event]]]:
    """Two days: quiet hours are the second window; the participant answers the outcome
    question on day 1 only; on day 2 a takeover holds the first window, and the participant
    withdraws at 15:15, after the third window (12:48-15:12), so that day 2 always has an
    available point left unanswered (each point's time is drawn in its window: a withdrawal
    inside the third window left none in about 1 run in 12)."""
    folder = tmp_path_factory.mktemp("mrt") / "walk-mrt"
    shutil.copytree(WALK, folder)
    config = folder / "intervention.yaml"
    config.write_text(config.read_text().replace('"21:00-07:00"', '"10:24-12:48"'))
    handlers = dict(timer_turns.HANDLERS)
    settings = load_settings({"SAFETY_CLASSIFIER": "off"}, env_file=None)
    sandbox = Sandbox(settings, str(folder), timezone="UTC", name="Ana", start=START)
    sandbox.start()
    day2 = START + timedelta(days=1)
    staff, by = "staff:r@example.org", "participant"
    plan = [
        (day2 + timedelta(hours=1, minutes=45), TakeoverStarted(by=staff)),
        (day2 + timedelta(hours=4, minutes=24), TakeoverEnded(by=staff)),
        (day2 + timedelta(hours=9, minutes=15), ParticipantWithdrawn(reason="no", requested_by=by)),
        (day2 + timedelta(days=1), None),
    ]  # fmt: skip
    for until, act in plan:
        while (due := sandbox.next_due()) is not None and due <= until:
            said = sandbox.command(f"/wait {seconds(due - sandbox.clock.now())}s")
            if QUESTION in said and sandbox.clock.now() < day2:
                sandbox.say("1")
        sandbox.command(
            f"/wait {int(max(until - sandbox.clock.now(), timedelta()).total_seconds())}s"
        )
        if act is not None:
            sandbox.store.append(sandbox.stream, [act])
    yield sandbox, sandbox.store.load(sandbox.stream)
    sandbox.close()
    timer_turns.HANDLERS.clear()
    timer_turns.HANDLERS.update(handlers)


def in_quiet(at: datetime) -> bool:
    """Inside the run's quiet hours, 10:24-12:48 UTC (the second window)."""
    return (10, 24) <= (at.hour, at.minute) < (12, 48)


def made(events: list[Event]) -> list[tuple[Event, DecisionMade]]:
    return [(e, e.data) for e in events if isinstance(e.data, DecisionMade)]


def test_each_point_is_logged_at_the_time_its_schedule_gives(
    run: tuple[Sandbox, list[Event]],
) -> None:
    sandbox, events = run
    walk = load_intervention(WALK).decisions["walk_prompt"]
    points = made(events)
    assert len(points) >= 8
    for _, point in points:
        expected = occasion_after(
            walk, "walk_prompt", sandbox.row(), START, point.index - 1 if point.index else None
        )
        assert expected is not None and point.scheduled_for == expected.due_utc
    assert [p.index for _, p in points] == list(range(len(points)))


def test_unavailable_points_say_why(run: tuple[Sandbox, list[Event]]) -> None:
    _, events = run
    reasons = {p.unavailable_reason for _, p in made(events) if not p.available}
    # The takeover's point is decided at the hand-back (its item waited), from the
    # participant's takeovers row, which says a person held the conversation then.
    assert {"quiet_hours", "withdrawn", "takeover"} <= reasons
    for _, point in made(events):
        assert (point.unavailable_reason == "quiet_hours") == in_quiet(point.scheduled_for)


def test_a_withdrawal_ends_the_series(run: tuple[Sandbox, list[Event]]) -> None:
    _, events = run
    points = [p for _, p in made(events)]
    assert points[-1].unavailable_reason == "withdrawn"
    assert [p.unavailable_reason for p in points].count("withdrawn") == 1


def test_every_draw_recomputes_from_the_seed_to_the_option_logged(
    run: tuple[Sandbox, list[Event]],
) -> None:
    sandbox, events = run
    seed = draw_seed(None)
    available = [p for _, p in made(events) if p.available]
    assert available
    for point in available:
        u = uniform_draw(seed.key, sandbox.participant_id, point.decision, point.index)
        assert point.u == u and point.option == choose(point.probabilities, u)
        assert point.seed == seed.fingerprint


def test_outcomes_are_observed_when_answered_and_missing_when_not(
    run: tuple[Sandbox, list[Event]],
) -> None:
    _, events = run
    outcomes = {e.data.index: e.data for e in events if isinstance(e.data, DecisionOutcome)}
    available = {p.index: p for _, p in made(events) if p.available}
    assert set(outcomes) == set(available)
    day1 = {i for i, p in available.items() if p.scheduled_for.date() == START.date()}
    asked = {i for i in day1 if not in_quiet(available[i].scheduled_for + timedelta(hours=1))}
    assert asked and {outcomes[i].status for i in asked} == {"observed"}
    assert {outcomes[i].value for i in asked} == {"Yes"}
    # A question due in quiet hours goes out when they end: answered (day 1) if that is still
    # inside the point's 3 h window, missing otherwise.
    sent = {e.data.outbox_id: e.occurred_at for e in events if e.event_type == "message.sent"}
    for i in day1 - asked:
        went = sent.get(outcomes[i].question or "")
        window_open = went is not None and went < available[i].scheduled_for + timedelta(hours=3)
        assert outcomes[i].status == ("observed" if window_open else "missing"), (i, went)
    assert set(available) - day1  # day 2's third window at least
    assert {outcomes[i].status for i in set(available) - day1} == {"missing"}
