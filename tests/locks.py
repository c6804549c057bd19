"""PostgreSQL row locks held by a test's own session, and a look at who waits for one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text


@contextmanager
def participant_row_locked(engine: Engine, participant_id: str) -> Iterator[None]:
    """The participant's row held FOR UPDATE by another session (the lock every append to
    their stream takes) until the block ends; let go without a change."""
    with engine.connect() as holder:
        holder.begin()
        holder.execute(
            text("SELECT 1 FROM participants WHERE participant_id = :p FOR UPDATE"),
            {"p": participant_id},
        )
        try:
            yield
        finally:
            holder.rollback()


def sessions_waiting_on_a_lock(engine: Engine) -> int:
    """How many sessions of the engine's database wait on a lock now (pg_stat_activity)."""
    with engine.connect() as conn:
        query = (
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        return int(conn.execute(text(query)).scalar_one())
