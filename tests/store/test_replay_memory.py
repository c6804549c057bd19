"""Replay covers the conversation memory (participants.memory, bot.conversation.memory): a whole
replay and a replay of one participant's stream both rebuild it, find a stored memory that
differs, and repair it."""

from __future__ import annotations

from sqlalchemy import select, update

from bot.conversation import memory
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.replay import compare, rebuild, repair
from bot.store.schema import participants
from tests.conversation.test_memory import Stream
from tests.factories import enrolled


def _participant(store: EventStore, seed: int, phone: str) -> str:
    person = enrolled(phone=phone)
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    random_stream = Stream(seed)
    for _ in range(200):
        random_stream.step()
    payloads = [e.data for e in random_stream.events]
    for start in range(0, len(payloads), 50):
        store.append(stream, payloads[start : start + 50])
    return person.participant_id


def _stored_memory(store: EventStore, pid: str) -> dict | None:
    with store.reading() as conn:
        query = select(participants.c.memory).where(participants.c.participant_id == pid)
        return conn.execute(query).scalar_one()


def test_replay_rebuilds_checks_and_repairs_the_memory_whole_and_per_participant(
    store: EventStore,
) -> None:
    first = _participant(store, 1, "+14165550001")
    second = _participant(store, 2, "+14165550002")
    kept = _stored_memory(store, first)
    assert kept is not None and kept["v"] == memory.VERSION
    assert kept == memory.fold(store.load(participant_stream(first)))

    whole = rebuild(store)
    compare(store, whole)
    assert whole.clean, [d.describe() for d in whole.differences]

    wrong = {**kept, "reply": 0, "visits": kept["visits"] + 5}
    with store.transaction() as tx:
        tx.conn.execute(
            update(participants).where(participants.c.participant_id == first).values(memory=wrong)
        )
    whole = rebuild(store)
    compare(store, whole)
    assert [(d.projection, d.key, list(d.columns)) for d in whole.differences] == [
        ("participants", first, ["memory"])
    ]

    other = rebuild(store, participant_id=second)
    compare(store, other)
    assert other.clean and other.events == len(store.load(participant_stream(second)))
    assert set(other.rebuilt["participants"]) == {second}

    own = rebuild(store, participant_id=first)
    compare(store, own)
    assert [(d.key, list(d.columns)) for d in own.differences] == [(first, ["memory"])]
    assert repair(store, own) == 1
    assert _stored_memory(store, first) == kept
    again = rebuild(store)
    compare(store, again)
    assert again.clean


def test_a_row_from_before_the_memory_is_reported_and_repaired(store: EventStore) -> None:
    pid = _participant(store, 3, "+14165550003")
    kept = _stored_memory(store, pid)
    with store.transaction() as tx:
        tx.conn.execute(
            update(participants).where(participants.c.participant_id == pid).values(memory=None)
        )
    report = rebuild(store, participant_id=pid)
    compare(store, report)
    assert [(d.key, list(d.columns)) for d in report.differences] == [(pid, ["memory"])]
    repair(store, report)
    assert _stored_memory(store, pid) == kept
