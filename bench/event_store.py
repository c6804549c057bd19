"""Benchmark the event store: appends/s (1 and 4 writers) and loading+folding 10,000 events.

Beside each append rate it prints the engine's ceiling for the same transaction shape: a bare
single-row INSERT + COMMIT loop through the same driver, so the ratio shows the store's overhead.
Run by hand: `python bench/event_store.py [--seconds 5] [--engines sqlite,postgresql]`.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sqlite3
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench.common import database  # noqa: E402
from bot.store.engine import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.event_types import MessageReceived  # noqa: E402
from bot.store.events import participant_stream  # noqa: E402
from bot.store.projections.participants import fold  # noqa: E402
from tests.factories import enrolled  # noqa: E402


def _message(n: int) -> MessageReceived:
    return MessageReceived(
        message_sid=f"SM{n}",
        from_address="+14155552671",
        to_address="+15005550006",
        channel="sms",
        body=f"message {n}",
    )


def _append_worker(url: str, seconds: float, queue: mp.Queue) -> None:
    store = EventStore(make_engine(url))
    first = enrolled(phone=f"+1415555{uuid.uuid4().int % 10000:04d}")
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    count, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        store.append(stream, [_message(count)])
        count += 1
    store.engine.dispose()
    queue.put(count)


def _ceiling_worker(url: str, seconds: float, queue: mp.Queue) -> None:
    """A bare INSERT + COMMIT loop through the same driver (sqlite3 / psycopg)."""
    parsed = make_url(url)
    count, deadline = 0, time.perf_counter() + seconds
    if parsed.get_backend_name() == "sqlite":
        conn = sqlite3.connect(parsed.database, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        while time.perf_counter() < deadline:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO bench_ceiling (payload) VALUES (?)", ('{"n": 1}',))
            conn.execute("COMMIT")
            count += 1
    else:
        conn = psycopg.connect(parsed.set(drivername="postgresql").render_as_string(False))
        while time.perf_counter() < deadline:
            conn.execute("INSERT INTO bench_ceiling (payload) VALUES (%s)", ('{"n": 1}',))
            conn.commit()
            count += 1
    conn.close()
    queue.put(count)


def _rate(target, url: str, writers: int, seconds: float) -> float:  # noqa: ANN001
    queue: mp.Queue = mp.Queue()
    procs = [mp.Process(target=target, args=(url, seconds, queue)) for _ in range(writers)]
    for p in procs:
        p.start()
    total = sum(queue.get() for _ in procs)
    for p in procs:
        p.join()
    return total / seconds


def _make_ceiling_table(url: str) -> None:
    engine = make_engine(url)
    serial = "INTEGER PRIMARY KEY" if engine.dialect.name == "sqlite" else "BIGSERIAL PRIMARY KEY"
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE bench_ceiling (id {serial}, payload TEXT NOT NULL)")
    engine.dispose()


def _load_and_fold(url: str, events: int) -> tuple[float, float]:
    store = EventStore(make_engine(url))
    first = enrolled(phone="+442071838750")
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    batch = 500
    for start in range(0, events - 1, batch):
        store.append(stream, [_message(n) for n in range(start, min(start + batch, events - 1))])
    timings = []
    for _ in range(5):
        began = time.perf_counter()
        row = fold(store.load(stream))
        timings.append(time.perf_counter() - began)
    assert row is not None and row["version"] == events
    store.engine.dispose()
    return min(timings), sorted(timings)[len(timings) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each rate run")
    parser.add_argument("--engines", default="sqlite,postgresql")
    args = parser.parse_args()
    print(f"{'engine':<11}{'measure':<44}{'tandem':>12}{'ceiling':>12}{'ratio':>8}")
    for kind in args.engines.split(","):
        for writers in (1, 4):
            with database(kind) as url:
                _make_ceiling_table(url)
                ours = _rate(_append_worker, url, writers, args.seconds)
                ceiling = _rate(_ceiling_worker, url, writers, args.seconds)
            label = f"appends/s, single-event tx, {writers} writer(s)"
            print(f"{kind:<11}{label:<44}{ours:>12,.0f}{ceiling:>12,.0f}{ours / ceiling:>8.2f}")
        with database(kind) as url:
            best, median = _load_and_fold(url, 10_000)
        label = "load+fold 10,000 events (best / median, ms)"
        print(f"{kind:<11}{label:<44}{best * 1000:>12.1f}{median * 1000:>12.1f}")


if __name__ == "__main__":
    main()
