"""Benchmark durable timers: start-to-armed time for many pending timers, and firing lateness.

    python bench/timers.py                       # SQLite (temporary files)
    python bench/timers.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/postgres

1. A fresh process (interpreter start, imports, leadership, load, one APScheduler job per
   timer) until every pending timer is armed, with 10,000 and 100,000 pending timers.
2. Lateness from due time to `timer.fired` recorded, for 1,000 timers due within the same minute
   (and, harsher, 1,000 due in the same second), fired by the real scheduler on the wall clock.
Prints figures; never pass/fail.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.core.clock import SystemClock  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.store.engine import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.events import participant_stream  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from bot.store.schema import events, timers  # noqa: E402
from bot.timers import one_shot  # noqa: E402
from tests.factories import enrolled  # noqa: E402

PER_PARTICIPANT = 100


@contextmanager
def fresh_database(postgres_admin: str | None) -> Iterator[str]:
    """A new, migrated database (a temporary SQLite file, or a PostgreSQL database)."""
    if postgres_admin is None:
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{folder}/bench.db"
            _migrate(url)
            yield url
        return
    name = f"tandem_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_admin, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_admin).set(database=name).render_as_string(hide_password=False)
    try:
        _migrate(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _migrate(url: str) -> None:
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()


def schedule(url: str, count: int, first: datetime, spread: timedelta) -> float:
    """Write `count` pending timers through the event store; returns seconds taken."""
    store = EventStore(make_engine(url), clock=SystemClock())
    began = time.perf_counter()
    written = 0
    people = 0
    while written < count:
        data = enrolled(phone=f"+1415{people:07d}", timezone="UTC")
        person = {"participant_id": data.participant_id, "timezone": "UTC"}
        batch = [data]
        for _ in range(min(PER_PARTICIPANT, count - written)):
            due = first + spread * (written / count)
            batch.append(one_shot.scheduled(person, "at", due, payload={"text": "bench"}))
            written += 1
        store.append(participant_stream(data.participant_id), batch)
        people += 1
    store.engine.dispose()
    return time.perf_counter() - began


def arm_child(url: str) -> None:
    """In the child process: lead, arm every pending timer, print when, and leave."""
    from bot.timers.leadership import leadership_for
    from bot.timers.scheduler import Scheduler

    settings = load_settings({"DATABASE_URL": url}, env_file=None)
    services = build_services(settings, clock=SystemClock())
    leadership = leadership_for(services.store.engine, services.clock, timedelta(seconds=30))
    assert leadership.acquire()
    began = time.perf_counter()
    scheduler = Scheduler(services, quiet_hours=None)
    scheduler.start()
    armed_at = time.time()
    line = {"armed": scheduler.armed, "at": armed_at, "arm_seconds": time.perf_counter() - began}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    scheduler.stop()
    leadership.release()
    services.close()


def time_to_armed(url: str) -> dict[str, float]:
    spawned = time.time()
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--arm-child", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    line = json.loads(out.stdout.strip().splitlines()[-1])
    return {"armed": line["armed"], "total": line["at"] - spawned, "arm": line["arm_seconds"]}


def lateness(url: str, count: int, spread: timedelta, lead: timedelta) -> list[float]:
    """Seconds from due to `timer.fired` recorded, for `count` timers due over `spread`."""
    from bot.timers.scheduler import run_forever

    first = datetime.now(UTC) + lead
    schedule(url, count, first, spread)
    settings = load_settings({"DATABASE_URL": url}, env_file=None)
    services = build_services(settings, clock=SystemClock())
    stop = threading.Event()
    runner = threading.Thread(target=run_forever, args=(services, stop), daemon=True)
    runner.start()
    deadline = time.monotonic() + lead.total_seconds() + spread.total_seconds() + 120
    try:
        while time.monotonic() < deadline:
            with services.store.reading() as conn:
                left = conn.execute(
                    select(timers.c.timer_id).where(timers.c.status == "scheduled").limit(1)
                ).first()
            if left is None:
                break
            time.sleep(0.2)
        with services.store.reading() as conn:
            due = dict(conn.execute(select(timers.c.timer_id, timers.c.due_at)).all())
            fired = conn.execute(
                select(events.c.data, events.c.recorded_at).where(
                    events.c.event_type == "timer.fired"
                )
            ).all()
    finally:
        stop.set()
        runner.join(timeout=30)
        services.close()
    return [(row.recorded_at - due[row.data["timer_id"]]).total_seconds() for row in fired]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def run(label: str, postgres_admin: str | None, sizes: list[int], burst: int) -> None:
    print(f"== {label}")
    far = datetime.now(UTC) + timedelta(days=30)
    for size in sizes:
        with fresh_database(postgres_admin) as url:
            wrote = schedule(url, size, far, timedelta(days=10))
            got = time_to_armed(url)
            print(
                f"{size:>7} pending: process start -> all armed {got['total']:.2f} s "
                f"(load + arm {got['arm']:.2f} s; {got['armed']} armed; writing them took "
                f"{wrote:.1f} s)"
            )
    for what, spread in (("the same minute", timedelta(minutes=1)), ("the same second", None)):
        with fresh_database(postgres_admin) as url:
            late = lateness(url, burst, spread or timedelta(0), timedelta(seconds=15))
            p50, p99 = percentile(late, 50), percentile(late, 99)
            print(
                f"{len(late):>7} fired, due within {what}: lateness p50 {p50:.3f} s, "
                f"p99 {p99:.3f} s, max {max(late):.3f} s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="ADMIN_URL", help="also run on PostgreSQL")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--arm-child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm_child:
        arm_child(args.arm_child)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    run("SQLite", None, sizes, args.burst)
    if args.postgres:
        run("PostgreSQL", args.postgres, sizes, args.burst)


if __name__ == "__main__":
    main()
