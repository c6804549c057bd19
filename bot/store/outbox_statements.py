"""The outbox's claim statements, built once: the "due" condition, the participants' rows, releases.

Private to the store: the dispatcher (bot.channel.dispatcher) reaches them through
`bot.store.outbox_claims.StoreOutbox`.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, any_, bindparam, exists, or_, select, true, update
from sqlalchemy.dialects.postgresql import ARRAY

from bot.store.direct import Direct
from bot.store.projections.outbox import UNSENT
from bot.store.schema import outbox, participants

EARLIER = outbox.alias("earlier")
# Statements a send runs inside its write transactions, built once (as `due_condition`): the
# participants' rows locked in key order, and a dispatcher's claims given up.
READ_PARTICIPANTS = select(participants).where(
    participants.c.participant_id.in_(bindparam("pids", expanding=True))
)
LOCK_PARTICIPANTS = READ_PARTICIPANTS.order_by(participants.c.participant_id).with_for_update()
RELEASE = (
    update(outbox)
    .where(
        outbox.c.outbox_id.in_(bindparam("ids", expanding=True)),
        outbox.c.claimed_by == bindparam("holder"),
    )
    .values(claimed_by=None, claimed_until=None)
)
# PostgreSQL: RELEASE with its ids as one array, for the driver's cursor (bot.store.flight).
RELEASE_ALL = Direct(
    update(outbox)
    .where(
        outbox.c.outbox_id == any_(bindparam("ids", type_=ARRAY(outbox.c.outbox_id.type))),
        outbox.c.claimed_by == bindparam("holder"),
    )
    .values(claimed_by=None, claimed_until=None)
)


def due_condition(*, template: bool) -> ColumnElement[bool]:
    """Rows that are the head of their lane, unclaimed (or abandoned), and due: built once per
    dispatcher, its times bound at each execution (`StoreOutbox.due_params`). Built anew for
    every query it cost about 1 ms of CPU (the alias's columns, the operators), three times a
    send and once inside the claim's write transaction, where on SQLite every webhook waits.
    With `template`, a held row goes out as the template, so a closed window holds none."""
    at = bindparam("due_now", type_=outbox.c.claimed_until.type)
    reconciled_by = bindparam("reconciled_by", type_=outbox.c.updated_at.type)
    last_inbound = (
        select(participants.c.last_inbound_at)
        .where(participants.c.participant_id == outbox.c.participant_id)
        .scalar_subquery()
    )
    window_from = bindparam("window_from", type_=participants.c.last_inbound_at.type)
    window_open: ColumnElement[bool] = true() if template else last_inbound > window_from
    earlier = EARLIER  # one alias, its columns set up once
    return and_(
        outbox.c.status.in_(UNSENT),
        or_(outbox.c.claimed_until.is_(None), outbox.c.claimed_until <= at),
        or_(
            and_(outbox.c.status == "pending", outbox.c.next_attempt_at <= at),
            and_(outbox.c.status == "unknown", outbox.c.updated_at <= reconciled_by),
            and_(outbox.c.status == "deferred", window_open),
            outbox.c.claimed_by.is_not(None),  # a claim that expired with no outcome
        ),
        ~exists().where(
            earlier.c.stream_id == outbox.c.stream_id,
            earlier.c.to_address == outbox.c.to_address,
            earlier.c.position < outbox.c.position,
            earlier.c.status.in_(UNSENT),
        ),
    )
