"""Benchmark `tandem export` and `tandem replay --check` beside a raw scan of the events table.

For 1,000, 2,000 and 4,000 participants with 10 messages each (5 in, 5 out, a day apart, each
event with a time of its own, as a study's are) it times, in alternating rounds (min and
median): the export (`bot.reporting.export.export`, CSV) in one process and in `--jobs` processes
("export, N jobs": `tandem export --jobs N`, its own process and N - 1 workers), the replay
check (`bot.store.replay.check`: `tandem replay --check`) in one process and in `--jobs`
("replay, N jobs"), and the baseline: one `SELECT * FROM events ORDER BY seq` through
the raw driver, every row fetched and its JSON decoded with `json` (the driver's default, the
reference the targets were set against: "x raw"). A second baseline decodes with orjson, as the
store does ("x orjson": the stricter ratio, shown beside the first). A third, "floor", is the
least Python that writing events.csv and messages.csv can run in one process (`floor_pass`),
sealed fields opened as any export of them must: what any export written in Python costs at
least, so that "x raw" can be read against it. It prints each per event and as ratios of the
raw scans, and the export's growth from one size to the next (linear is 2.0 per doubling).
Personal data is sealed under a master key, as in production (the export opens every message's
phone number and text); `--plain` stores it unsealed, as this bench did before it sealed.
Run by hand: `python bench/export.py [--participants 1000,2000,4000] [--rounds 3]
[--engines sqlite,postgresql] [--plain] [--jobs 2]` (`--jobs` defaults to the machine's cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
import psycopg  # noqa: E402
from psycopg.types.json import set_json_loads  # noqa: E402
from sqlalchemy import Connection, select  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench.common import database  # noqa: E402
from bench.rounds import alternate, summary  # noqa: E402
from bot.core.keys import generate_master_key  # noqa: E402
from bot.reporting.export import export  # noqa: E402
from bot.runtime.bootstrap import register_column_folds  # noqa: E402
from bot.store.database import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.event_types import MessageReceived  # noqa: E402
from bot.store.event_types.messages import MessageQueued  # noqa: E402
from bot.store.events import NewEvent, new_id, participant_stream  # noqa: E402
from bot.store.replay import check  # noqa: E402
from bot.store.schema import participants  # noqa: E402
from bot.store.sealing import SEALED, Sealer  # noqa: E402
from tests.factories import enrolled  # noqa: E402


def seed(store: EventStore, participants: int, messages: int = 10) -> int:
    """Enroll `participants`, each with `messages` messages; returns the events written. Each
    event has a time of its own, as in a study, where each is appended when it happens (the
    export writes every time it holds, and writes a time it wrote just before at less cost)."""
    written = 0
    start_at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    for start in range(0, participants, 500):
        with store.transaction() as tx:
            for n in range(start, min(start + 500, participants)):
                phone = f"+1416{n:07d}"
                person = enrolled(phone=phone)
                at = start_at + timedelta(seconds=n)
                batch: list[NewEvent] = [NewEvent(person, occurred_at=at)]
                for k in range(messages // 2):
                    day = at + timedelta(days=k + 1)
                    received = MessageReceived(
                        message_sid=f"SM{new_id().replace('-', '')}",
                        from_address=phone,
                        to_address="+15005550006",
                        channel="sms",
                        body=f"Day {k}: I walked to the shop.",
                    )
                    queued = MessageQueued(
                        outbox_id=new_id(), to_address=phone, channel="sms", body="Well done!"
                    )
                    batch.append(NewEvent(received, occurred_at=day))
                    batch.append(NewEvent(queued, occurred_at=day + timedelta(seconds=2)))
                tx.append(participant_stream(person.participant_id), batch)
                written += len(batch)
    return written


def raw_scan(url: str, loads=json.loads) -> None:  # noqa: ANN001
    """Every event row through the driver, its JSON decoded with `loads`."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        conn = sqlite3.connect(parsed.database)
        for row in conn.execute("SELECT * FROM events ORDER BY seq"):
            loads(row[6])
            loads(row[7])
        conn.close()
        return
    with psycopg.connect(parsed.set(drivername="postgresql").render_as_string(False)) as conn:
        set_json_loads(loads, conn)
        with conn.cursor(name="scan") as cursor:  # server-side: rows stream, as export's should
            cursor.execute("SELECT * FROM events ORDER BY seq")
            for _row in cursor:
                pass  # psycopg decodes jsonb into Python objects itself


# The columns the floor reads, in its order.
_FLOOR_COLUMNS = (
    "seq, event_id, stream_id, stream_version, event_type, schema_version, data, meta,"
    " idempotency_key, occurred_at, recorded_at"
)
_FLOOR_MESSAGES = frozenset((MessageReceived.event_type, MessageQueued.event_type))


def floor_pass(store: EventStore, out: str) -> None:
    """The least Python an export of events.csv and messages.csv runs (a reference, not an
    exporter): one pass over every event in stream order through the raw driver, each row's
    JSON decoded with orjson, its sealed fields opened (the store's Sealer, every data key
    read first in one query, as the export reads a batch's) and its times parsed, and its
    events line and (a message's) messages line made with f-strings, the payloads and times
    encoded with orjson (as the export writes times: export_files.iso), and written. None of
    what the export does besides: no payload checked against its model, no outbox rows, no
    participants, results, retrievals or forms files, events.csv not put in order of seq, no
    cell quoted because of what it holds."""
    parsed = store.engine.url
    query = f"SELECT {_FLOOR_COLUMNS} FROM events ORDER BY stream_id, stream_version"
    with (
        open(Path(out) / "floor-events.csv", "w", encoding="utf-8", newline="") as lines,
        open(Path(out) / "floor-messages.csv", "w", encoding="utf-8", newline="") as messages,
        store.reading() as keys,  # the data keys' reads; the events come through the driver
    ):
        opened = _opener(store.sealer, keys)
        if parsed.get_backend_name() == "sqlite":
            utc = datetime.fromisoformat
            with closing(sqlite3.connect(parsed.database)) as conn:
                rows = (
                    (*row[:6], opened(row, orjson.loads(row[6])), orjson.loads(row[7]), row[8],
                     utc(row[9] + "+00:00"), utc(row[10] + "+00:00"))
                    for row in conn.execute(query)
                )  # fmt: skip
                _floor_lines(rows, lines.write, messages.write)
            return
        dsn = parsed.set(drivername="postgresql").render_as_string(False)
        # JSON fetched as text and decoded here (as the store reads it: bot.store.scan), not
        # by psycopg's loader, which costs a Python call more for each value
        as_text = _FLOOR_COLUMNS.replace("data, meta", "data::text, meta::text")
        with psycopg.connect(dsn) as pg, pg.cursor(name="floor") as cursor:
            cursor.execute(query.replace(_FLOOR_COLUMNS, as_text))
            loads = orjson.loads
            rows = (
                (*row[:6], opened(row, loads(row[6])), loads(row[7]), *row[8:]) for row in cursor
            )
            _floor_lines(rows, lines.write, messages.write)


def _opener(sealer: Sealer, conn: Connection) -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """What opens a floor row's payload: its sealed fields opened by `sealer` (every
    participant's data key read now, in one query for each PRELOAD_BATCH); a plain payload as
    it is."""
    if not sealer.enabled:
        return lambda _row, data: data
    sealer.preload(conn, conn.execute(select(participants.c.participant_id)).scalars())
    open_ = sealer.open

    def opened(row: Any, data: dict[str, Any]) -> dict[str, Any]:
        if SEALED not in data:
            return data
        return open_(conn, row[2], row[1], row[4], data).data

    return opened


def _floor_lines(rows, line, message) -> None:  # noqa: ANN001
    dumps = orjson.dumps
    for seq, eid, sid, version, kind, schema, data, meta, key, occurred, recorded in rows:
        at = dumps(occurred)[1:-1].decode()  # as the export writes times (export_files.iso)
        payload = dumps(data).decode().replace('"', '""')
        extra = dumps(meta).decode().replace('"', '""')
        line(
            f"{seq},{eid},{sid},{version},{kind},{schema},{at},{dumps(recorded)[1:-1].decode()},"
            f'{key or ""},"{payload}","{extra}"\r\n'
        )
        if kind in _FLOOR_MESSAGES:
            message(
                f"{sid},{seq},{data.get('message_sid') or data.get('outbox_id')},{kind},"
                f"{data.get('channel')},{data.get('body')},{at},{at}\r\n"
            )


def _timer(fn) -> float:  # noqa: ANN001
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def run(kind: str, sizes: list[int], rounds: int, sealed: bool, jobs: int) -> None:
    previous: float | None = None
    for size in sizes:
        with database(kind) as url, tempfile.TemporaryDirectory() as out:
            sealer = Sealer(generate_master_key() if sealed else None)
            register_column_folds()  # the memory's fold, as bootstrap's stores
            store = EventStore(make_engine(url), sealer=sealer)
            total = seed(store, size)

            def check_once(store: EventStore = store, jobs: int = 1) -> None:
                report = check(store, jobs=jobs)
                assert report.clean and report.again is None, report.differences[:3]
                assert report.workers == (jobs - 1 if jobs > 1 else 0), report.workers

            def export_once(store: EventStore = store, out: str = out, jobs: int = 1) -> None:
                export(store, Path(out), jobs=jobs)

            parted, checked = f"export, {jobs} jobs", f"replay, {jobs} jobs"
            cases = [
                ("export", lambda fn=export_once: _timer(fn)),
                (parted, lambda fn=export_once: _timer(lambda: fn(jobs=jobs))),
                ("replay --check", lambda fn=check_once: _timer(fn)),
                (checked, lambda fn=check_once: _timer(lambda: fn(jobs=jobs))),
                ("raw scan", lambda url=url: _timer(lambda: raw_scan(url))),
                ("raw, orjson", lambda url=url: _timer(lambda: raw_scan(url, orjson.loads))),
                ("floor", lambda store=store, out=out: _timer(lambda: floor_pass(store, out))),
            ]
            figures = alternate(cases, rounds)
            store.engine.dispose()
        raw = summary(figures["raw scan"])[1]
        fast = summary(figures["raw, orjson"])[1]
        least = summary(figures["floor"])[1]
        names = ("export", parted, "replay --check", checked, "raw scan", "raw, orjson", "floor")
        for name in names:
            low, median = summary(figures[name])
            per = median / total * 1e6
            print(
                f"{kind:<11}{size:>6} participants ({total:,} events)  {name:<16}"
                f"min {low:>7.2f} s  median {median:>7.2f} s  {per:>7.1f} us/event  "
                f"x raw {median / raw:>5.1f}  x orjson {median / fast:>5.1f}  "
                f"x floor {median / least:>5.1f}"
            )
        median_export = summary(figures["export"])[1]
        if previous is not None:
            print(
                f"{kind:<11}export growth from the previous size: {median_export / previous:.2f}x"
            )
        previous = median_export
        median_check = summary(figures["replay --check"])[1]
        print(
            f"{kind:<11}{jobs} jobs take {summary(figures[parted])[1] / median_export:.2f}x the "
            f"time of one process to export, {summary(figures[checked])[1] / median_check:.2f}x "
            "to replay"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", default="1000,2000,4000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument(
        "--plain", action="store_true", help="store personal data unsealed (no master key)"
    )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    parser.add_argument(
        "--jobs", type=int, default=cores or 1, help="processes (its own and N - 1 workers)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.participants.split(",")]
    print(f"personal data {'plain' if args.plain else 'sealed, as in production'}", flush=True)
    for kind in args.engines.split(","):
        run(kind, sizes, args.rounds, sealed=not args.plain, jobs=args.jobs)


if __name__ == "__main__":
    main()
