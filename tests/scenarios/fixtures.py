"""The harness fixtures, shared by the scenarios and the golden conversations: fake LLM and
Twilio servers, a Toronto FakeClock, and a harness per test on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.conversation import timer_turns
from bot.conversation.learned import LearnedLine
from bot.core.clock import FakeClock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.twilio_api import FakeTwilio
from tests.scenarios.harness import Harness, local


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def twilio() -> Iterator[FakeTwilio]:
    fake = FakeTwilio()
    yield fake
    fake.stop()


@pytest.fixture
def make_harness(
    database_url: str, llm: FakeOpenAI, twilio: FakeTwilio, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Harness]]:
    """Harnesses with settings by their environment names (and, with `interventions`, the
    interventions under that folder; with `learned`, that learned crisis line instead of the
    shipped model); the clock starts at 08:00 Toronto."""
    # build_handler registers the daily cycle's timer handler globally; undo it after the test.
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    clock = FakeClock(local("08:00"))
    built: list[Harness] = []

    def make(
        interventions: Path | None = None,
        learned: Callable[[], LearnedLine] | None = None,
        **env: str,
    ) -> Harness:
        harness = Harness(database_url, llm, twilio, clock, env, interventions, learned)
        built.append(harness)
        return harness

    yield make
    for harness in built:
        harness.close()


@pytest.fixture
def h(make_harness: Callable[..., Harness]) -> Harness:
    return make_harness()
