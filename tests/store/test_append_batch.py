"""`Transaction.append_batch`: many appends recorded as one append each would, in one INSERT."""

from __future__ import annotations

import pytest

from bot.store.event_store import DuplicateInBatch, EventStore
from bot.store.event_types import ParticipantUpdated
from bot.store.event_types.conversation import ProfileSaved
from bot.store.events import participant_stream
from tests.factories import enrolled, received
from tests.store.statements import statements


def _enrolled_stream(store: EventStore, phone: str) -> str:
    data = enrolled(phone=phone)
    stream = participant_stream(data.participant_id)
    store.append(stream, [data])
    return stream


def test_a_batch_records_each_append_as_its_own_append_would(store: EventStore) -> None:
    one, two = _enrolled_stream(store, "+14155550101"), _enrolled_stream(store, "+14155550102")
    with store.transaction() as tx:
        results = tx.append_batch(
            [
                (one, [received("SM1"), received("SM2")], "k:1"),
                (two, [received("SM3")], "k:3"),
                (one, [received("SM4")], None),
            ]
        )
    assert [[e.stream_version for e in r.events] for r in results] == [[2, 3], [2], [4]]
    assert not any(r.duplicate for r in results)
    loaded = store.load(one)
    assert [e.stream_version for e in loaded] == [1, 2, 3, 4]
    assert [e.idempotency_key for e in loaded] == [None, "k:1", None, None]
    assert [e.seq for e in loaded[1:]] == [
        e.seq for r in (results[0], results[2]) for e in r.events
    ]
    for stream, version in ((one, 4), (two, 2)):
        row = store.projection_row("participants", stream.split(":", 1)[1])
        assert row is not None and row["version"] == version


def test_a_batch_holding_a_recorded_key_raises_and_its_rollback_keeps_nothing(
    store: EventStore,
) -> None:
    stream = _enrolled_stream(store, "+14155550103")
    store.append(stream, [received("SM1")], idempotency_key="k:old")
    with pytest.raises(DuplicateInBatch) as caught, store.transaction() as tx:
        tx.append_batch(
            [(stream, [received("SM2")], "k:new"), (stream, [received("SM3")], "k:old")]
        )
    assert caught.value.key == "k:old"
    assert [e.stream_version for e in store.load(stream)] == [1, 2]


def test_a_key_twice_in_one_batch_raises(store: EventStore) -> None:
    stream = _enrolled_stream(store, "+14155550104")
    with pytest.raises(DuplicateInBatch), store.transaction() as tx:
        tx.append_batch([(stream, [received("SM1")], "k:1"), (stream, [received("SM2")], "k:1")])
    assert len(store.load(stream)) == 1


def test_a_batch_issues_the_same_statements_however_many_appends_it_holds(
    store: EventStore,
) -> None:
    def issued(count: int, first_phone: int) -> list[str]:
        streams = [_enrolled_stream(store, f"+1415556{first_phone + n:04d}") for n in range(count)]
        with store.transaction() as tx:
            for stream in streams:
                tx.lock(stream)  # a statement each, as the caller's (firing locks all in one)
            with statements(store.engine) as seen:
                tx.append_batch([(s, [received(f"SM{s}")], f"k:{s}") for s in streams])
        return [s.split(None, 1)[0] for s in seen]

    few = issued(2, 0)
    assert issued(30, 100) == few == ["INSERT", "UPDATE", "INSERT"]  # events, heads, work items


def test_a_batch_writes_each_kind_of_value_as_a_single_append_does(store: EventStore) -> None:
    streams = [_enrolled_stream(store, f"+141555502{n:02d}") for n in range(4)]
    made = [
        [
            ParticipantUpdated(changes={"name": "Ana", "debug": True}),
            ProfileSaved(changes={"likes": ["tea", "rain"], "n": 1.5}),
        ],
        [
            ParticipantUpdated(changes={"name": "Bo", "debug": True}),
            ProfileSaved(changes={"likes": [], "nested": {"a": [1, [2]]}}),
        ],
    ]
    with store.transaction() as tx, statements(store.engine) as seen:
        tx.append_batch([(s, events, None) for s, events in zip(streams[:2], made, strict=True)])
    writes = [s.split(None, 1)[0] for s in seen if not s.startswith("SELECT")]  # not the locks
    assert writes == ["INSERT", "UPDATE"]  # the events, then both participants' rows at once
    for stream, events in zip(streams[2:], made, strict=True):
        store.append(stream, events)

    def row(stream: str) -> dict:
        found = store.projection_row("participants", stream.split(":", 1)[1])
        assert found is not None
        return {k: found[k] for k in ("name", "debug", "profile", "version")}

    assert [row(s) for s in streams[:2]] == [row(s) for s in streams[2:]]
    assert row(streams[0])["profile"] == {"likes": ["tea", "rain"], "n": 1.5}
