"""An append staged before its stream's lock and sent with its COMMIT in one flight
(PostgreSQL's pipeline mode, each statement bound by the server): it writes what an append
writes, takes and lets go of the lock without the client reading an answer in between, and
keeps nothing when the stream moved or a projection refuses it."""

from __future__ import annotations

import logging
import re
import tempfile
import threading
from pathlib import Path

import pytest
from psycopg import pq
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.store.database import make_engine
from bot.store.event_store import ConcurrencyError, ConstraintViolation, EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import new_id, participant_of, participant_stream
from bot.store.flight import commit_in_one_flight
from bot.store.projections.outbox import PROJECTION as OUTBOX
from bot.store.replay import compare, rebuild
from bot.store.schema import events, outbox
from tests.conftest import fresh_database
from tests.factories import enrolled, received
from tests.locks import participant_row_locked, sessions_waiting_on_a_lock


@pytest.fixture
def pg(pg_store: EventStore) -> EventStore:
    return pg_store


def _enrolled(store: EventStore, phone: str) -> str:
    first = enrolled(phone=phone)
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    return stream


def _head(store: EventStore, stream: str) -> dict:
    row = store.projection_row("participants", str(participant_of(stream)))
    assert row is not None
    return dict(row)


def _reply(stream: str, phone: str) -> MessageQueued:
    return MessageQueued(outbox_id=new_id(), to_address=phone, channel="sms", body="Well done!")


def _count(store: EventStore, stream: str) -> int:
    with store.reading() as conn:
        query = select(func.count()).select_from(events).where(events.c.stream_id == stream)
        return int(conn.execute(query).scalar_one())


def test_a_staged_append_writes_what_an_append_writes_and_a_rebuild_agrees(
    pg: EventStore,
) -> None:
    phones = ("+14155552671", "+14155552672")
    plain, flown = (_enrolled(pg, phone) for phone in phones)
    pg.append(plain, [received("SM1"), _reply(plain, phones[0])])
    with pg.transaction() as tx:
        head = _head(pg, flown)
        staged = tx.stage(flown, [received("SM2"), _reply(flown, phones[1])], 1, head)
        assert commit_in_one_flight(tx, [staged]) == []
    assert [e.stream_version for e in staged.result.events] == [2, 3]
    with pg.reading() as conn:
        seqs = conn.execute(
            select(events.c.seq).where(events.c.stream_id == flown).order_by(events.c.seq)
        ).scalars()
        assert list(seqs)[1:] == [e.seq for e in staged.result.events]
        queued = conn.execute(select(outbox).where(outbox.c.stream_id == flown)).one()
    assert queued.position == staged.result.events[1].seq
    one, other = _head(pg, plain), _head(pg, flown)
    differs = {k for k in one if one[k] != other[k]}  # the memory holds the messages' ids
    assert differs <= {"participant_id", "phone", "memory"}, differs
    assert other["version"] == 3
    report = rebuild(pg)
    compare(pg, report)
    assert report.differences == []


def test_the_lock_and_the_commit_go_to_the_server_in_one_message(pg: EventStore) -> None:
    """libpq's own trace of the connection: the lock's statement, the writes and COMMIT (each
    Parse, Bind, Execute) and one Sync are all sent before any answer (B) is read."""
    stream = _enrolled(pg, "+14155552671")
    with tempfile.TemporaryFile("w+") as trace, pg.transaction() as tx:
        staged = tx.stage(
            stream, [received("SM1"), _reply(stream, "+14155552671")], 1, _head(pg, stream)
        )
        driver = tx.conn.connection.dbapi_connection
        driver.pgconn.trace(trace.fileno())
        driver.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            commit_in_one_flight(tx, [staged])
        finally:
            driver.pgconn.untrace()
        trace.seek(0)
        messages = _messages(trace.read())
    first = next(i for i, (_, text) in enumerate(messages) if "FOR UPDATE" in text)
    answered = next(i for i, (way, _) in enumerate(messages) if i > first and way == "B")
    sent = messages[first:answered]  # what the client sent before it read the first answer
    flight = " ".join(text for _, text in sent)
    for part in ("INSERT INTO events", "INSERT INTO outbox", "UPDATE participants", "COMMIT"):
        assert part in flight, part
    assert flight.index("FOR UPDATE") < flight.index("INSERT INTO events") < flight.index("COMMIT")
    assert sent[-1][1].split("\t")[2] == "Sync"  # then the answers, all at once
    # Bound by the server: the statements' texts hold placeholders, the values go apart.
    parsed = " ".join(text for _, text in sent if text.split("\t")[2] == "Parse")
    assert "$1" in parsed and "+14155552671" not in parsed and "SM1" not in parsed
    assert _count(pg, stream) == 3


def _messages(trace: str) -> list[tuple[str, str]]:
    """libpq's trace as (direction, text) a protocol message: F the client's, B the server's
    (a statement's own line breaks continue its message)."""
    messages: list[tuple[str, str]] = []
    for line in trace.splitlines():
        found = re.match(r"([FB])\t\d+\t", line)
        if found:
            messages.append((found.group(1), line))
        elif messages:
            messages[-1] = (messages[-1][0], messages[-1][1] + " " + line)
    return messages


def test_the_work_before_the_lock_needs_no_lock_and_the_flight_waits_for_it_on_the_server(
    pg: EventStore,
) -> None:
    stream = _enrolled(pg, "+14155552671")
    done, staging_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def flight() -> None:
        try:
            with pg.transaction() as tx:
                staged = tx.stage(stream, [received("SM1")], 1, _head(pg, stream))
                staging_done.set()
                commit_in_one_flight(tx, [staged])
        except BaseException as exc:  # noqa: BLE001 - reported to the test's thread
            errors.append(exc)
        finally:
            done.set()

    with participant_row_locked(pg.engine, str(participant_of(stream))):
        thread = threading.Thread(target=flight, daemon=True)
        thread.start()
        assert staging_done.wait(30), "staging waited for the participant's lock"
        assert not done.wait(0.5), "the flight committed while another held the lock"
        # the server holds the flight (a session waiting on the lock), not the client
        assert sessions_waiting_on_a_lock(pg.engine) == 1
    assert done.wait(30) and errors == []
    thread.join(5)
    assert _count(pg, stream) == 2


def test_a_stream_that_moved_after_staging_keeps_nothing_of_the_flight(
    pg: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    phone = "+14155552671"
    stream = _enrolled(pg, phone)
    caplog.set_level(logging.WARNING)
    with pytest.raises(IntegrityError), pg.transaction() as tx:
        staged = tx.stage(stream, [received("SM1"), _reply(stream, phone)], 1, _head(pg, stream))
        pg.append(stream, [received("SM2")])  # another transaction, committed first
        commit_in_one_flight(tx, [staged])
    assert _count(pg, stream) == 2
    assert _head(pg, stream)["version"] == 2
    assert caplog.records == []  # a conflict is expected: psycopg's pipeline logs nothing
    with pg.reading() as conn:
        assert conn.execute(select(outbox)).all() == []
    report = rebuild(pg)
    compare(pg, report)
    assert report.differences == []


def test_a_head_read_at_another_version_is_refused_before_anything_is_sent(
    pg: EventStore,
) -> None:
    stream = _enrolled(pg, "+14155552671")
    head = _head(pg, stream)
    with pytest.raises(ConcurrencyError), pg.transaction() as tx:
        tx.stage(stream, [received("SM1")], 2, head)
    assert _count(pg, stream) == 1


def test_a_projection_refusing_a_row_in_the_flight_is_a_constraint_violation(
    pg: EventStore,
) -> None:
    phone = "+14155552671"
    stream = _enrolled(pg, phone)
    taken = _reply(stream, phone)
    pg.append(stream, [taken])
    again = MessageQueued(outbox_id=taken.outbox_id, to_address=phone, channel="sms", body="Hi")
    with pytest.raises(ConstraintViolation, match="outbox"), pg.transaction() as tx:
        tx._adopt_row(OUTBOX, taken.outbox_id, None)  # vouched for wrongly: the row exists
        staged = tx.stage(stream, [received("SM1"), again], 2, _head(pg, stream))
        commit_in_one_flight(tx, [staged])
    assert _count(pg, stream) == 2
    assert _head(pg, stream)["version"] == 2


def test_staging_is_refused_on_sqlite_and_for_an_enrollment(
    request: pytest.FixtureRequest, tmp_path: Path, pg: EventStore
) -> None:
    lite = EventStore(make_engine(fresh_database("sqlite", request, tmp_path)))
    stream = _enrolled(lite, "+14155552671")
    with pytest.raises(ValueError, match="PostgreSQL"), lite.transaction() as tx:
        tx.stage(stream, [received("SM1")], 1, _head(lite, stream))
    lite.engine.dispose()
    stream = _enrolled(pg, "+14155552671")
    with pytest.raises(ValueError, match="enrollment"), pg.transaction() as tx:
        tx.stage(stream, [enrolled(phone="+14155552673")], 1, _head(pg, stream))


def test_a_staged_stream_takes_no_other_write_in_its_transaction(pg: EventStore) -> None:
    stream = _enrolled(pg, "+14155552671")
    with pg.transaction() as tx:
        tx.stage(stream, [received("SM1")], 1, _head(pg, stream))
        with pytest.raises(ValueError, match="staged"):
            tx.append(stream, [received("SM2")])
        with pytest.raises(ValueError, match="staged"):
            tx.stage(stream, [received("SM3")], 1, _head(pg, stream))
    assert _count(pg, stream) == 1  # the block ended without its flight: nothing was written
