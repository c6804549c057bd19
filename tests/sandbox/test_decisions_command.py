"""`tandem chat` shows decision points as they happen, and `/decisions` lists them with their
outcomes; `/decisions day` runs the next 24 hours of them on the sandbox clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.conversation import timer_turns
from bot.core.config import load_settings
from bot.sandbox.session import Sandbox
from bot.store.event_types.decisions import DecisionMade

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    settings = load_settings({"SAFETY_CLASSIFIER": "off"}, env_file=None)
    box = Sandbox(settings, str(WALK), timezone="UTC", name="Ana", start=START)
    box.start()
    yield box
    box.close()


def test_a_day_of_decision_points_runs_and_each_is_shown_as_it_happens(sandbox: Sandbox) -> None:
    before = sandbox.command("/decisions")
    assert "(0 decision point(s), 0 available)" in before and "next: walk_prompt #0 at" in before

    day = sandbox.command("/decisions day")
    assert sandbox.clock.now() == START + timedelta(days=1)
    made = [e.data for e in sandbox.store.load(sandbox.stream) if isinstance(e.data, DecisionMade)]
    assert len(made) == 5  # walk-mrt's five windows
    for point in made:  # each remarked as it happened, then listed
        head = f"walk_prompt #{point.index} at {point.scheduled_for:%a %d %b %H:%M}"
        assert f"decision.made: {head}" in day
        assert day.count(head) == 2
    assert "(5 decision point(s)" in day and "next: walk_prompt #5 at" in day
    assert "outcome" in day


def test_decisions_takes_nothing_or_day(sandbox: Sandbox) -> None:
    assert sandbox.command("/decisions week").startswith("error: /decisions takes nothing or `day`")
