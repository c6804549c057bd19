"""PostgreSQL: the one-message commit (bot/store/flight.py) of this tree against another
revision's, alternating round by round on one database.

Each flight stages an append of two events (a message received and a reply queued) to its own
participant's stream and sends it with its COMMIT, as a worker's turn does. It prints flights/s
(min, median and max of the rounds) and the client's CPU microseconds per flight for each.

`python bench/flight.py [--base main] [--flights 300] [--rounds 6]` (PostgreSQL at
TEST_DATABASE_URL's server, a throwaway database)
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, make_url, text  # noqa: E402

from bot.core.clock import FakeClock  # noqa: E402
from bot.core.keys import generate_master_key  # noqa: E402
from bot.runtime.bootstrap import register_column_folds  # noqa: E402
from bot.store.database import make_engine  # noqa: E402
from bot.store.event_store import EventStore  # noqa: E402
from bot.store.event_types.messages import MessageQueued, MessageReceived  # noqa: E402
from bot.store.events import new_id, participant_of, participant_stream  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from bot.store.sealing import Sealer  # noqa: E402
from tests.conftest import ADMIN_URL  # noqa: E402
from tests.factories import enrolled  # noqa: E402

PHONES = itertools.count(1)  # a phone of its own for each participant


def _flight_of(revision: str) -> ModuleType:
    """`revision`'s bot/store/flight.py, loaded as a module of its own beside this tree's."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:bot/store/flight.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "flight_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("flight_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _round(store: EventStore, flight: ModuleType, n: int) -> tuple[float, float]:
    """Flights/s and client CPU µs per flight, over `n` fresh participants."""
    streams = []
    for k in range(n):
        first = enrolled(phone=f"+1415{next(PHONES):07d}")
        stream = participant_stream(first.participant_id)
        store.append(stream, [first])
        streams.append((stream, first.phone, k))
    wall, cpu = time.perf_counter(), time.process_time()
    for stream, phone, k in streams:
        head = store.projection_row("participants", str(participant_of(stream)))
        assert head is not None
        said = MessageReceived(
            message_sid=f"SM{new_id()}",
            from_address=phone,
            to_address="+15005550006",
            channel="sms",
            body=f"message {k}",
        )
        reply = MessageQueued(outbox_id=new_id(), to_address=phone, channel="sms", body="Thanks")
        with store.transaction() as tx:
            flight.commit_in_one_flight(tx, [tx.stage(stream, [said, reply], 1, dict(head))])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return n / wall, cpu / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the git revision to compare with")
    parser.add_argument("--flights", type=int, default=300, help="flights per round")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    register_column_folds()
    from bot.store import flight as now

    base = _flight_of(args.base)
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"tandem_bench_flight_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    engine = make_engine(url)
    try:
        upgrade(engine)
        store = EventStore(engine, clock=FakeClock(), sealer=Sealer(generate_master_key()))
        figures: dict[str, list[tuple[float, float]]] = {args.base: [], "now": []}
        _round(store, now, 20)  # warm up both
        _round(store, base, 20)
        for _ in range(args.rounds):
            for label, module in ((args.base, base), ("now", now)):
                figures[label].append(_round(store, module, args.flights))
        print(f"{'':>8}  flights/s min / median / max   client CPU µs a flight min / median")
        for label, rounds in figures.items():
            rates, cpus = [r for r, _ in rounds], [c for _, c in rounds]
            print(
                f"{label:>8}: {min(rates):8.1f} / {statistics.median(rates):8.1f}"
                f" / {max(rates):8.1f}"
                f"   {min(cpus):8.1f} / {statistics.median(cpus):8.1f}"
            )
        ratio = statistics.median(r for r, _ in figures["now"]) / statistics.median(
            r for r, _ in figures[args.base]
        )
        print(f"now/base flights/s: {ratio:.3f}")
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
