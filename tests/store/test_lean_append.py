"""The append's statements: one read of the stream's head, one INSERT per batch of events."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.factories import enrolled, received
from tests.store.statements import statements


def _enrolled(store: EventStore) -> str:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    return stream


def test_a_keyed_message_append_reads_the_head_once_and_writes_event_participant_and_work(
    store: EventStore,
) -> None:
    stream = _enrolled(store)
    with statements(store.engine) as seen:
        result = store.append(stream, [received("SM1")], idempotency_key="SM1")
    assert not result.duplicate
    verbs = [s.split()[0] + " " + s.split()[2 if s.startswith("INSERT") else 1] for s in seen]
    assert len(seen) == 4, seen
    assert seen[0].startswith("SELECT participants.") and "events" not in seen[0]
    assert verbs[1:] == ["INSERT events", "UPDATE participants", "INSERT work_items"]


def test_a_redelivered_key_writes_nothing_in_two_statements(store: EventStore) -> None:
    stream = _enrolled(store)
    store.append(stream, [received("SM1")], idempotency_key="SM1")
    with statements(store.engine) as seen:
        again = store.append(stream, [received("SM1", body="again")], idempotency_key="SM1")
    assert again.duplicate
    assert len(seen) == 2, seen
    assert [e.data.body for e in store.load(stream)[1:]] == ["hi"]


def test_a_redelivered_key_at_a_stale_version_is_a_duplicate_not_a_conflict(
    store: EventStore,
) -> None:
    stream = _enrolled(store)
    store.append(stream, [received("SM1")], idempotency_key="SM1", expected_version=1)
    again = store.append(stream, [received("SM1")], idempotency_key="SM1", expected_version=1)
    assert again.duplicate
    assert len(store.load(stream)) == 2


def test_several_events_are_inserted_in_one_statement_with_their_seqs_in_order(
    store: EventStore,
) -> None:
    stream = _enrolled(store)
    batch = [received(f"SM{n}", body=f"body {n}") for n in range(5)]
    with statements(store.engine) as seen:
        result = store.append(stream, batch)
    inserts = [s for s in seen if s.startswith("INSERT INTO events")]
    assert len(inserts) == 1, inserts
    loaded = store.load(stream)[1:]
    assert [e.seq for e in result.events] == [e.seq for e in loaded]
    assert [e.data.body for e in loaded] == [f"body {n}" for n in range(5)]
    assert [e.stream_version for e in loaded] == [2, 3, 4, 5, 6]


def test_a_keyed_batch_records_every_event_once_and_its_redelivery_none(
    store: EventStore,
) -> None:
    stream = _enrolled(store)
    batch = [received("SM1"), received("SM2"), received("SM3")]
    first = store.append(stream, batch, idempotency_key="K")
    again = store.append(stream, batch, idempotency_key="K")
    assert [e.stream_version for e in first.events] == [2, 3, 4]
    assert again.duplicate
    assert len(store.load(stream)) == 4
