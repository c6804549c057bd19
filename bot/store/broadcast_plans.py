"""Recording a broadcast's plan: its `broadcast.created` and one `broadcast.planned` per
recipient appended to its new stream in one transaction, in a constant number of statements.

A plan of 10,000 recipients is 10,001 events and 10,001 new projection rows. `append` would
read each recipient's row first (a statement per row); none can exist (the stream is new and
locked, and a recipient row is keyed by the broadcast's fresh id), so they are taken as absent
and written with one statement per kind of write (`Transaction.append_batch`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.event_store import ConcurrencyError, EventStore
from bot.store.event_types.broadcasts import BroadcastCreated, BroadcastPlanned, broadcast_stream
from bot.store.events import EventData, NewEvent
from bot.store.projections.broadcast_recipients import recipient_id


def record_plan(
    store: EventStore,
    created: BroadcastCreated,
    planned: Sequence[BroadcastPlanned],
    meta: dict[str, str],
) -> None:
    """Append the broadcast and its recipients atomically; refused (ConcurrencyError) if the
    broadcast's stream exists already."""
    stream = broadcast_stream(created.broadcast_id)
    recipients = next(p for p in store.projections if p.name == "broadcast_recipients")
    events: list[NewEvent | EventData] = [NewEvent(created, meta=meta)]
    events += [NewEvent(p, meta=meta) for p in planned]
    with store.transaction() as tx:
        tx.lock(stream)
        if tx.version(stream) != 0:
            raise ConcurrencyError(stream, 0, tx.version(stream))
        for p in planned:
            tx._adopt_row(recipients, recipient_id(p.broadcast_id, p.participant_id), None)
        tx.append_batch([(stream, events, None)])
