"""The store's part of erasing a participant: destroy their data key, drop their phone's hash,
rebuild the projection rows their events feed (so that no table keeps the plaintext), and make
sure the database files hold none of it either.

Generic over projections: every row any projection keys by one of the participant's events is
folded again from their (now `[erased]`) events, so a projection added later is covered without
changes here.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, select, text
from sqlalchemy.exc import DBAPIError

from bot.store.event_store import EventStore, Transaction
from bot.store.events import REGISTRY, participant_stream
from bot.store.personal import personal_fields
from bot.store.projections import Row
from bot.store.schema import events, participant_phones
from bot.store.sealing import SEALED

log = logging.getLogger(__name__)


@dataclass
class Sealing:
    """How a participant's events are sealed: `sealed` events will read `[erased]`;
    `unsealed` ones hold personal data in plain (recorded before TANDEM_MASTER_KEY was set)."""

    sealed: int
    unsealed: int


def sealing_of(tx: Transaction, participant_id: str) -> Sealing:
    """Count the participant's events with sealed and with plain personal fields."""
    query = select(events.c.event_type, events.c.data).where(
        events.c.stream_id == participant_stream(participant_id)
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
    store = tx.store
    store.sealer.destroy(tx.conn, participant_id, now)
    tx.conn.execute(
        delete(participant_phones).where(participant_phones.c.participant_id == participant_id)
    )
    stream = tx.load(participant_stream(participant_id))  # opens as `[erased]` from here on
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
    files. SQLite: VACUUM rewrites every page (no freed cell keeps old text) and a TRUNCATE
    checkpoint empties the WAL. PostgreSQL: VACUUM the tables so dead row versions go (needs
    the table owner; otherwise autovacuum does it later, which docs/operations.md says)."""
    engine: Engine = store.engine
    if engine.dialect.name == "sqlite":
        try:
            with engine.connect() as conn:
                raw = conn.connection.driver_connection
                assert raw is not None  # an open Connection holds its driver's
                raw.execute("PRAGMA secure_delete=ON")
                raw.execute("VACUUM")
                busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as exc:  # the erasure stands; the files wait for the next VACUUM
            log.warning("after an erasure the database could not be vacuumed (%s)", type(exc))
            return {"vacuumed": False, "wal_truncated": False}
        return {"vacuumed": True, "wal_truncated": not busy}
    vacuumed, skipped = [], []
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table, owned in _tables(conn):
            if not owned:  # the app role: autovacuum removes the dead row versions later
                skipped.append(table)
                continue
            try:
                conn.execute(text(f'VACUUM "{table}"'))
                vacuumed.append(table)
            except DBAPIError as exc:
                log.warning("could not VACUUM %s after an erasure (%s)", table, type(exc.orig))
                skipped.append(table)
    return {"vacuumed": not skipped, "tables": vacuumed, "skipped": skipped}


def _tables(conn: Any) -> list[tuple[str, bool]]:
    query = text(
        "SELECT tablename, tableowner = current_user FROM pg_tables "
        "WHERE schemaname = current_schema() ORDER BY tablename"
    )
    return [(r[0], bool(r[1])) for r in conn.execute(query)]
