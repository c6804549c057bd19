"""Benchmark `tandem export` and `tandem replay --check` beside a raw scan of the events table.

For 1,000, 2,000 and 4,000 participants with 10 messages each (5 in, 5 out) it times, in
alternating rounds (min and median): the export (`bot.store.export.export`, CSV), the replay
check (`rebuild` + `compare`), and the baseline: one `SELECT * FROM events ORDER BY seq` through
the raw driver, every row fetched and its JSON decoded with `json` (the driver's default, the
reference the targets were set against: "x raw"). A second baseline decodes with orjson, as the
store does ("x orjson": the stricter ratio, shown beside the first). It prints each per event
and as ratios of the raw scans, and the export's growth from one size to the next (linear is
2.0 per doubling).
Run by hand: `python bench/export.py [--participants 1000,2000,4000] [--rounds 3]
[--engines sqlite,postgresql]`.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
import psycopg  # noqa: E402
from psycopg.types.json import set_json_loads  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench.common import database  # noqa: E402
from bench.rounds import alternate, summary  # noqa: E402
from bot.store.engine import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.event_types import MessageReceived  # noqa: E402
from bot.store.event_types.messages import MessageQueued  # noqa: E402
from bot.store.events import EventData, new_id, participant_stream  # noqa: E402
from bot.store.export import export  # noqa: E402
from bot.store.replay import compare, rebuild  # noqa: E402
from tests.factories import enrolled  # noqa: E402


def seed(store: EventStore, participants: int, messages: int = 10) -> int:
    """Enroll `participants`, each with `messages` messages; returns the events written."""
    written = 0
    for start in range(0, participants, 500):
        with store.transaction() as tx:
            for n in range(start, min(start + 500, participants)):
                phone = f"+1416{n:07d}"
                person = enrolled(phone=phone)
                batch: list[EventData] = [person]
                for k in range(messages // 2):
                    batch.append(
                        MessageReceived(
                            message_sid=f"SM{new_id().replace('-', '')}",
                            from_address=phone,
                            to_address="+15005550006",
                            channel="sms",
                            body=f"Day {k}: I walked to the shop.",
                        )
                    )
                    batch.append(
                        MessageQueued(
                            outbox_id=new_id(), to_address=phone, channel="sms", body="Well done!"
                        )
                    )
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


def _timer(fn) -> float:  # noqa: ANN001
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def run(kind: str, sizes: list[int], rounds: int) -> None:
    previous: float | None = None
    for size in sizes:
        with database(kind) as url, tempfile.TemporaryDirectory() as out:
            store = EventStore(make_engine(url))
            total = seed(store, size)

            def check(store: EventStore = store) -> None:
                report = rebuild(store)
                compare(store, report)
                assert report.clean, report.differences[:3]

            def export_once(store: EventStore = store, out: str = out) -> None:
                export(store, Path(out))

            cases = [
                ("export", lambda fn=export_once: _timer(fn)),
                ("replay --check", lambda fn=check: _timer(fn)),
                ("raw scan", lambda url=url: _timer(lambda: raw_scan(url))),
                ("raw, orjson", lambda url=url: _timer(lambda: raw_scan(url, orjson.loads))),
            ]
            figures = alternate(cases, rounds)
            store.engine.dispose()
        raw = summary(figures["raw scan"])[1]
        fast = summary(figures["raw, orjson"])[1]
        for name in ("export", "replay --check", "raw scan", "raw, orjson"):
            low, median = summary(figures[name])
            per = median / total * 1e6
            print(
                f"{kind:<11}{size:>6} participants ({total:,} events)  {name:<15}"
                f"min {low:>7.2f} s  median {median:>7.2f} s  {per:>7.1f} us/event  "
                f"x raw {median / raw:>5.1f}  x orjson {median / fast:>5.1f}"
            )
        median_export = summary(figures["export"])[1]
        if previous is not None:
            print(
                f"{kind:<11}export growth from the previous size: {median_export / previous:.2f}x"
            )
        previous = median_export


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", default="1000,2000,4000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default="sqlite,postgresql")
    args = parser.parse_args()
    sizes = [int(s) for s in args.participants.split(",")]
    for kind in args.engines.split(","):
        run(kind, sizes, args.rounds)


if __name__ == "__main__":
    main()
