"""`Direct`: a Core statement on the driver's cursor stores and reads exactly what SQLAlchemy's
own execution does, is seen by statement listeners, and fails with SQLAlchemy's exceptions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.direct import Direct
from bot.store.event_store import EventStore
from bot.store.schema import work_items
from tests.store.statements import statements


def _item(work_id: str, at: datetime) -> dict:
    return {
        "work_id": work_id,
        "participant_id": "p-1",
        "kind": "message",
        "ref": f"ref-{work_id}",
        "seq": 7,
        "status": "pending",
        "attempts": 0,
        "available_at": at,
        "created_at": at,
        "updated_at": at,
    }


_COLUMNS = tuple(_item("x", datetime.now(UTC)))
_INSERT = Direct(insert(work_items), _COLUMNS)
_READ = Direct(select(work_items).where(work_items.c.work_id == bindparam("w")))
_SET_STATUS = Direct(
    update(work_items).where(work_items.c.work_id == bindparam("w")).values(status=bindparam("s"))
)


def test_a_row_written_directly_reads_back_as_one_written_by_sqlalchemy(store: EventStore) -> None:
    # Not UTC: the column type's own bind processor must turn it into the same instant.
    at = datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=timezone(timedelta(hours=-5)))
    with store.transaction() as tx:
        _INSERT.run(tx.conn, _item("direct", at))
        tx.conn.execute(insert(work_items), _item("core", at))
    with store.transaction() as tx:
        direct = _READ.rows(tx.conn, {"w": "direct"})
        core = _READ.rows(tx.conn, {"w": "core"})
        by_sqlalchemy = tx.conn.execute(select(work_items).order_by(work_items.c.work_id)).all()
    assert len(direct) == len(core) == 1
    assert {**direct[0], "work_id": "", "ref": ""} == {**core[0], "work_id": "", "ref": ""}
    assert direct[0]["available_at"] == at and direct[0]["available_at"].tzinfo is not None
    assert [dict(r._mapping)["created_at"] for r in by_sqlalchemy] == [at, at]


def test_listeners_see_each_direct_statement_and_rowcount_is_the_driver_s(
    store: EventStore,
) -> None:
    at = datetime.now(UTC)
    with statements(store.engine) as seen, store.transaction() as tx:
        _INSERT.run(tx.conn, _item("a", at))
        changed = _SET_STATUS.run(tx.conn, {"w": "a", "s": "done"})
        missing = _SET_STATUS.run(tx.conn, {"w": "nobody", "s": "done"})
    assert [s.split()[0] for s in seen] == ["INSERT", "UPDATE", "UPDATE"]
    assert (changed, missing) == (1, 0)


def test_a_unique_clash_is_sqlalchemy_s_integrity_error_and_rolls_back(store: EventStore) -> None:
    at = datetime.now(UTC)
    with pytest.raises(IntegrityError), store.transaction() as tx:
        _INSERT.run(tx.conn, _item("same", at))
        _INSERT.run(tx.conn, _item("same", at))
    with store.reading() as conn:
        assert conn.execute(select(work_items)).all() == []


def test_a_direct_statement_outside_a_transaction_is_refused(store: EventStore) -> None:
    with store.engine.connect() as conn, pytest.raises(RuntimeError, match="transaction"):
        _READ.rows(conn, {"w": "x"})


_SET_STATUS_RETURNING = Direct(
    update(work_items)
    .where(work_items.c.work_id == bindparam("w"))
    .values(status=bindparam("s"))
    .returning(work_items.c.work_id, work_items.c.status)
)


def test_rows_of_a_statement_that_returns_none_are_none_and_of_a_returning_its_rows(
    store: EventStore,
) -> None:
    # Whether a statement returns rows comes from the statement, not from the cursor: an UPDATE
    # reads as no rows, an UPDATE ... RETURNING as the rows it changed (none when it changed
    # none).
    at = datetime.now(UTC)
    with store.transaction() as tx:
        _INSERT.run(tx.conn, _item("a", at))
        plain = _SET_STATUS.rows(tx.conn, {"w": "a", "s": "claimed"})
        returned = _SET_STATUS_RETURNING.rows(tx.conn, {"w": "a", "s": "done"})
        nothing = _SET_STATUS_RETURNING.rows(tx.conn, {"w": "nobody", "s": "done"})
        read = _READ.rows(tx.conn, {"w": "a"})
    assert plain == []
    assert returned == [{"work_id": "a", "status": "done"}]
    assert nothing == []
    assert [row["status"] for row in read] == ["done"]
