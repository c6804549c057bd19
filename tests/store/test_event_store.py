"""The event store: append, load, optimistic concurrency, idempotency, append-only tables."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from bot.store.event_store import ConcurrencyError, ConstraintViolation, EventStore
from bot.store.event_types import ParticipantStatusChanged, ParticipantUpdated
from bot.store.events import InvalidEventData, NewEvent, participant_stream
from tests.factories import enrolled, received


def test_appended_events_load_back_in_order_with_versions(store: EventStore) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first, received("SM1"), received("SM2", body="again")])
    loaded = store.load(stream)
    assert [e.stream_version for e in loaded] == [1, 2, 3]
    assert [e.event_type for e in loaded] == [
        "participant.enrolled",
        "message.received",
        "message.received",
    ]
    assert loaded[2].data.body == "again"
    assert loaded[0].data == first
    assert loaded[0].seq < loaded[1].seq < loaded[2].seq


def test_append_at_a_stale_expected_version_raises_concurrency_error(store: EventStore) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first], expected_version=0)
    with pytest.raises(ConcurrencyError) as caught:
        store.append(stream, [received()], expected_version=0)
    assert (caught.value.expected, caught.value.actual) == (0, 1)
    assert len(store.load(stream)) == 1


def test_repeated_idempotency_key_writes_nothing(store: EventStore) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    one = store.append(stream, [received("SMx")], idempotency_key="twilio:SMx")
    two = store.append(stream, [received("SMx")], idempotency_key="twilio:SMx")
    assert not one.duplicate and two.duplicate
    assert [e.event_type for e in store.load(stream)] == [
        "participant.enrolled",
        "message.received",
    ]


def test_projection_row_follows_the_events(store: EventStore) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    store.append(stream, [ParticipantUpdated(changes={"name": "Ana", "debug": True})])
    store.append(stream, [ParticipantStatusChanged(status="paused")])
    row = store.projection_row("participants", first.participant_id)
    assert row is not None
    assert (row["name"], row["debug"], row["status"], row["version"]) == ("Ana", True, "paused", 3)
    assert row["phone"] == "+14155552671"


def test_malformed_event_data_fails_before_anything_is_written(store: EventStore) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    with pytest.raises(ValueError):
        ParticipantUpdated(changes={"phone": "+1"})
    with pytest.raises(InvalidEventData):
        NewEvent(data={"not": "an event"})  # type: ignore[arg-type]
    assert len(store.load(stream)) == 1


def test_a_second_enrollment_of_the_same_phone_is_refused_and_rolled_back(
    store: EventStore,
) -> None:
    store.append(participant_stream("a"), [enrolled(participant_id="a")])
    with pytest.raises(ConstraintViolation):
        store.append(participant_stream("b"), [enrolled(participant_id="b")])
    assert store.load(participant_stream("b")) == []


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET event_type = 'tampered'",
        "DELETE FROM events",
    ],
)
def test_the_database_refuses_to_change_or_delete_events(store: EventStore, statement: str) -> None:
    first = enrolled()
    store.append(participant_stream(first.participant_id), [first])
    with pytest.raises(DBAPIError, match="append-only"):
        with store.engine.begin() as conn:
            conn.execute(text(statement))
    assert store.load(participant_stream(first.participant_id))[0].event_type == (
        "participant.enrolled"
    )


def test_two_concurrent_appends_at_one_version_let_exactly_one_through(
    store: EventStore,
) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def attempt(sid: str) -> None:
        barrier.wait()
        try:
            store.append(stream, [received(sid)], expected_version=1)
            outcomes.append("ok")
        except ConcurrencyError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=attempt, args=(sid,)) for sid in ("SMa", "SMb")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "ok"]
    assert [e.stream_version for e in store.load(stream)] == [1, 2]


def test_concurrent_redeliveries_with_one_idempotency_key_record_one_event(
    store: EventStore,
) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    barrier = threading.Barrier(5)
    results = []

    def deliver() -> None:
        barrier.wait()
        results.append(store.append(stream, [received("SMdup")], idempotency_key="SMdup"))

    threads = [threading.Thread(target=deliver) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(not r.duplicate for r in results) == 1
    assert len(store.load(stream)) == 2
