"""SQLite writers wait on a `flock` of `<database>-writer`, held from BEGIN IMMEDIATE to COMMIT or
ROLLBACK, so that the next writer wakes when the previous one ends (not after a busy sleep)."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from bot.store.engine import CHECKPOINT_EVERY, READ_ONLY, make_engine, writer_lock_path
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
    the commits checkpoint themselves once every CHECKPOINT_EVERY, after letting it go."""
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
    assert database.stat().st_size > before + CHECKPOINT_EVERY * 2000
