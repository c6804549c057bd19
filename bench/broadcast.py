"""Broadcast benchmark: plan time of N recipients and send throughput against the configured
rate, in one run, on the database of TANDEM_BENCH_DATABASE_URL (a fresh, migrated one).

    TANDEM_BENCH_DATABASE_URL=postgresql+psycopg://... python -m bench.broadcast \
        --participants 10000 --rate 50 --seconds 10

Sending queues through the broadcaster only (the dispatcher is measured in bench/webhook.py):
the throughput printed is recipients settled per second against BROADCAST_RATE_PER_SECOND.
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
import time
from datetime import UTC, datetime

from bot.core.clock import SystemClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.broadcaster import Broadcaster
from bot.runtime.routing import intervention_catalogue
from bot.services import broadcasts
from bot.store.events import participant_stream
from bot.store.migrate import upgrade
from bot.store.reads.broadcasts import recipient_rows
from tests.factories import enrolled


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    url = os.environ["TANDEM_BENCH_DATABASE_URL"]
    settings = load_settings({"DATABASE_URL": url}, env_file=None)
    services = build_services(settings, clock=SystemClock())
    upgrade(services.store.engine)
    store = services.store
    with store.transaction() as tx:
        tx.append_batch(
            [
                (participant_stream(e.participant_id), [e], None)
                for e in (
                    enrolled(phone=f"+1415{n:07d}", intervention="habit-coach")
                    for n in range(args.participants)
                )
            ]
        )
    started = time.perf_counter()
    planned = broadcasts.create(
        store,
        intervention_catalogue(),
        {"message": "Walk today, {{ participant.name or 'friend' }}!"},
        actor="bench",
        now=datetime.now(UTC),
    )
    plan = time.perf_counter() - started
    print(f"plan: {planned.recipients} recipients in {plan:.2f} s")
    stop = threading.Event()
    broadcaster = Broadcaster(services, "bench", rate=args.rate)
    thread = threading.Thread(target=broadcaster.run_forever, args=(stop,))
    started = time.perf_counter()
    thread.start()
    time.sleep(args.seconds)
    stop.set()
    thread.join()
    elapsed = time.perf_counter() - started
    rows = recipient_rows(store, planned.broadcast_id)
    queued = sum(row["status"] == "queued" for row in rows)
    print(
        f"send: {queued} queued in {elapsed:.1f} s = {queued / elapsed:.1f}/s "
        f"(rate {args.rate:g}/s)"
    )
    services.close()


if __name__ == "__main__":
    main()
