"""Benchmark the event store's append beside a SQLAlchemy Core INSERT and the raw driver.

Each case appends one `message.received` row per transaction to an existing stream, for
`--seconds` per round, and the cases alternate round by round (Tandem, Core, raw, Tandem, ...):
- tandem: `EventStore.append` (lock the stream's head, insert, project, commit);
- core: `INSERT` + `COMMIT` of the same row through SQLAlchemy Core on the same engine, into
  `bench_events`, a table of the same columns, constraints and indexes as `events`;
- raw: the same INSERT + COMMIT through the driver itself (sqlite3 / psycopg);
- sealed: `EventStore.append` with a master key, so the message's personal fields (body,
  sender) are sealed with the participant's data key (AES-GCM), as in production.
It prints appends/s (best and median of the rounds), the ratio of the medians, and the SQL
statements one append issues. Run by hand:
`python bench/event_store.py [--seconds 1] [--rounds 5] [--engines sqlite,postgresql]`.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg  # noqa: E402
from sqlalchemy import (  # noqa: E402
    Engine,
    MetaData,
    Table,
    event,
    insert,
)
from sqlalchemy.engine import make_url  # noqa: E402

from bench.common import database  # noqa: E402
from bench.rounds import alternate, best  # noqa: E402
from bot.core.keys import generate_master_key  # noqa: E402
from bot.runtime.bootstrap import register_column_folds  # noqa: E402
from bot.store.database import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.event_types import MessageReceived  # noqa: E402
from bot.store.events import encode, participant_stream  # noqa: E402
from bot.store.schema import events  # noqa: E402
from bot.store.sealing import Sealer  # noqa: E402
from tests.factories import enrolled  # noqa: E402


def _message(n: int) -> MessageReceived:
    return MessageReceived(
        message_sid=f"SM{n}",
        from_address="+14155552671",
        to_address="+15005550006",
        channel="sms",
        body=f"message {n}",
    )


def _bench_table() -> Table:
    """A copy of `events` (its columns, constraints and every index, the partial ones too),
    named apart: the baseline pays for the same index entries as an append."""
    table = events.to_metadata(MetaData(), name="bench_events")
    for named in [*table.indexes, *table.constraints]:  # names are per schema on PostgreSQL
        if isinstance(named.name, str):
            named.name = f"bench_{named.name}"
    return table


def _row(stream: str, version: int) -> dict[str, Any]:
    """The row Tandem writes for one message, as the append builds it."""
    now = datetime.now(UTC)
    return {
        "event_id": str(uuid.uuid4()),
        "stream_id": stream,
        "stream_version": version,
        "event_type": "message.received",
        "schema_version": 1,
        "data": encode(_message(version)),
        "meta": {},
        "idempotency_key": f"SM{uuid.uuid4().hex}",
        "occurred_at": now,
        "recorded_at": now,
    }


def _timed(seconds: float, once: Callable[[], None]) -> Callable[[], float]:
    def run() -> float:
        count, began = 0, time.perf_counter()
        deadline = began + seconds
        while time.perf_counter() < deadline:
            once()
            count += 1
        return count / (time.perf_counter() - began)

    return run


def _tandem(
    engine: Engine, seconds: float, master_key: str | None = None
) -> tuple[Callable[[], float], EventStore, str]:
    register_column_folds()  # the memory's fold, as bootstrap's stores
    store = EventStore(engine, sealer=Sealer(master_key))
    first = enrolled(phone=f"+1415555{uuid.uuid4().int % 10000:04d}")
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    counter = iter(range(10**9))

    def once() -> None:
        message = _message(next(counter))
        store.append(stream, [message], idempotency_key=f"SM{uuid.uuid4().hex}")

    return _timed(seconds, once), store, stream


def _core(engine: Engine, table: Table, seconds: float) -> Callable[[], float]:
    statement, versions = insert(table), iter(range(1, 10**9))

    def once() -> None:
        with engine.begin() as conn:
            conn.execute(statement, _row("participant:core", next(versions)))

    return _timed(seconds, once)


def _raw(url: str, seconds: float) -> tuple[Callable[[], float], Callable[[], None]]:
    parsed, versions = make_url(url), iter(range(1, 10**9))
    columns = [c.name for c in events.columns if c.name != "seq"]
    if parsed.get_backend_name() == "sqlite":
        conn: Any = sqlite3.connect(parsed.database, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        sql = f"INSERT INTO bench_events ({', '.join(columns)}) VALUES ({', '.join('?' * 10)})"

        def once() -> None:
            row = _row("participant:raw", next(versions))
            values = [row[c] for c in columns]
            values[5], values[6] = json.dumps(values[5]), json.dumps(values[6])
            values[8] = values[8].replace(tzinfo=None).isoformat(" ")
            values[9] = values[9].replace(tzinfo=None).isoformat(" ")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(sql, values)
            conn.execute("COMMIT")

    else:
        conn = psycopg.connect(parsed.set(drivername="postgresql").render_as_string(False))
        marks = ", ".join("%s::jsonb" if c in ("data", "meta") else "%s" for c in columns)
        sql = f"INSERT INTO bench_events ({', '.join(columns)}) VALUES ({marks})"

        def once() -> None:
            row = _row("participant:raw", next(versions))
            values = [row[c] for c in columns]
            values[5], values[6] = json.dumps(values[5]), json.dumps(values[6])
            conn.execute(sql, values)
            conn.commit()

    return _timed(seconds, once), conn.close


def statements_per_append(store: EventStore, stream: str) -> list[str]:
    """The SQL statements one append of one message issues (BEGIN and COMMIT included)."""
    seen: list[str] = []

    def record(conn, cursor, statement, *_rest) -> None:  # noqa: ANN001
        seen.append(" ".join(statement.split())[:70])

    def begin(conn) -> None:  # noqa: ANN001
        seen.append("BEGIN")

    def commit(conn) -> None:  # noqa: ANN001
        seen.append("COMMIT")

    listeners = (("before_cursor_execute", record), ("begin", begin), ("commit", commit))
    for name, fn in listeners:
        event.listen(store.engine, name, fn)
    try:
        store.append(stream, [_message(-1)], idempotency_key=f"SM{uuid.uuid4().hex}")
    finally:
        for name, fn in listeners:
            event.remove(store.engine, name, fn)
    # SQLite's BEGIN IMMEDIATE is itself a statement; don't count the begin event twice.
    return [s for s in seen if not (s == "BEGIN" and "BEGIN IMMEDIATE" in seen)]


def _crypto_cost(store: EventStore, stream: str, n: int = 2000) -> tuple[float, float]:
    """Microseconds (median of 5 batches of `n`) to seal and to open one message's payload with
    a cached data key: the encryption's own share of an append and of a read."""
    sealer = store.sealer
    data = encode(_message(0))
    now = datetime.now(UTC)
    with store.reading() as conn:
        sealed, _ = sealer.seal(conn, stream, "e", MessageReceived, data, {}, now, {})
        seal_times, open_times = [], []
        for _ in range(5):
            began = time.perf_counter()
            for _ in range(n):
                sealer.seal(conn, stream, "e", MessageReceived, data, {}, now, {})
            seal_times.append((time.perf_counter() - began) / n * 1e6)
            began = time.perf_counter()
            for _ in range(n):
                sealer.open(conn, stream, "e", "message.received", sealed)
            open_times.append((time.perf_counter() - began) / n * 1e6)
    return sorted(seal_times)[2], sorted(open_times)[2]


def run(kind: str, seconds: float, rounds: int) -> None:
    with database(kind) as url:
        engine = make_engine(url)
        table = _bench_table()
        table.metadata.create_all(engine)
        tandem, store, stream = _tandem(engine, seconds)
        sealed, sealed_store, sealed_stream = _tandem(engine, seconds, generate_master_key())
        core = _core(engine, table, seconds)
        raw, close = _raw(url, seconds)
        for case in (tandem, sealed, core, raw):  # warm-up: connections, statement caches
            _timed(0.2, lambda: None)()
            case()
        cases = [("tandem", tandem), ("sealed", sealed), ("core", core), ("raw", raw)]
        figures = alternate(cases, rounds)
        statements = statements_per_append(store, stream)
        seal_us, open_us = _crypto_cost(sealed_store, sealed_stream)
        close()
        engine.dispose()
    (t_best, t_med), (c_best, c_med), (r_best, r_med) = (
        best(figures[n]) for n in ("tandem", "core", "raw")
    )
    print(
        f"{kind:<11}appends/s best/median  tandem {t_best:>7,.0f} /{t_med:>7,.0f}  "
        f"core {c_best:>7,.0f} /{c_med:>7,.0f}  raw {r_best:>7,.0f} /{r_med:>7,.0f}  "
        f"tandem/core {t_med / c_med:.2f}  tandem/raw {t_med / r_med:.2f}"
    )
    print(f"{kind:<11}one append = {len(statements)} statements: " + " | ".join(statements))
    s_best, s_med = best(figures["sealed"])
    print(
        f"{kind:<11}sealed appends/s best/median {s_best:>7,.0f} /{s_med:>7,.0f}  "
        f"sealed/tandem {s_med / t_med:.2f}  (CPU per message: seal {seal_us:.0f} us, "
        f"open {open_us:.0f} us)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="duration of each round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engines", default="sqlite,postgresql")
    args = parser.parse_args()
    for kind in args.engines.split(","):
        run(kind, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
