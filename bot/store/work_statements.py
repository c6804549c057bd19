"""The work queue's statements, built once: heads of participants' queues, the turn's reads.

Building a statement costs more than a short query's execution, so each is built at import;
those of every turn run on the driver's cursor (bot.store.direct). Private to the store: the
worker reaches them through `bot.store.work_queue.StoreWorkQueue`.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, delete, exists, func, select

from bot.store.direct import Direct
from bot.store.leases import release
from bot.store.schema import leases, participants, takeovers, timers, work_items

# A participant whose conversation a staff member took over (bot.console): their items wait,
# pending, until the hand-back (`takeover.ended`).
NOT_TAKEN_OVER = ~exists().where(
    and_(
        takeovers.c.participant_id == work_items.c.participant_id,
        takeovers.c.status == "active",
    )
)


@functools.cache
def heads(candidates: int) -> Direct:
    """The due-or-not head items (the first pending item by seq) of up to `candidates`
    participants not taken over, oldest first, in one statement."""
    first = (
        select(work_items.c.participant_id, func.min(work_items.c.seq).label("first"))
        .where(and_(work_items.c.status == "pending", NOT_TAKEN_OVER))
        .group_by(work_items.c.participant_id)
        .order_by("first")
        .limit(candidates)
        .subquery()
    )
    query = (
        select(work_items)
        .join(
            first,
            and_(
                work_items.c.participant_id == first.c.participant_id,
                work_items.c.seq == first.c.first,
            ),
        )
        .where(work_items.c.status == "pending")
        .order_by(work_items.c.seq)
    )
    return Direct(query)


def _first_pending(participant_id: Any) -> Select[Any]:
    """The first pending item (by seq) of the participant `participant_id` names, unless their
    conversation is taken over."""
    return (
        select(work_items)
        .where(
            and_(
                work_items.c.participant_id == participant_id,
                work_items.c.status == "pending",
                NOT_TAKEN_OVER,
            )
        )
        .order_by(work_items.c.seq)
        .limit(1)
    )


# Participant `pid`'s head item.
_HEAD = _first_pending(bindparam("pid"))
# The participant row, with the id of their head item (as `read_head` finds it) beside it.
PARTICIPANT_AND_HEAD = Direct(
    select(
        participants,
        _first_pending(participants.c.participant_id)
        .with_only_columns(work_items.c.work_id)
        .scalar_subquery()
        .label("head_work_id"),
    ).where(participants.c.participant_id == bindparam("pid"))
)
TIMER = Direct(select(timers).where(timers.c.timer_id == bindparam("timer_id")))
_READ_HEAD = Direct(_HEAD)


def read_head(conn: Connection, participant_id: str) -> dict[str, Any] | None:
    """A participant's first pending item, unless their conversation is taken over."""
    rows = _READ_HEAD.rows(conn, {"pid": participant_id})
    return rows[0] if rows else None


def _next_query() -> Select[Any]:
    """`read_head` of participant `pid` that also deletes lease `name` of `holder` unless
    that head item is due at `now`: one statement (a data-modifying CTE, PostgreSQL's)."""
    head = _HEAD.cte("head")
    due = select(head.c.work_id).where(head.c.available_at <= bindparam("now")).exists()
    gone = (
        delete(leases)
        .where(
            and_(
                leases.c.name == bindparam("name"),
                leases.c.holder == bindparam("holder"),
                ~due,
            )
        )
        .returning(leases.c.name)
        .cte("gone")
    )
    return select(head).add_cte(gone)


NEXT_OR_RELEASE = Direct(_next_query())


def next_or_release(
    conn: Connection, participant_id: str, lease: str, holder: str, now: datetime
) -> dict[str, Any] | None:
    """The participant's head item, and the lease released unless that item is due at `now`
    (in the caller's transaction): on PostgreSQL in one statement, elsewhere in two."""
    if conn.dialect.name != "postgresql":
        head = read_head(conn, participant_id)
        if head is None or head["available_at"] > now:
            release(conn, lease, holder)
        return head
    params = {"pid": participant_id, "name": lease, "holder": holder, "now": now}
    rows = NEXT_OR_RELEASE.rows(conn, params)
    return rows[0] if rows else None
