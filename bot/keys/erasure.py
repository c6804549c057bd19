"""The store's part of erasing a participant: destroy their data key, drop their phone's hash,
rebuild the projection rows their events feed (so that no table keeps the plaintext), and make
sure the database files hold none of it either.

Generic over projections: every row any projection keys by one of the participant's events is
folded again from their (now `[erased]`) events, so a projection added later is covered without
changes here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select

from bot.store import maintenance
from bot.store.event_store import EventStore, Transaction
from bot.store.events import REGISTRY, participant_stream, sender_stream
from bot.store.personal import personal_fields
from bot.store.projections import Row
from bot.store.schema import events, participant_phones, sender_phones
from bot.store.sealing import SEALED


@dataclass
class Sealing:
    """How a participant's events are sealed: `sealed` events will read `[erased]`;
    `unsealed` ones hold personal data in plain (recorded before TANDEM_MASTER_KEY was set)."""

    sealed: int
    unsealed: int


def sealing_of(tx: Transaction, participant_id: str, stream_id: str | None = None) -> Sealing:
    """Count the participant's events (or `stream_id`'s) with sealed and with plain personal
    fields."""
    query = select(events.c.event_type, events.c.data).where(
        events.c.stream_id == (stream_id or participant_stream(participant_id))
    )
    sealed = unsealed = 0
    for event_type, data in tx.conn.execute(query):
        if SEALED in data:
            sealed += 1
            continue
        model = REGISTRY.get(event_type)
        if model is not None and any(data.get(n) for n in personal_fields(model)):
            unsealed += 1
    return Sealing(sealed, unsealed)


def shred(tx: Transaction, participant_id: str, now: datetime) -> int:
    """Destroy the participant's data key and phone hash, then rebuild every projection row
    their events feed; returns the rows rewritten. Runs inside the erasing transaction."""
    tx.store.sealer.destroy(tx.conn, participant_id, now)
    tx.conn.execute(
        delete(participant_phones).where(participant_phones.c.participant_id == participant_id)
    )
    return rebuild(tx, participant_stream(participant_id))


def shred_sender(tx: Transaction, sender_id: str, now: datetime) -> int:
    """`shred` for an unknown sender: their data key and their number's hash destroyed, the
    projection rows their events feed (an unsent notice's outbox row) rebuilt."""
    tx.store.sealer.destroy(tx.conn, sender_id, now)
    tx.conn.execute(delete(sender_phones).where(sender_phones.c.sender_id == sender_id))
    return rebuild(tx, sender_stream(sender_id))


def rebuild(tx: Transaction, stream_id: str) -> int:
    """Fold again every projection row `stream_id`'s events feed, now that they open as
    `[erased]`; returns the rows rewritten."""
    store = tx.store
    stream = tx.load(stream_id)  # opens as `[erased]` from here on
    rebuilt: dict[tuple[str, str], Row] = {}
    for projection in store.projections:
        for ev in stream:
            key = projection.key(ev)
            if key is None:
                continue
            after = projection.apply(rebuilt.get((projection.name, key)), ev)
            if after is not None:
                rebuilt[(projection.name, key)] = after
    written = 0
    by_name = {p.name: p for p in store.projections}
    for (name, key), after in rebuilt.items():
        projection = by_name[name]
        before = tx.row(projection, key)
        if before is None:
            continue
        # Only the columns the fold owns, and only those whose value changed: a column another
        # stream's events moved (an alert acknowledged elsewhere) keeps its stored value unless
        # the participant's data made it.
        changed = {c: after.get(c) for c in projection.columns if before.get(c) != after.get(c)}
        if changed:
            tx._write(projection, key, before, {**before, **changed})
            written += 1
    return written


def scrub_files(store: EventStore) -> dict[str, Any]:
    """After the erasing transaction: leave no copy of what was overwritten in the database's
    files, as far as the connected role may (bot.store.maintenance). As the PostgreSQL app
    role nothing is rewritten here: `pending_maintenance` says the destroyed key's old row
    version stays in `data_keys`' pages until the next `tandem maintenance` (docs/operations.md)."""
    done = maintenance.scrub(store.engine)
    return {
        "vacuumed": done.vacuumed,
        "wal_truncated": done.wal_truncated,
        "tables": done.tables + done.rewritten,
        "skipped": done.skipped,
        "pending_maintenance": "data_keys" in done.skipped,
    }
