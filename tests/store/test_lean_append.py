"""The append's statements: one read of the stream's head, one INSERT per batch of events."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from bot.store.event_store import ConstraintViolation, EventStore
from bot.store.events import NewEvent, participant_of, participant_stream
from bot.store.replay import compare, rebuild
from bot.store.schema import work_items
from bot.store.writes import INSERT_EVENTS_AT_MOST
from tests.factories import enrolled, received
from tests.store.statements import statements


def _enrolled(store: EventStore, phone: str = "+14155552671") -> str:
    first = enrolled(phone=phone)
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
    assert seen[0].startswith("SELECT participants.") and "events" not in seen[0]
    assert seen[1].startswith("INSERT INTO events ")
    writes = seen[2:]
    if store.engine.dialect.name == "postgresql":  # both writes in one statement
        assert len(writes) == 1 and writes[0].startswith("WITH "), seen
        assert "UPDATE participants SET" in writes[0] and "INSERT INTO work_items" in writes[0]
    else:
        verbs = [w.split()[0] + " " + w.split()[2 if w.startswith("INSERT") else 1] for w in writes]
        assert verbs == ["UPDATE participants", "INSERT work_items"], seen
    row = store.projection_row("participants", participant_of(stream))
    assert row is not None and row["version"] == 2 and row["last_inbound_at"] is not None
    assert result.events[0].event_id in [w["ref"] for w in _work(store)]


def test_events_that_move_one_row_write_it_once_and_as_a_rebuild_would(store: EventStore) -> None:
    stream = _enrolled(store)
    batch = [received(f"SM{n}", body=f"body {n}") for n in range(3)]
    with statements(store.engine) as seen:
        store.append(stream, batch)
    participant_writes = [s for s in seen if "UPDATE participants" in s]
    assert len(participant_writes) == 1, seen
    row = store.projection_row("participants", participant_of(stream))
    assert row is not None and row["version"] == 4
    report = rebuild(store)
    assert report.rebuilt["participants"][participant_of(stream)]["version"] == 4
    compare(store, report)
    assert report.differences == []
    refs = {w["ref"] for w in _work(store)}
    assert {e.event_id for e in store.load(stream)[1:]} <= refs


def test_a_refused_write_among_several_keeps_nothing_of_the_append(store: EventStore) -> None:
    first = enrolled(phone="+14155550100")
    store.append(participant_stream(first.participant_id), [first])
    clash = enrolled(phone="+14155550100")
    stream = participant_stream(clash.participant_id)
    with pytest.raises(ConstraintViolation, match="participants") as refused:
        store.append(stream, [clash, received("SM1")])
    assert "+14155550100" not in str(refused.value)  # the message is logged: no phone in it
    assert store.load(stream) == []
    assert store.projection_row("participants", clash.participant_id) is None
    assert [w for w in _work(store) if w["participant_id"] == clash.participant_id] == []


def _work(store: EventStore) -> list[dict]:
    with store.reading() as conn:
        return [dict(r._mapping) for r in conn.execute(select(work_items))]


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


@pytest.mark.parametrize("count", [2, INSERT_EVENTS_AT_MOST, INSERT_EVENTS_AT_MOST + 1, 40])
def test_every_row_of_a_many_event_insert_is_stored_as_a_single_event_s_would_be(
    store: EventStore, count: int
) -> None:
    # Up to INSERT_EVENTS_AT_MOST rows go in one statement on the driver's cursor, more through
    # SQLAlchemy; either way each row's values pass its column's bind processor (JSON, UTC).
    stream = _enrolled(store)
    toronto = timezone(timedelta(hours=-5))
    at = [datetime(2026, 3, 29, 1, 30, n % 60, 1000 * n, tzinfo=toronto) for n in range(count)]
    batch = [
        NewEvent(received(f"SM{n}", body=f"body {n}"), occurred_at=at[n], meta={"n": n})
        for n in range(count)
    ]
    with statements(store.engine) as seen:
        result = store.append(stream, batch)
    assert len([s for s in seen if s.startswith("INSERT INTO events")]) == 1, seen
    single = _enrolled(store, "+14155552672")
    for new in batch:
        store.append(single, [NewEvent(new.data, occurred_at=new.occurred_at, meta=new.meta)])
    loaded, one_by_one = store.load(stream)[1:], store.load(single)[1:]
    assert [e.seq for e in result.events] == [e.seq for e in loaded]
    assert [e.stream_version for e in loaded] == list(range(2, count + 2))
    assert [(e.data, e.meta, e.occurred_at) for e in loaded] == [
        (e.data, e.meta, e.occurred_at) for e in one_by_one
    ]
    assert [e.occurred_at for e in loaded] == at


def test_text_and_numbers_of_a_many_event_insert_are_stored_as_single_events_store_them(
    store: EventStore,
) -> None:
    # On PostgreSQL the rows go as one JSON document of records (writes.INSERT_EVENT_RECORDS),
    # the payloads embedded in it as the engine's JSON text: what is escaped, quoted or too
    # big for orjson must come back as a one-row INSERT stores it.
    stream, single = _enrolled(store), _enrolled(store, "+14155552672")
    bodies = ["NUL \x00 here", "lone \ud800 surrogate", 'quote " back \\ slash', "émoji 🙂 \n"]
    metas = [{"big": 2**70}, {1: "key that is not a string"}, {"nested": {"a": [1.5, None]}}, {}]
    batch = [
        NewEvent(received(f"SM{n}", body=body), meta=meta)
        for n, (body, meta) in enumerate(zip(bodies, metas, strict=True))
    ]
    store.append(stream, batch)
    for new in batch:
        store.append(single, [NewEvent(new.data, meta=new.meta)])
    loaded, one_by_one = store.load(stream)[1:], store.load(single)[1:]
    assert [e.data.body for e in loaded[2:]] == bodies[2:]  # NUL and the surrogate: escaped
    assert [(e.data, e.meta) for e in loaded] == [(e.data, e.meta) for e in one_by_one]
    assert loaded[0].meta["big"] == 2**70
    assert [e.seq for e in loaded] == sorted(e.seq for e in loaded)  # in the order of versions


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
