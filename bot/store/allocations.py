"""Named reads of the `allocations` projection, and the lock that makes a study's allocations
one at a time (each draws from the history of those before it)."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import Connection, select, text

from bot.store.schema import allocations


def serialise_study(conn: Connection, study: str) -> None:
    """Hold the study's allocation lock until the transaction ends. PostgreSQL: a
    transaction-level advisory lock keyed by the study; SQLite: every write transaction
    already runs alone (BEGIN IMMEDIATE), so there is nothing more to take."""
    if conn.dialect.name != "postgresql":
        return
    digest = hashlib.sha256(f"tandem study allocation:{study}".encode()).digest()
    key = int.from_bytes(digest[:8], "big", signed=True)
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def sequence_counts(conn: Connection, study: str) -> dict[tuple[int, str, str, str], int]:
    """How many participants each (stage, first arm, stratum, arm) of `study` holds: a
    stage-2 allocation's first arm names its sequence (`s2/<first arm>`); stage 1's is ""."""
    query = select(
        allocations.c.stage, allocations.c.first_arm, allocations.c.stratum, allocations.c.arm
    ).where(allocations.c.study == study)
    counts: dict[tuple[int, str, str, str], int] = {}
    for stage, first, stratum, arm in conn.execute(query):
        key = (stage, (first or "") if stage != 1 else "", stratum, arm)
        counts[key] = counts.get(key, 0) + 1
    return counts


def study_allocations(conn: Connection, study: str) -> list[dict[str, Any]]:
    """Every allocation of `study`, in the order made (stage 1 and 2 together)."""
    query = select(allocations).where(allocations.c.study == study).order_by(allocations.c.seq)
    return [dict(row._mapping) for row in conn.execute(query)]


def arm_counts(conn: Connection, study: str) -> dict[tuple[int, str, str], int]:
    """How many participants each (stage, stratum, arm) of `study` holds."""
    query = select(allocations.c.stage, allocations.c.stratum, allocations.c.arm).where(
        allocations.c.study == study
    )
    counts: dict[tuple[int, str, str], int] = {}
    for stage, stratum, arm in conn.execute(query):
        counts[(stage, stratum, arm)] = counts.get((stage, stratum, arm), 0) + 1
    return counts
