"""SQLite writers wait on a `flock` of `<database>-writer`, held from BEGIN IMMEDIATE to COMMIT or
ROLLBACK, so that the next writer wakes when the previous one ends (not after a busy sleep)."""

from __future__ import annotations

import fcntl
import itertools
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import OperationalError

from bot.store import database as engine_module
from bot.store.database import (
    CHECKPOINT_EVERY,
    CHECKPOINTS,
    READ_ONLY,
    make_engine,
    writer_lock_path,
)
from tests.conftest import fresh_database


@pytest.fixture
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(fresh_database("sqlite", request, tmp_path))
    yield engine
    engine.dispose()


def _locked(engine: Engine) -> bool:
    """Whether some connection holds the writer lock (tried from a descriptor of our own)."""
    with open(writer_lock_path(str(engine.url)), "ab") as probe:
        try:
            fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
        return False


def test_a_write_transaction_holds_the_lock_until_commit(engine: Engine) -> None:
    assert not _locked(engine)
    with engine.begin() as conn:
        conn.execute(text("SELECT 1"))
        assert _locked(engine)
    assert not _locked(engine)


def test_a_rolled_back_or_failed_transaction_lets_it_go(engine: Engine) -> None:
    with pytest.raises(ZeroDivisionError), engine.begin():
        assert _locked(engine)
        raise ZeroDivisionError
    assert not _locked(engine)
    with engine.connect() as conn:  # begun by the first statement, never committed
        conn.execute(text("SELECT 1"))
        assert _locked(engine)
    assert not _locked(engine)  # the pool's rollback on return


def test_a_begin_that_finds_the_database_locked_is_sqlalchemy_s_error_and_lets_go(
    engine: Engine,
) -> None:
    # Another program (the sqlite3 shell, say) writes without our lock: BEGIN IMMEDIATE meets
    # SQLite's busy wait, then fails as SQLAlchemy's OperationalError, and the flock is freed.
    with engine.connect() as conn:
        conn.connection.dbapi_connection.execute("PRAGMA busy_timeout=50")  # not 30 s
        other = sqlite3.connect(engine.url.database, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(OperationalError, match="database is locked"):
                conn.begin()
            assert not conn.in_transaction()
            assert not _locked(engine)
            other.execute("ROLLBACK")
            with conn.begin():
                conn.execute(text("SELECT 1"))
                assert _locked(engine)
        finally:
            other.close()
    assert not _locked(engine)


def test_a_read_only_transaction_takes_no_lock(engine: Engine) -> None:
    with engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        conn.execute(text("SELECT 1"))
        assert not _locked(engine)


def test_a_second_writer_waits_for_the_first_then_writes(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER)"))
    began = threading.Event()
    done = threading.Event()

    def second() -> None:
        began.set()
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (2)"))
        done.set()

    with engine.begin() as conn:
        conn.execute(text("INSERT INTO t VALUES (1)"))
        thread = threading.Thread(target=second)
        thread.start()
        began.wait()
        assert not done.is_set()  # it cannot have written: this transaction holds the lock
    thread.join(timeout=60)
    assert done.is_set()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT n FROM t ORDER BY rowid")).scalars().all() == [1, 2]


def test_in_memory_and_uri_databases_have_no_lock_file() -> None:
    assert writer_lock_path("sqlite://") is None
    assert writer_lock_path("sqlite:///:memory:") is None
    assert writer_lock_path("sqlite:///file:x?mode=memory&uri=true") is None
    assert writer_lock_path("sqlite:////data/tandem.db") == "/data/tandem.db-writer"


def test_the_wal_is_checkpointed_every_so_many_commits_not_inside_commit(engine: Engine) -> None:
    """SQLite's automatic checkpoint is off (it ran inside COMMIT, under the writer lock);
    the commits ask for one every CHECKPOINT_EVERY, and it runs beside them."""
    database = Path(engine.url.database)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
        conn.rollback()
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER, pad TEXT)"))
    before = database.stat().st_size
    # Pages reach the database file only by a checkpoint; the count is the process's, so the
    # second of two checkpoints comes at least CHECKPOINT_EVERY rows in.
    for n in range(2 * CHECKPOINT_EVERY):
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (:n, :pad)"), {"n": n, "pad": "x" * 2000})
    assert CHECKPOINTS.wait_idle(timeout=60)
    assert database.stat().st_size > before + CHECKPOINT_EVERY * 2000


def test_the_copy_runs_in_its_own_thread_and_the_next_commit_finishes_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit that asks for a checkpoint returns without running it: the copy runs in the
    checkpoint thread, and the first commit after it runs one more pass, once."""
    ran_in: list[str] = []
    on_callers: list[str] = []

    @event.listens_for(engine, "connect")
    def _trace(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.set_trace_callback(on_callers.append)

    engine.dispose()  # new connections, traced
    real = engine_module.checkpoint

    def checkpoint(database: str) -> bool:
        ran_in.append(threading.current_thread().name)
        return real(database)

    def commit(n: int) -> None:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (:n)"), {"n": n})

    def passes_on_callers() -> int:
        return len([s for s in on_callers if "wal_checkpoint" in s.lower()])

    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER)"))
    assert CHECKPOINTS.wait_idle(timeout=60)  # any asked for by earlier commits
    CHECKPOINTS.to_finish(os.path.abspath(engine.url.database))  # and a finish they left
    monkeypatch.setattr(engine_module, "checkpoint", checkpoint)
    monkeypatch.setattr(engine_module, "_commits", itertools.count(1))  # the process's count
    for n in range(CHECKPOINT_EVERY):
        commit(n)
    assert CHECKPOINTS.wait_idle(timeout=60)
    assert ran_in == ["wal-checkpoint"]
    assert passes_on_callers() == 0
    commit(-1)
    assert passes_on_callers() == 1
    commit(-2)
    assert passes_on_callers() == 1


def test_a_steady_writer_s_wal_starts_again_from_its_beginning(engine: Engine) -> None:
    """Commits go on while the thread copies; the WAL still starts again (only a writer that
    begins with every frame copied does that), so it stays as small as a few checkpoints'
    worth of commits instead of growing with every commit."""
    database = Path(engine.url.database)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER, pad TEXT)"))
        page = conn.exec_driver_sql("PRAGMA page_size").scalar()
    commits = 10 * CHECKPOINT_EVERY  # each writes one frame at least
    for n in range(commits):
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (:n, :pad)"), {"n": n, "pad": "x" * 1000})
    wal = Path(f"{database}-wal").stat().st_size
    assert wal < (commits // 2) * (page + 24)  # a frame: a page and its 24-byte header


def test_a_checkpoint_of_a_removed_database_creates_nothing(tmp_path: Path) -> None:
    gone = tmp_path / "gone.db"
    engine_module.checkpoint(str(gone))
    assert not gone.exists()


def test_a_failed_checkpoint_is_logged_by_its_type_and_lets_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database, but a file holding a participant's words" * 100)
    with caplog.at_level(logging.WARNING, logger="bot.store.database"):
        CHECKPOINTS.request(str(broken))
        assert CHECKPOINTS.wait_idle(timeout=60)
    assert [r.getMessage() for r in caplog.records] == ["WAL checkpoint failed: DatabaseError"]
    database = tmp_path / "next.db"
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t (pad TEXT)")
    conn.executemany("INSERT INTO t VALUES (?)", [("x" * 2000,)] * 50)
    conn.commit()
    before = database.stat().st_size
    CHECKPOINTS.request(str(database))
    assert CHECKPOINTS.wait_idle(timeout=60)
    after = database.stat().st_size  # before closing: the last connection's close checkpoints
    conn.close()
    assert before < 50 * 2000 < after


def test_held_waits_for_a_checkpoint_under_way_and_lets_none_start_until_it_ends() -> None:
    checkpoints = engine_module.Checkpointer()
    with checkpoints._lock:  # noqa: SLF001 - a checkpoint under way, as the thread marks it
        checkpoints._running = True  # noqa: SLF001
    entered, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with checkpoints.held():
            entered.set()
            leave.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    assert not entered.wait(0.3)  # still under way: held() waits
    with checkpoints._lock:  # noqa: SLF001 - it ends, as the thread ends one
        checkpoints._running = False  # noqa: SLF001
        checkpoints._changed.notify_all()  # noqa: SLF001
    assert entered.wait(5)
    # Inside the block the lock is held: the thread cannot mark another one running.
    assert not checkpoints._lock.acquire(timeout=0.1)  # noqa: SLF001
    leave.set()
    holder.join(5)
    assert not holder.is_alive()
    assert checkpoints._lock.acquire(timeout=1)  # noqa: SLF001 - free once the block ended
    checkpoints._lock.release()  # noqa: SLF001
