"""`answered.<question>`, `answered.<instrument>` and `answered.instrument` are true only in the
turn where the answer was recorded (after the last message received), never after."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.instruments.administration import attach
from bot.interventions.interpreter.context import answered
from bot.interventions.language.loader import load_intervention
from bot.store.event_types.instruments import InstrumentCompleted
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.messages import MessageReceived
from bot.store.events import Event, EventData

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
DEMO = Path(__file__).resolve().parents[2] / "interventions" / "demo"
PHQ9 = Path(__file__).resolve().parents[2] / "interventions" / "phq9-checkin"


def _history(*decisions: EventData) -> list[Event]:
    return [
        Event(n, f"e{n}", "participant:p", n, data, {}, None, NOW, NOW)
        for n, data in enumerate(decisions, 1)
    ]


def _received() -> MessageReceived:
    return MessageReceived(message_sid="SM1", from_address="+1", to_address="+2", channel="sms")


def test_a_question_is_answered_only_in_the_turn_that_recorded_it() -> None:
    demo = load_intervention(DEMO)
    recorded = MeasurementRecorded(measurement="topic", value="Sleep")
    assert answered(demo, _history(_received(), recorded))["topic"] is True
    assert answered(demo, _history(_received(), recorded, _received()))["topic"] is False
    assert answered(demo, _history(_received(), recorded))["checkin"] is False


def test_an_instrument_is_answered_only_in_the_turn_that_completed_it() -> None:
    phq9, _ = attach(load_intervention(PHQ9))
    done = InstrumentCompleted(administration_id="a", instrument="phq9", started_at=NOW)
    now = answered(phq9, _history(_received(), done))
    later = answered(phq9, _history(_received(), done, _received()))
    assert (now["phq9"], now["instrument"]) == (True, True)
    assert (later["phq9"], later["instrument"]) == (False, False)
