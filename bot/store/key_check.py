"""Keys checked at start: the database keeps the check value of the master key its data is
sealed under (`key_checks`), and every process that opens the store compares its
TANDEM_MASTER_KEY with it, refusing to start on another key, or on none when sealed data is
there. A wrong key otherwise went unnoticed: participants' texts were then not recognised and
stored unsealed, out of erasure's reach.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Engine, inspect, select

from bot.store.errors import ConstraintRefused
from bot.store.schema import data_keys, key_checks
from bot.store.sealing import Sealer

MASTER = "master"


class KeyCheckFailed(Exception):
    """The configured master key is not the database's (the message names both key ids)."""


def verify(engine: Engine, sealer: Sealer, now: datetime) -> None:
    """Refuse (`KeyCheckFailed`) a master key that is not the database's, or none where data
    is sealed; record the check value at the first start with a key. Nothing to check on a
    database not migrated yet (`tandem chat` and `serve --migrate` migrate after start)."""
    if not inspect(engine).has_table(key_checks.name):
        return
    for _attempt in range(2):  # two processes may record the first check at once
        with engine.begin() as conn:
            row = conn.execute(select(key_checks).where(key_checks.c.name == MASTER)).first()
            wrapped = {
                r[0] or "?"
                for r in conn.execute(
                    select(data_keys.c.master_key_id)
                    .where(data_keys.c.wrapped.isnot(None))
                    .distinct()
                    .limit(10)
                )
            }
            stored = {row.key_id} if row is not None else wrapped
            if sealer.check_value is None:
                if stored:
                    raise KeyCheckFailed(
                        "TANDEM_MASTER_KEY is not set and the database holds data sealed under "
                        f"master key {', '.join(sorted(stored))}: set that key"
                    )
                return
            if row is not None:
                if row.check_value != sealer.check_value:
                    raise KeyCheckFailed(_mismatch(sealer, {row.key_id}))
                return
            if wrapped - {sealer.key_id}:
                raise KeyCheckFailed(_mismatch(sealer, wrapped - {sealer.key_id}))
            try:
                with conn.begin_nested():
                    conn.execute(key_checks.insert().values(_row(sealer, now)))
            except ConstraintRefused:
                continue
            return


def record(conn: Connection, sealer: Sealer, now: datetime) -> None:
    """Make `sealer`'s key the database's (key rotation, as the owner, in its transaction)."""
    conn.execute(key_checks.delete().where(key_checks.c.name == MASTER))
    conn.execute(key_checks.insert().values(_row(sealer, now)))


def _row(sealer: Sealer, now: datetime) -> dict[str, object]:
    return {
        "name": MASTER,
        "key_id": sealer.key_id,
        "check_value": sealer.check_value,
        "created_at": now,
    }


def _mismatch(sealer: Sealer, ids: set[str]) -> str:
    return (
        f"TANDEM_MASTER_KEY is master key {sealer.key_id}, but the database's data is sealed "
        f"under master key {', '.join(sorted(ids))}: set that key (or `tandem keys rotate`)"
    )
