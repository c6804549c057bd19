"""Benchmark durable timers: start-to-armed time for many pending timers, and firing lateness.

    python bench/timers.py                       # SQLite (temporary files)
    python bench/timers.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/postgres

1. A fresh process (interpreter start, imports, leadership, load, arming) until every pending
   timer is armed, with 10,000 and 100,000 pending timers, two per participant (a daily prompt
   and its reminder), due evenly over the next 24 hours (`--arm-hours`): the scheduler arms
   those due within its horizon and leaves the rest to its sweeps. Beside it the baseline: a
   fresh process that reads the timers due within the same horizon with one SELECT and gives a
   bare APScheduler a date job each. (A bare APScheduler given a job for every one of 100,000
   timers takes tens of seconds; that is not the baseline.)
2. Lateness from due time to the commit that recorded `timer.fired` (noted by a store listener,
   which runs in the committing thread just after COMMIT; the event's `recorded_at`, stamped
   before its INSERT, would leave out the rest of its batch's transaction and is shown only
   beside it), for 1,000 timers due evenly within the same minute, within the same second,
   and at the same instant, fired by the real scheduler on the wall clock; beside it a bare
   APScheduler firing 1,000 jobs due the same way that only note the time.
Tandem and the baseline alternate (`--rounds`, min and median). Prints figures; never pass/fail.
`--sizes ""` leaves out part 1 and `--cases second` runs only that case of part 2.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.core.clock import SystemClock  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.runtime.bootstrap import build_services, register_column_folds  # noqa: E402
from bot.store.database import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.events import participant_stream  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from bot.store.schema import events, timers  # noqa: E402
from bot.timers import one_shot  # noqa: E402
from tests.factories import enrolled  # noqa: E402


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


def schedule(
    url: str, count: int, first: datetime, spread: timedelta, per_participant: int = 2
) -> float:
    """Write `count` pending timers through the event store, `per_participant` to each
    participant, many participants per transaction; returns seconds taken."""
    register_column_folds()  # the memory's fold, as bootstrap's stores
    store = EventStore(make_engine(url), clock=SystemClock())
    began = time.perf_counter()
    written = people = 0
    while written < count:
        with store.transaction() as tx:
            for _ in range(500):
                if written >= count:
                    break
                data = enrolled(phone=f"+1415{people:07d}", timezone="UTC")
                person = {"participant_id": data.participant_id, "timezone": "UTC"}
                batch = [data]
                for _ in range(min(per_participant, count - written)):
                    due = first + spread * (written / count)
                    batch.append(one_shot.scheduled(person, "at", due, payload={"text": "bench"}))
                    written += 1
                tx.append(participant_stream(data.participant_id), batch)
                people += 1
    store.engine.dispose()
    return time.perf_counter() - began


def _noop(*_args: object) -> None:
    """The baseline's job: a plain function (a builtin such as `print` makes APScheduler's
    argument check several times slower, which would flatter Tandem)."""


def arm_baseline_child(url: str, horizon_seconds: float) -> None:
    """In the child process: the baseline: read the pending timers due within the horizon with
    one SELECT and give a bare APScheduler one date job each."""
    from apscheduler.schedulers.background import BackgroundScheduler

    began = time.perf_counter()
    engine = make_engine(url)
    horizon_end = datetime.now(UTC) + timedelta(seconds=horizon_seconds)
    with engine.connect() as conn:
        rows = conn.execute(
            select(timers.c.timer_id, timers.c.due_at).where(
                timers.c.status == "scheduled", timers.c.due_at <= horizon_end
            )
        ).all()
    scheduler = BackgroundScheduler(timezone=UTC)
    for row in rows:  # added before start: APScheduler arms them in one go
        scheduler.add_job(_noop, "date", run_date=row.due_at, id=row.timer_id)
    scheduler.start(paused=True)
    armed_at = time.time()
    line = {
        "armed": len(rows),
        "jobs": len(rows),
        "horizon": horizon_seconds,
        "at": armed_at,
        "arm_seconds": time.perf_counter() - began,
    }
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    scheduler.shutdown(wait=False)
    engine.dispose()


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
    jobs = getattr(scheduler, "jobs", scheduler.armed)  # before jobs were shared: one a timer
    line = {
        "armed": scheduler.armed,
        "jobs": jobs,
        "horizon": scheduler.horizon.total_seconds(),
        "at": armed_at,
        "arm_seconds": time.perf_counter() - began,
    }
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    scheduler.stop()
    leadership.release()
    services.close()


def time_to_armed(url: str, horizon: float | None = None) -> dict[str, float]:
    """Tandem's start (horizon None), or the baseline's over `horizon` seconds, in a child."""
    spawned = time.time()
    flags = ["--arm-child", url] if horizon is None else ["--arm-baseline", url, str(horizon)]
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    line = json.loads(out.stdout.strip().splitlines()[-1])
    return {**line, "total": line["at"] - spawned, "arm": line["arm_seconds"]}


def lateness(
    url: str, count: int, spread: timedelta, lead: timedelta
) -> tuple[list[float], list[float]]:
    """Seconds from due to the commit of `timer.fired`, and from due to its `recorded_at`, for
    `count` timers due over `spread`."""
    from bot.store.event_types.timers import TimerFired
    from bot.timers.scheduler import run_forever

    first = datetime.now(UTC) + lead
    schedule(url, count, first, spread, per_participant=1)
    settings = load_settings({"DATABASE_URL": url}, env_file=None)
    services = build_services(settings, clock=SystemClock())
    committed: dict[str, datetime] = {}

    def note(recorded: list) -> None:  # after COMMIT, in the committing thread
        at = datetime.now(UTC)
        for event in recorded:
            if isinstance(event.data, TimerFired):
                committed.setdefault(event.data.timer_id, at)

    services.store.listeners.append(note)
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
    to_commit = [(at - due[timer_id]).total_seconds() for timer_id, at in committed.items()]
    to_record = [(row.recorded_at - due[row.data["timer_id"]]).total_seconds() for row in fired]
    return to_commit, to_record


def baseline_lateness(count: int, spread: timedelta, lead: timedelta) -> list[float]:
    """The baseline: a bare APScheduler firing `count` jobs that only note the time."""
    from apscheduler.schedulers.background import BackgroundScheduler

    first = datetime.now(UTC) + lead
    fired: list[float] = []
    done = threading.Event()

    def fire(due: float) -> None:
        fired.append(time.time() - due)
        if len(fired) == count:
            done.set()

    scheduler = BackgroundScheduler(timezone=UTC)
    scheduler.start()
    for n in range(count):
        due = first + spread * (n / count)
        scheduler.add_job(fire, "date", run_date=due, args=(due.timestamp(),))
    done.wait(lead.total_seconds() + spread.total_seconds() + 120)
    scheduler.shutdown(wait=False)
    return fired


SPREADS = {"minute": timedelta(minutes=1), "second": timedelta(seconds=1), "instant": timedelta(0)}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def run(
    label: str,
    postgres_admin: str | None,
    sizes: list[int],
    burst: int,
    rounds: int,
    arm_hours: float,
    cases: Sequence[str] = tuple(SPREADS),
) -> None:
    print(f"== {label}")
    soon = datetime.now(UTC) + timedelta(minutes=1)
    for size in sizes:
        with fresh_database(postgres_admin) as url:
            wrote = schedule(url, size, soon, timedelta(hours=arm_hours))
            got: dict[str, list] = {"tandem": [], "baseline": []}
            for _ in range(rounds):
                got["tandem"].append(time_to_armed(url))
                # The same horizon as the scheduler's, from its own report.
                got["baseline"].append(time_to_armed(url, got["tandem"][-1]["horizon"]))
        for name, runs in got.items():
            totals = [r["total"] for r in runs]
            arms = [r["arm"] for r in runs]
            print(
                f"{size:>7} pending, {name:<8}: process start -> all armed min "
                f"{min(totals):.2f} s, median {statistics.median(totals):.2f} s (load + arm min "
                f"{min(arms):.2f} s, median {statistics.median(arms):.2f} s; "
                f"{runs[-1]['armed']} due within {runs[-1]['horizon']:.0f} s armed, "
                f"{runs[-1]['jobs']} APScheduler jobs)"
            )
        print(
            f"{'':>7} (due over the next {arm_hours:g} h; writing them, 2 per participant, "
            f"took {wrote:.1f} s)"
        )
    for case in cases:
        what, spread = f"the same {case}", SPREADS[case]
        late: dict[str, list] = {"tandem": [], "baseline": []}
        recorded: list[list[float]] = []
        for _ in range(rounds):
            with fresh_database(postgres_admin) as url:
                lead = timedelta(seconds=15)
                to_commit, to_record = lateness(url, burst, spread, lead)
                late["tandem"].append(to_commit)
                recorded.append(to_record)
            late["baseline"].append(baseline_lateness(burst, spread, lead))
        for name, runs in late.items():
            p50s = [percentile(r, 50) for r in runs]
            p99s = [percentile(r, 99) for r in runs]
            print(
                f"{burst:>7} due within {what:<16}, {name:<8}: lateness p50 min "
                f"{min(p50s):.3f} / median {statistics.median(p50s):.3f} s, p99 min "
                f"{min(p99s):.3f} / median {statistics.median(p99s):.3f} s "
                f"({len(runs[0])} fired)"
            )
        p99s = [percentile(r, 99) for r in recorded]
        print(
            f"{'':>7} (tandem to `recorded_at` instead of the commit: p99 min {min(p99s):.3f} / "
            f"median {statistics.median(p99s):.3f} s, {len(recorded[0])} recorded)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="ADMIN_URL", help="also run on PostgreSQL")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument(
        "--cases",
        default=",".join(SPREADS),
        help="the lateness cases to run, of: " + ", ".join(SPREADS),
    )
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of each case")
    parser.add_argument(
        "--arm-hours", type=float, default=24.0, help="the pending timers are due over these hours"
    )
    parser.add_argument("--arm-child", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument(
        "--arm-baseline", nargs=2, metavar=("URL", "HORIZON"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.arm_child:
        arm_child(args.arm_child)
        return
    if args.arm_baseline:
        arm_baseline_child(args.arm_baseline[0], float(args.arm_baseline[1]))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cases = [c for c in args.cases.split(",") if c]
    if unknown := set(cases) - set(SPREADS):
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    run("SQLite", None, sizes, args.burst, args.rounds, args.arm_hours, cases)
    if args.postgres:
        run("PostgreSQL", args.postgres, sizes, args.burst, args.rounds, args.arm_hours, cases)


if __name__ == "__main__":
    main()
