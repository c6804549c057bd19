"""A new SQLite database, and the write-ahead log beside it, can be read by their owner only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sqlalchemy import text

from bot.store.database import make_engine


def test_a_new_sqlite_database_and_its_wal_are_created_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "tandem.db"
    previous = os.umask(0o022)  # the usual umask, which leaves files readable by all
    try:
        engine = make_engine(f"sqlite:///{path}")
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (1)"))
            modes = {
                p.name: stat.S_IMODE(p.stat().st_mode)
                for p in tmp_path.iterdir()
                if p.name in {"tandem.db", "tandem.db-wal", "tandem.db-shm"}
            }
        engine.dispose()
    finally:
        os.umask(previous)

    assert set(modes) >= {"tandem.db", "tandem.db-wal"}
    assert modes == dict.fromkeys(modes, 0o600)
