"""The window a turn reads (bot.store.recent): the last 2 x CHAT_HISTORY_LIMIT message and
step events of the stream, oldest first; none for 0; every message for -1 ("all")."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import event

from bot.services.erasure import erase
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.interventions import StepEntered
from bot.store.events import encode, participant_stream
from bot.store.personal import ERASED
from bot.store.recent import WINDOW_TYPES, RecentWindows, last_messages
from bot.store.schema import WINDOW_EVENT_TYPES, WINDOW_PREDICATE, events
from bot.store.sealing import Sealer
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled, received


def test_the_window_holds_the_last_messages_and_steps_in_order(store: EventStore) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    noise = LLMCalled(call_id="c", purpose="intake", model="m", messages=[])
    payloads = [person]
    for n in range(30):
        payloads += [received(f"SM{n}", body=f"m{n}"), noise]
    payloads.append(StepEntered(intervention="i", step="welcome"))
    store.append(stream, payloads)
    with store.reading() as conn:
        window = last_messages(conn, stream, 5, store.sealer)
        everything = last_messages(conn, stream, -1, store.sealer)
        nothing = last_messages(conn, stream, 0, store.sealer)
    assert [e.event_type for e in window[-1:]] == ["step.entered"]
    assert [e.data.body for e in window[:-1]] == [f"m{n}" for n in range(21, 30)]
    assert len(everything) == 31 and everything[0].data.body == "m0"
    assert nothing == []


BULK_EVENTS = """
INSERT INTO events (event_id, stream_id, stream_version, event_type, schema_version, data, meta,
                    occurred_at, recorded_at)
SELECT gen_random_uuid()::text, %(s)s, 1000 + n,
       CASE WHEN n %% 5 < 2 THEN 'message.received' ELSE 'llm.called' END, 1, %(data)s, '{}',
       now(), now()
FROM generate_series(1, 100000) AS n
"""


def _window_plan(store: EventStore, stream: str) -> str:
    """The database's plan of the window query, as the turn issues it (no ANALYZE: the plan a
    fresh table gets, which is where the planner went wrong before)."""
    issued: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "FROM events" in statement:  # not the data keys that open sealed fields
            issued.append((statement, parameters))

    with store.reading() as conn:
        event.listen(conn, "before_cursor_execute", record)
        last_messages(conn, stream, 50, store.sealer)
        event.remove(conn, "before_cursor_execute", record)
        ((sql, params),) = issued
        if conn.dialect.name == "sqlite":
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)
            return " | ".join(row[3] for row in rows)
        return " | ".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN {sql}", params))


def test_the_window_walks_the_streams_index_backwards_without_sorting(store: EventStore) -> None:
    """Its cost must not grow with the stream: read in index order and stopped at the limit,
    never every message of the stream gathered and sorted (PostgreSQL did that, intersecting
    the stream's index with the event-type index, until the partial index ix_events_window)."""
    people = [enrolled(phone=f"+1416555{n:04d}") for n in range(3)]
    noise = LLMCalled(call_id="c", purpose="intake", model="m", messages=[])
    for person in people:
        payloads: list[Any] = [person]
        for n in range(400):
            payloads += [received(f"SM{n}", body=f"m{n}", phone=person.phone), noise]
        store.append(participant_stream(person.participant_id), payloads)
    stream = participant_stream(people[0].participant_id)
    if store.engine.dialect.name == "postgresql":
        # The misplan showed only on a large table without statistics: 100,000 more events
        # (raw rows: only the plan is read), as a long study's fresh database would hold.
        with store.engine.begin() as conn:
            body = json.dumps(encode(received("SMbulk", phone=people[0].phone)))
            conn.exec_driver_sql(BULK_EVENTS, {"s": stream, "data": body})
    plan = _window_plan(store, stream)
    if store.engine.dialect.name == "sqlite":
        assert "TEMP B-TREE" not in plan, plan
        assert "(stream_id=?" in plan and "ix_events_event_type_seq" not in plan, plan
    else:
        assert "Index Scan Backward using ix_events_window" in plan, plan
        assert "Sort" not in plan and "BitmapAnd" not in plan, plan


def test_the_window_index_covers_exactly_the_window_types() -> None:
    """The partial index's predicate is built from the schema's list; the window reads the
    same types (a type added to one and not the other would quietly lose the index)."""
    index = next(i for i in events.indexes if i.name == "ix_events_window")
    predicate = str(index.dialect_options["postgresql"]["where"])
    assert sorted(WINDOW_TYPES) == sorted(WINDOW_EVENT_TYPES)
    assert all(f"'{name}'" in predicate for name in WINDOW_TYPES), predicate
    assert predicate == WINDOW_PREDICATE


def _window(events_: list) -> list[tuple[str, object]]:
    return [(e.event_id, e.data) for e in events_]


def test_a_kept_window_reads_only_what_was_recorded_since_and_equals_a_fresh_read(
    store: EventStore,
) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    noise = LLMCalled(call_id="c", purpose="intake", model="m", messages=[])
    store.append(stream, [person, *[received(f"SM{n}", body=f"m{n}") for n in range(8)]])
    windows = RecentWindows()
    asked: list[dict] = []

    def record(
        _conn: Any, _cursor: Any, statement: str, _params: Any, context: Any, _m: Any
    ) -> None:
        if "FROM events" in statement:
            asked.append(context.compiled_parameters[0])

    for step in range(4):
        with store.reading() as conn:
            event.listen(conn, "before_cursor_execute", record)
            kept = windows.last_messages(conn, stream, 3, store.sealer)
            event.remove(conn, "before_cursor_execute", record)
            fresh = last_messages(conn, stream, 3, store.sealer)
            every = windows.last_messages(conn, stream, -1, store.sealer)  # never kept
        assert _window(kept) == _window(fresh)
        assert len(every) == 8 + step and _window(every[-len(fresh) :]) == _window(fresh)
        assert [e.data.body for e in kept][-1] == (f"m{7 + step}" if step else "m7")
        store.append(stream, [noise, received(f"SMn{step}", body=f"m{8 + step}"), noise])
    # The first read asks for the whole window; each one after, for what came after the newest
    # window event it read (the noise between is no window event).
    assert [p.get("after") for p in asked] == [None, 9, 11, 14]  # the newest message read


def test_a_kept_window_reads_erased_once_the_participant_is_erased(
    store: EventStore, database_url: str
) -> None:
    person = enrolled(phone="+14155550123")
    pid = person.participant_id
    stream = participant_stream(pid)
    store.append(stream, [person, received("SM1", body="my secret walk", phone=person.phone)])
    windows = RecentWindows()
    with store.reading() as conn:
        assert windows.last_messages(conn, stream, 3, store.sealer)[-1].data.body == (
            "my secret walk"
        )

    # Erased by another process: its erasure reaches this one when the key's cache lapses
    # (KEY_CACHE_SECONDS; forgotten here rather than waited for).
    other = EventStore(make_engine(database_url), clock=store.clock, sealer=Sealer(TEST_MASTER_KEY))
    erase(other, pid, confirm=pid, reason="asked", requested_by="participant", actor="test")
    other.engine.dispose()
    store.sealer.forget(pid)
    with store.reading() as conn:
        window = windows.last_messages(conn, stream, 3, store.sealer)

    assert window[-1].data.body == ERASED
    assert "body" in window[-1].meta["erased"]


def _steps_of_reading_what_came_since(store: EventStore, messages: int) -> int:
    """The work (SQLite: virtual machine steps; PostgreSQL: index entries the scan visited,
    from EXPLAIN ANALYZE) of a kept window's read of the 2 messages recorded since, in a
    stream of `messages` messages."""
    person = enrolled(phone=f"+1416555{messages:04d}")
    stream = participant_stream(person.participant_id)
    payloads: list[Any] = [person]
    payloads += [received(f"SM{n}", body=f"m{n}", phone=person.phone) for n in range(messages)]
    store.append(stream, payloads)
    windows = RecentWindows()
    with store.reading() as conn:
        windows.last_messages(conn, stream, 5, store.sealer)
    store.append(stream, [received(f"SMx{n}", phone=person.phone) for n in range(2)])
    issued: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "FROM events" in statement:
            issued.append((statement, parameters))

    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0  # go on

    with store.reading() as conn:
        raw = conn.connection.driver_connection
        event.listen(conn, "before_cursor_execute", record)
        if conn.dialect.name == "sqlite":
            raw.set_progress_handler(step, 1)
        window = windows.last_messages(conn, stream, 5, store.sealer)
        if conn.dialect.name == "sqlite":
            raw.set_progress_handler(None, 1)
        event.remove(conn, "before_cursor_execute", record)
        assert [e.data.message_sid for e in window[-2:]] == ["SMx0", "SMx1"]
        if conn.dialect.name == "postgresql":
            ((sql, params),) = issued
            plan = conn.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params).scalar()
            node = plan[0]["Plan"]
            while node.get("Node Type") != "Index Scan":
                (node,) = node["Plans"]
            return int(node["Actual Rows"]) + int(node.get("Rows Removed by Filter", 0))
    return steps[0]


def test_a_kept_windows_read_of_what_came_since_does_not_walk_the_older_messages(
    store: EventStore,
) -> None:
    """The read of what came since is bounded by the version the window was read through:
    its work is the same behind 20 messages as behind 2,000 (SQLite walked every message of
    the stream while `stream_version > 0` stood beside that bound)."""
    small = _steps_of_reading_what_came_since(store, 20)
    large = _steps_of_reading_what_came_since(store, 2000)
    assert large <= small * 1.2, (small, large)
