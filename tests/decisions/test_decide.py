"""A decision point decided from the participant, their events, the time and the seed: the
engine's unavailability reasons, the author's condition, a reproducible draw, the action,
the outcome timers and the next point's timer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.interventions.interpreter.decide import Point, decide
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.interventions.interpreter.decision_schedule import occasion_after
from bot.interventions.interpreter.decision_timers import draw_seed, kept_after_withdrawal
from bot.interventions.language.decisions_format import Outcome
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import load_intervention
from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.takeover import TakeoverStarted
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event, EventData, participant_stream, stored_event

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
PID = "00000000-0000-4000-8000-00000000000a"
NOON = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
SEED = draw_seed(None)


@pytest.fixture(scope="module")
def walk() -> Intervention:
    return load_intervention(WALK)


def row(**changes: Any) -> dict[str, Any]:
    base = {
        "participant_id": PID,
        "status": "active",
        "opted_out": False,
        "channel": "sms",
        "phone": "+15005550006",
        "timezone": "UTC",
        "intervention": "walk-mrt",
        "current_step": "welcome",
        "enrolled_at": NOON - timedelta(days=1),
        "profile": {},
    }
    return {**base, **changes}


def stored(data: EventData, at: datetime, seq: int = 1) -> Event:
    return stored_event(seq, f"e{seq}", participant_stream(PID), seq, data, {}, None, at, at)


def point(index: int = 0, at: datetime = NOON) -> Point:
    return Point("walk_prompt", index, at, NOON - timedelta(days=1))


def made(events: list[EventData]) -> DecisionMade:
    return next(e for e in events if isinstance(e, DecisionMade))


def test_an_available_point_logs_the_draw_that_recomputes_to_its_option(
    walk: Intervention,
) -> None:
    for index in range(20):
        found = made(decide(walk, point(index), row(), [], NOON, SEED))
        u = uniform_draw(SEED.key, PID, "walk_prompt", index)
        assert found.available and found.u == u
        assert found.option == choose({"nothing": 0.4, "suggest": 0.6}, u)
        assert found.probabilities == {"nothing": 0.4, "suggest": 0.6}


def test_a_suggestion_queues_its_text_and_nothing_sends_nothing(walk: Intervention) -> None:
    outcomes = {}
    for index in range(20):
        events = decide(walk, point(index), row(), [], NOON, SEED)
        sent = [e for e in events if isinstance(e, MessageQueued)]
        outcomes[made(events).option] = sent
    assert [m.kind for m in outcomes["suggest"]] == ["prompt"]
    assert "short walk" in str(outcomes["suggest"][0].body)
    assert outcomes["nothing"] == []


def test_a_point_asks_the_outcome_question_an_hour_later_and_chains_the_next(
    walk: Intervention,
) -> None:
    events = decide(walk, point(3), row(), [], NOON, SEED)
    timers = {t.kind: t for t in events if isinstance(t, TimerScheduled)}
    assert timers["measurement"].due_at == NOON + timedelta(hours=1)
    assert timers["measurement"].payload["measurement"] == "walked"
    assert timers["decision_outcome"].due_at == NOON + timedelta(hours=3)
    anchor = point().anchor
    fifth = occasion_after(walk.decisions["walk_prompt"], "walk_prompt", row(), anchor, 3)
    assert fifth is not None and fifth.index == 4
    assert (timers["decision"].payload["index"], timers["decision"].due_at) == (4, fifth.due_utc)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"opted_out": True}, "opted_out"),
        ({"status": "paused"}, "paused"),
        ({"status": "withdrawn"}, "withdrawn"),
        ({"channel": "whatsapp", "last_inbound_at": NOON - timedelta(days=2)}, "window_closed"),
    ],
)
def test_the_engines_reasons_make_a_point_unavailable(
    walk: Intervention, changes: dict[str, Any], reason: str
) -> None:
    events = decide(walk, point(), row(**changes), [], NOON, SEED)
    found = made(events)
    assert (found.available, found.unavailable_reason, found.option) == (False, reason, None)
    assert not [e for e in events if isinstance(e, MessageQueued)]


def test_quiet_hours_at_the_point_make_it_unavailable(walk: Intervention) -> None:
    late = NOON.replace(hour=22)
    found = made(decide(walk, point(at=late), row(), [], late, SEED, walk.quiet_hours()))
    assert found.unavailable_reason == "quiet_hours"


def test_a_takeover_in_progress_makes_the_point_unavailable(walk: Intervention) -> None:
    history = [stored(TakeoverStarted(by="staff:a@example.org"), NOON - timedelta(minutes=5))]
    assert made(decide(walk, point(), row(), history, NOON, SEED)).unavailable_reason == "takeover"


def test_a_prompt_within_two_hours_fails_the_authors_condition(walk: Intervention) -> None:
    prompt = MessageQueued(outbox_id="o1", to_address="+15005550006", channel="sms",
                           body="walk?", kind="prompt")  # fmt: skip
    history = [stored(prompt, NOON - timedelta(minutes=90))]
    found = made(decide(walk, point(), row(), history, NOON, SEED))
    assert (found.available, found.unavailable_reason) == (False, "condition")
    later = made(decide(walk, point(), row(), history, NOON + timedelta(minutes=31), SEED))
    assert later.available


def test_the_stress_rating_is_recorded_as_the_moderator(walk: Intervention) -> None:
    rated = row(step_counters={"measurements": {"stress": 7}})
    assert made(decide(walk, point(), rated, [], NOON, SEED)).moderators == {"stress": 7}


def test_probabilities_that_do_not_sum_to_one_fail_the_point_never_renormalised(
    walk: Intervention,
) -> None:
    decision = walk.decisions["walk_prompt"]
    options = [decision.options[0], decision.options[1].model_copy(update={"probability": 0.7})]
    broken = decision.model_copy(update={"options": options})
    altered = Intervention(**{**walk.__dict__, "decisions": {"walk_prompt": broken}})
    events = decide(altered, point(), row(), [], NOON, SEED)
    failed = events[0]
    assert isinstance(failed, DecisionFailed) and "sum to 1.1" in failed.reason
    assert not any(isinstance(e, DecisionMade | MessageQueued) for e in events)


def test_the_master_key_changes_the_seed_and_its_fingerprint_is_recorded(
    walk: Intervention,
) -> None:
    keyed = draw_seed("k" * 32)
    assert keyed.key != SEED.key and keyed.fingerprint != SEED.fingerprint
    assert made(decide(walk, point(), row(), [], NOON, keyed)).seed == keyed.fingerprint


@pytest.mark.parametrize(
    ("spec", "value", "kept"),
    [
        ({"reply": "yes/no", "within": "1h"}, True, True),
        ({"reply": "yes/no", "within": "1h"}, False, False),
        ({"count": "received", "window": "1h"}, 2, False),
        ({"ask": "walked", "after": "0m", "window": "1h"}, 7, True),
        ({"reply": "latency", "within": "1h"}, 3.5, True),
    ],
)
def test_a_withdrawal_inside_the_window_leaves_only_what_was_seen_before_it(
    spec: dict[str, Any], value: Any, kept: bool
) -> None:
    outcome = Outcome.model_validate(spec)
    found = DecisionOutcome(decision="d", index=0, status="observed", value=value)
    assert kept_after_withdrawal(outcome, found) is kept
    missing = found.model_copy(update={"status": "missing"})
    assert kept_after_withdrawal(outcome, missing) is False
