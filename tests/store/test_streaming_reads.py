"""Reading every event (replay, `tandem events`, export) streams one query, not a query a page."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.replay import compare, rebuild
from tests.factories import enrolled, received
from tests.store.statements import statements


def _seed(store: EventStore, people: int, messages: int) -> int:
    for n in range(people):
        first = enrolled(phone=f"+1415555{n:04d}")
        batch = [first, *[received(f"SM{n}x{k}") for k in range(messages)]]
        store.append(participant_stream(first.participant_id), batch)
    return people * (messages + 1)


def test_all_events_stream_in_order_from_a_single_query_whatever_the_batch(
    store: EventStore,
) -> None:
    total = _seed(store, 3, 4)
    with statements(store.engine) as seen:
        rows = list(store.read_rows(batch=2))
    assert len(rows) == total
    assert [r.seq for r in rows] == sorted(r.seq for r in rows)
    assert len([s for s in seen if "FROM events" in s]) == 1, seen


def test_a_streamed_replay_rebuilds_every_projection_equal_to_the_stored_ones(
    store: EventStore,
) -> None:
    total = _seed(store, 4, 3)
    report = rebuild(store)
    compare(store, report)
    assert report.events == total
    assert report.clean, report.differences
