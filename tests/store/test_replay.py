"""Replay: projections rebuilt from the events equal the ones kept inline."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, insert, select, text, update

from bot.channel import outbound
from bot.store.event_store import ConstraintViolation, EventStore
from bot.store.event_types import (
    MessageQueued,
    MessageReceived,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
)
from bot.store.event_types.alerts import AlertAcknowledged, AlertRaised, AlertResolved
from bot.store.event_types.timers import TimerFired, TimerScheduled
from bot.store.events import EventData, participant_stream
from bot.store.projections import Projection
from bot.store.replay import _differences, _stored_rows, compare, rebuild, repair
from bot.store.schema import PROJECTION_TABLES, events, participants
from tests.factories import enrolled, received

texts = st.text(min_size=0, max_size=12)
alert_ids = st.sampled_from(["alert-1", "alert-2"])
changes = st.dictionaries(
    st.sampled_from(["name", "gender", "ethnicity", "background", "timezone", "debug"]),
    st.one_of(texts, st.booleans()),
    min_size=1,
    max_size=3,
).filter(lambda c: all(isinstance(v, bool) == (k == "debug") for k, v in c.items()))

operations = st.one_of(
    st.builds(ParticipantUpdated, changes=changes),
    st.builds(
        ParticipantStatusChanged,
        status=st.sampled_from(["active", "paused", "completed", "withdrawn"]),
    ),
    st.builds(ParticipantUnenrolled),
    st.builds(
        MessageReceived,
        message_sid=st.text("abc", min_size=1, max_size=5),
        from_address=st.just("+14155552671"),
        to_address=st.just("+15005550006"),
        channel=st.sampled_from(["sms", "whatsapp"]),
        body=texts,
    ),
    st.builds(
        MessageQueued,
        outbox_id=st.uuids().map(str),
        to_address=st.just("+14155552671"),
        channel=st.just("sms"),
        body=texts,
    ),
    st.builds(AlertRaised, alert_id=alert_ids, kind=st.just("crisis"), summary=texts),
    st.builds(AlertAcknowledged, alert_id=alert_ids, by=texts, via=st.sampled_from(["sms", "api"])),
    st.builds(AlertResolved, alert_id=alert_ids, by=texts, via=st.just("console"), note=texts),
)
# A script: per participant (0..2), a phone choice and a list of batches of operations.
scripts = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.sampled_from(["+14155552671", "+442071838750"]),
        st.lists(st.lists(operations, min_size=1, max_size=3), max_size=4),
    ),
    min_size=1,
    max_size=3,
)


def _run(store: EventStore, script: list) -> None:
    for _, phone, batches in script:
        first = enrolled(phone=phone, participant_id=str(uuid.uuid4()))
        stream = participant_stream(first.participant_id)
        try:
            store.append(stream, [first])
        except ConstraintViolation:
            continue
        for batch in batches:
            ops: list[EventData] = list(batch)
            try:
                store.append(stream, ops)
            except ConstraintViolation:
                pass


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(script=scripts)
def test_incremental_projection_equals_the_replayed_one(store: EventStore, script: list) -> None:
    _run(store, script)
    report = rebuild(store)
    compare(store, report)
    assert report.unreadable == []
    assert report.differences == []
    assert len(report.rebuilt["participants"]) > 0


def test_replay_reports_a_tampered_projection_and_repair_restores_it(store: EventStore) -> None:
    first = enrolled()
    store.append(participant_stream(first.participant_id), [first])
    with store.engine.begin() as conn:
        conn.execute(update(participants).values(status="paused", name="Mallory"))
    report = rebuild(store)
    compare(store, report)
    assert [d.kind for d in report.differences] == ["changed"]
    assert set(report.differences[0].columns) == {"status", "name"}
    assert repair(store, report) == 1
    again = rebuild(store)
    compare(store, again)
    assert again.clean


def test_replay_reports_an_unknown_event_type_with_its_seq(store: EventStore) -> None:
    first = enrolled()
    store.append(participant_stream(first.participant_id), [first])
    with store.engine.begin() as conn:
        seq = unknown_event(conn, participant_stream(first.participant_id), 2, store.clock.now())
    report = rebuild(store)
    assert report.events == 2
    assert len(report.unreadable) == 1
    assert report.unreadable[0].startswith(f"seq {seq}:")
    assert "mood.teleported" in report.unreadable[0]


def unknown_event(conn: Connection, stream: str, version: int, now: datetime) -> int:
    """An event of a type no version of Tandem knows, written past the store; its seq."""
    return conn.execute(
        insert(events)
        .values(
            event_id=str(uuid.uuid4()),
            stream_id=stream,
            stream_version=version,
            event_type="mood.teleported",
            schema_version=1,
            data={},
            meta={},
            occurred_at=now,
            recorded_at=now,
        )
        .returning(events.c.seq)
    ).scalar_one()


def test_replay_reports_a_missing_projection_row(store: EventStore) -> None:
    first = enrolled()
    store.append(participant_stream(first.participant_id), [first])
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM participants"))
    report = rebuild(store)
    compare(store, report)
    assert [(d.kind, d.key) for d in report.differences] == [("missing", first.participant_id)]


def test_replay_finds_a_one_microsecond_or_nested_json_change_among_equal_rows(
    store: EventStore,
) -> None:
    people = [enrolled(phone=f"+1415555010{n}") for n in range(3)]
    for person in people:
        store.append(participant_stream(person.participant_id), [person])
    moved, nested = people[0].participant_id, people[1].participant_id
    with store.engine.begin() as conn:
        row = conn.execute(
            participants.select().where(participants.c.participant_id == moved)
        ).one()
        conn.execute(
            update(participants)
            .where(participants.c.participant_id == moved)
            .values(enrolled_at=row.enrolled_at + timedelta(microseconds=1))
        )
        conn.execute(
            update(participants)
            .where(participants.c.participant_id == nested)
            .values(step_counters={"intake": {"turns": 1}})
        )
    report = rebuild(store)
    compare(store, report)
    found = {(d.key, *d.columns) for d in report.differences}
    assert found == {(moved, "enrolled_at"), (nested, "step_counters")}


def test_stored_value_rows_are_compared_with_the_rebuilt_rows_column_by_column() -> None:
    """Stored rows are tuples in the columns' order (`Stored`), rebuilt rows dicts: a rebuilt
    row without a column reads it as None, a key the projection does not own is no column,
    and a datetime equals its ISO text (`_same`)."""
    at = datetime(2026, 3, 1, 9, tzinfo=UTC)
    projection = Projection(
        "things", "id", ("id", "n", "at", "extra"), key=lambda _e: None, apply=lambda r, _e: r
    )
    stored = {
        "a": ("a", 1, at, None),
        "b": ("b", 2, at, "kept"),
        "c": ("c", 3, at.isoformat(), None),
        "d": ("d", 4, at, None),
    }
    rebuilt = {
        "a": {"id": "a", "n": 1, "at": at},  # no "extra": None, as stored
        "b": {"id": "b", "n": 2, "at": at},  # no "extra", but "kept" is stored
        "c": {"id": "c", "n": 3, "at": at, "extra": None, "lease": "x"},  # not a column
        "e": {"id": "e", "n": 5, "at": at, "extra": None},
    }
    found = [(d.key, d.kind, d.columns) for d in _differences(projection, stored, rebuilt)]
    assert found == [
        ("b", "changed", {"extra": ("kept", None)}),
        ("d", "extra", {}),
        ("e", "missing", {}),
    ]
    full = {key: {**row, "extra": row.get("extra")} for key, row in rebuilt.items() if key < "d"}
    same = {key: stored[key] for key in "ac"} | {"b": ("b", 2, at, None)}
    assert _differences(projection, same, full) == []
    lone = Projection("ids", "id", ("id",), key=lambda _e: None, apply=lambda r, _e: r)
    one = {"p-1": ("p-1",)}  # a one-column row is a tuple of one value, as stored
    assert _differences(lone, one, {"p-1": {"id": "p-1"}}) == []
    found = [(d.key, d.columns) for d in _differences(lone, one, {"p-1": {"id": "p-2"}})]
    assert found == [("p-1", {"id": ("p-1", "p-2")})]


def test_stored_rows_are_read_as_a_typed_select_reads_them(store: EventStore) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    row = {"channel": "sms", "phone": person.phone}
    store.append(stream, [received("SM1", "hi", person.phone)])
    alert = AlertRaised(alert_id="a-1", kind="crisis", summary="s")
    store.append(stream, [*outbound.to_participant(row, "Hello"), alert])
    due = datetime(2026, 3, 1, 9, 0, 0, 250000, tzinfo=UTC)
    timer = TimerScheduled(timer_id="t-1", kind="reminder", due_at=due, payload={"n": 1})
    store.append(stream, [timer, TimerFired(timer_id="t-1", late_seconds=1.5)])
    for projection in store.projections:
        table = PROJECTION_TABLES[projection.name]
        with store.reading() as conn:
            typed = {
                str(r._mapping[projection.key_column]): tuple(r)
                for r in conn.execute(select(*[table.c[c] for c in projection.columns]))
            }
        read = _stored_rows(store, projection)
        assert read == typed, projection.name
        assert {k: list(map(type, r)) for k, r in read.items()} == {
            k: list(map(type, r)) for k, r in typed.items()
        }, projection.name
    assert store.projection_row("timers", "t-1")["late_seconds"] == 1.5
