"""Named reads of the outbox for status callbacks: the row a delivery report is about."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from bot.store.event_store import Transaction
from bot.store.schema import outbox


def reported_outbox_row(tx: Transaction, outbox_id: str | None, sid: str) -> dict[str, Any] | None:
    """The outbox row a callback reports on, in `tx`: by the outbox_id we put in the
    StatusCallback URL, else by the MessageSid Twilio gave when we sent it."""
    for column, value in ((outbox.c.outbox_id, outbox_id), (outbox.c.provider_sid, sid)):
        if value:
            row = tx.conn.execute(select(outbox).where(column == value)).first()
            if row:
                return dict(row._mapping)
    return None
