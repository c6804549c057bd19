"""The daily cycle's events round-trip through the store."""

from __future__ import annotations

from datetime import date

from bot.store.event_store import EventStore
from bot.store.event_types.habits import HabitReported, IntensityAnswered, QuestionAsked
from bot.store.events import participant_stream


def test_question_and_answer_events_round_trip(store: EventStore) -> None:
    stream = participant_stream("p1")
    written = [
        QuestionAsked(
            question_id="q1",
            kind="intensity",
            options=["Decrease", "Keep current", "Increase"],
            outbox_id="o2",
            prompt_outbox_id="o1",
            local_date=date(2026, 5, 4),
        ),
        HabitReported(question_id="q0", done=True, answer="Done"),
        IntensityAnswered(question_id="q1", answer="Increase", previous="normal", level="high"),
    ]
    store.append(stream, written)
    assert [e.data for e in store.load(stream)] == written
