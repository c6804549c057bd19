"""Instrument events round-trip through their stored form, seal the answers, and fold into
the participants row's `administering` and `instruments` state."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from bot.store.event_types.instruments import (
    InstrumentAbandoned,
    InstrumentAnswerRejected,
    InstrumentCompleted,
    InstrumentItemAnswered,
    InstrumentStarted,
)
from bot.store.event_types.occasions import OccasionSkipped
from bot.store.events import Event, EventData, decode, encode
from bot.store.personal import personal_fields
from bot.store.projections import participants

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
STARTED = InstrumentStarted(administration_id="a1", instrument="phq9", number=1, item="i1")
ANSWERED = InstrumentItemAnswered(
    administration_id="a1", instrument="phq9", item="i1", value=2, next_item="i2"
)
REJECTED = InstrumentAnswerRejected(
    administration_id="a1", instrument="phq9", item="i2", reason="not a number from 0 to 3"
)
COMPLETED = InstrumentCompleted(
    administration_id="a1",
    instrument="phq9",
    started_at=T0,
    result={"total": 2, "band": "minimal", "items": {"i1": 2}, "count": 1},
)
ABANDONED = InstrumentAbandoned(
    administration_id="a2", instrument="phq9", number=2, started_at=T0, reason="silence"
)
ALL: list[EventData] = [STARTED, ANSWERED, REJECTED, COMPLETED, ABANDONED]


def _event(data: EventData, version: int) -> Event:
    at = T0 + timedelta(minutes=version)
    return Event(version, f"e{version}", "participant:p1", version, data, {}, None, at, at)


def _fold(*decisions: EventData) -> dict:
    row: dict = {"participant_id": "p1", "version": 0, "step_counters": {}}
    for version, data in enumerate(decisions, 1):
        row = participants.apply(row, _event(data, version)) or row
    return row["step_counters"]


def test_every_instrument_event_round_trips_through_its_stored_form() -> None:
    for data in ALL:
        assert decode(data.event_type, 1, encode(data)) == data


def test_answers_and_results_are_sealed_and_the_ids_are_plain() -> None:
    assert personal_fields(InstrumentItemAnswered) == {"value"}
    assert personal_fields(InstrumentCompleted) == {"result"}
    assert personal_fields(InstrumentAbandoned) == {"answers"}
    assert "instrument" in InstrumentStarted.plain


def test_a_started_administration_awaits_its_first_item() -> None:
    counters = _fold(STARTED)
    assert counters["administering"]["item"] == "i1"
    assert counters["instruments"]["phq9"] == {"number": 1, "count": 0, "last": None}


def test_an_answer_moves_to_the_next_item_and_a_rejection_counts_the_reask() -> None:
    counters = _fold(STARTED, ANSWERED, REJECTED)
    asking = counters["administering"]
    assert (asking["item"], asking["answers"], asking["reasked"]) == ("i2", {"i1": 2}, 1)


def test_a_completion_ends_the_administration_and_becomes_the_last_result() -> None:
    counters = _fold(STARTED, ANSWERED, COMPLETED)
    assert counters["administering"] is None
    assert counters["instruments"]["phq9"]["last"]["total"] == 2
    assert counters["instruments"]["phq9"]["count"] == 1


def test_an_abandonment_of_another_administration_leaves_the_current_one() -> None:
    counters = _fold(STARTED, ABANDONED)
    assert counters["administering"]["administration_id"] == "a1"
    started_again = STARTED.model_copy(update={"administration_id": "a2", "number": 2})
    counters = _fold(STARTED, started_again, ABANDONED)
    assert counters["administering"] is None
    assert counters["instruments"]["phq9"]["number"] == 2


def test_a_skipped_occasion_round_trips_and_moves_only_the_rows_version() -> None:
    skipped = OccasionSkipped(
        series_id="s1",
        what="craving",
        index=4,
        local_date=date(2026, 5, 5),
        planned_at=T0,
        reason="quiet hours",
    )
    assert decode(skipped.event_type, 1, encode(skipped)) == skipped
    row = {"participant_id": "p1", "version": 0, "step_counters": {}}
    folded = participants.apply(row, _event(skipped, 1)) or row
    assert folded["version"] == 1 and folded["step_counters"] == {}
