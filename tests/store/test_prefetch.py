"""`ahead` runs reads in the caller's snapshot: on PostgreSQL ahead of time, on a second
connection in a thread of its own; elsewhere on the caller's connection, when asked for."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, func, select

from bot.reporting import export as export_module
from bot.reporting.export import export, participant_records
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.prefetch import ahead
from bot.store.schema import events
from tests.factories import enrolled, received


def _count(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(events)).scalar_one()


def _append_one(store: EventStore, n: int) -> None:
    person = enrolled(phone=f"+1415555{n:04d}")
    store.append(participant_stream(person.participant_id), [person, received(f"SM{n}", "hi")])


def test_a_read_sees_the_callers_snapshot_not_what_commits_after(store: EventStore) -> None:
    _append_one(store, 1)
    with store.snapshot() as conn:
        before = _count(conn)  # the snapshot is taken (SQLite takes it at the first read)
        with ahead(conn, enabled=True) as submit:
            _append_one(store, 2)  # committed after the snapshot
            read = submit(_count)
            assert read() == before == 2
    with store.reading() as conn:
        assert _count(conn) == 4


def test_on_postgresql_a_read_runs_at_once_on_a_second_connection_in_a_thread(
    store: EventStore,
) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("only PostgreSQL reads ahead: SQLite's connections share no snapshot")
    started, release = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def read(conn: Connection) -> int:
        seen["conn"], seen["thread"] = conn, threading.current_thread()
        started.set()
        release.wait(30)
        return _count(conn)

    pool = store.engine.pool
    with store.snapshot() as conn:
        held = pool.checkedout()
        with ahead(conn) as submit:
            result = submit(read)
            # It runs before anyone asks for its result, while this thread goes on.
            assert started.wait(30)
            assert seen["conn"] is not conn
            assert seen["thread"] is not threading.current_thread()
            assert pool.checkedout() == held + 1
            release.set()
            assert result() == 0
        assert pool.checkedout() == held  # the second connection is back in the pool


def test_elsewhere_or_not_enabled_a_read_runs_on_the_callers_connection_when_asked(
    store: EventStore,
) -> None:
    calls: list[tuple[Connection, threading.Thread]] = []

    def read(conn: Connection) -> int:
        calls.append((conn, threading.current_thread()))
        return _count(conn)

    enabled = [False] if store.engine.dialect.name == "postgresql" else [False, True]
    for on in enabled:
        calls.clear()
        with store.snapshot() as conn, ahead(conn, enabled=on) as submit:
            result = submit(read)
            assert calls == []  # not yet
            assert result() == 0
            assert calls == [(conn, threading.current_thread())]


def test_a_failed_read_raises_where_its_result_is_asked_for(store: EventStore) -> None:
    def fails(conn: Connection) -> None:
        raise LookupError("no such thing")

    with store.snapshot() as conn, ahead(conn) as submit:
        result = submit(fails)
        with pytest.raises(LookupError, match="no such thing"):
            result()
        assert submit(_count)() == 0  # and the next read still runs


def test_leaving_waits_for_the_read_running_and_discards_those_not_started(
    store: EventStore,
) -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(conn: Connection) -> None:
        ran.append("slow")
        started.set()
        release.wait(30)
        ran.append("slow done")

    def later(conn: Connection) -> None:
        ran.append("later")

    on_postgresql = store.engine.dialect.name == "postgresql"
    with store.snapshot() as conn:
        with ahead(conn) as submit:
            submit(slow)
            submit(later)
            if on_postgresql:
                assert started.wait(30)
                # Released once this thread is leaving (a second is ample to get there).
                threading.Timer(1.0, release.set).start()
        assert ran == (["slow", "slow done"] if on_postgresql else [])  # none asked for
        assert _count(conn) == 0  # the caller's connection is still usable


def test_an_export_writes_the_same_files_reading_ahead_or_not(
    store: EventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(5):
        _append_one(store, n)
    real_fetched, real_records = export_module._fetched, export_module.participant_records
    threads: list[str] = []

    def watched(query: Any, conn: Connection) -> list[Any]:
        threads.append(threading.current_thread().name)
        return real_fetched(query, conn)

    def in_batches_of_two(*args: Any, read_ahead: bool, **kwargs: Any) -> Any:
        return real_records(*args, **kwargs, read_ahead=read_ahead and ahead_now, batch=2)

    monkeypatch.setattr(export_module, "_fetched", watched)
    monkeypatch.setattr(export_module, "participant_records", in_batches_of_two)
    ahead_now = True
    export(store, tmp_path / "ahead", "csv")
    on_postgresql = store.engine.dialect.name == "postgresql"
    assert len(threads) == 3  # the three batches' reads
    assert all(name.startswith("read-ahead") == on_postgresql for name in threads)
    threads.clear()
    ahead_now = False
    export(store, tmp_path / "in-place", "csv")
    assert threads == ["MainThread"] * 3
    for name in ("participants", "messages", "results", "retrievals", "forms"):
        got = (tmp_path / "in-place" / f"{name}.csv").read_text()
        assert got == (tmp_path / "ahead" / f"{name}.csv").read_text(), name
    messages = (tmp_path / "ahead" / "messages.csv").read_text().splitlines()
    assert sorted(line.split(",")[2] for line in messages[1:]) == [f"SM{n}" for n in range(5)]
    # events.csv differs only by the export.written line of the export before it
    lines = [(tmp_path / d / "events.csv").read_text().splitlines() for d in ("ahead", "in-place")]
    assert len(lines[0]) == 11  # the header and five participants' two events
    assert [x for x in lines[1] if "export.written" not in x] == lines[0]


def test_a_download_reads_on_one_connection(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        _append_one(store, n)
    threads: set[str] = set()
    real = export_module._fetched

    def watched(query: Any, conn: Connection) -> list[Any]:
        threads.add(threading.current_thread().name)
        return real(query, conn)

    monkeypatch.setattr(export_module, "_fetched", watched)
    with store.snapshot() as conn:
        upto = conn.execute(select(func.max(events.c.seq))).scalar_one()
        records = list(participant_records(conn, store.sealer, ("messages",), (), upto, None))
    assert len(records) == 3
    assert threads == {threading.current_thread().name}


def test_each_batchs_read_starts_before_the_batch_before_is_worked_on(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(4):
        _append_one(store, n)
    submitted: list[int] = []
    real = export_module.ahead

    @contextmanager
    def counted(conn: Connection, **kwargs: Any) -> Iterator[Any]:
        with real(conn, **kwargs) as submit:

            def counting(read: Any) -> Any:
                submitted.append(len(submitted))
                return submit(read)

            yield counting

    monkeypatch.setattr(export_module, "ahead", counted)
    with store.snapshot() as conn:
        upto = conn.execute(select(func.max(events.c.seq))).scalar_one()
        names = ("messages",)
        records = participant_records(conn, store.sealer, names, (), upto, None, 2, read_ahead=True)
        next(records)  # the first batch's first record
        assert submitted == [0, 1]  # the second batch is being read
        assert len(list(records)) == 3
        assert submitted == [0, 1]
