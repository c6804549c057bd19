"""Time the console's message search: a linear scan over sealed transcripts, opened in process.

10,000 messages (100 participants × 100 by default, every one sealed with its participant's
key), one search across all of them through the console page (`/console/search`), and the scan
alone (`bot.reporting.message_search.scan`), beside the baseline of reading the same sealed
rows without opening them, alternating round by round, on SQLite and PostgreSQL.
Run by hand: `python bench/message_search.py [--participants 100] [--messages 100] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import bindparam, text  # noqa: E402

from bench.common import database  # noqa: E402
from bot.channel.outbound import to_participant  # noqa: E402
from bot.console import accounts  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.reporting.message_search import scan  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.store.event_types import MessageReceived, ParticipantEnrolled  # noqa: E402
from bot.store.events import new_id, participant_stream  # noqa: E402
from bot.store.reads.message_search import searchable_ids  # noqa: E402
from bot.store.services import Services  # noqa: E402
from bot.web import create_app  # noqa: E402

BASE = "https://tandem.example.org"
PASSWORD = "bench password 123"


def _seed(services: Services, people: int, messages: int) -> None:
    store = services.store
    for n in range(people):
        pid = new_id()
        with store.transaction() as tx:
            tx.append(
                participant_stream(pid),
                [
                    ParticipantEnrolled(
                        participant_id=pid,
                        phone=f"+1415{n:07d}",
                        timezone="America/Toronto",
                        intervention="demo",
                        name=f"Participant {n:05d}",
                    )
                ],
            )
        row = store.projection_row("participants", pid)
        assert row is not None
        batch: list = []
        for i in range(messages // 2):
            batch.append(
                MessageReceived(
                    message_sid=f"SM{new_id().replace('-', '')}",
                    from_address=row["phone"],
                    to_address="+15005550006",
                    channel="sms",
                    body=f"a message from the participant, number {i}",
                )
            )
            batch += to_participant(row, "and the bot's answer to it")
        with store.transaction() as tx:
            tx.append(participant_stream(pid), batch)


def run(kind: str, people: int, messages: int, rounds: int) -> None:
    with database(kind) as url:
        settings = load_settings(
            {"DATABASE_URL": url, "TANDEM_MASTER_KEY": "b" * 40, "TANDEM_INSECURE_LOCAL": "1"},
            env_file=None,
        )
        services = build_services(settings, clock=SystemClock())
        with contextlib.closing(services):
            _seed(services, people, messages)
            now = SystemClock().now()
            accounts.add(services.store, "r@example.org", "researcher", "cli", now)
            accounts.set_password(services.store, "r@example.org", PASSWORD, PASSWORD, now)
            client = create_app(services).test_client()
            page = client.get("/console/login", base_url=BASE).get_data(as_text=True)
            token = page.split('name="csrf_token" value="')[1].split('"')[0]
            client.post(
                "/console/login",
                data={"email": "r@example.org", "password": PASSWORD, "csrf_token": token},
                base_url=BASE,
            )
            ids = searchable_ids(services.store, supervisor=False)
            streams = [participant_stream(pid) for pid in ids]
            pages, scans, reads = [], [], []
            for _ in range(rounds):  # the three alternate, round by round
                start = time.perf_counter()
                answer = client.get("/console/search?q=number 7", base_url=BASE)
                pages.append(time.perf_counter() - start)
                assert answer.status_code == 200, answer.status_code
                start = time.perf_counter()
                found, _ = scan(services.store, ids, "nothing contains this")
                scans.append(time.perf_counter() - start)
                assert not found
                start = time.perf_counter()
                rows = _raw_rows(services, streams)
                reads.append(time.perf_counter() - start)
                assert rows >= people * messages, rows
            total = people * messages
            print(f"{kind}: {total} messages, {people} participants, {rounds} rounds (s)")
            print(f"  {'':42} {'min':>7} {'median':>7} {'µs/message':>11}")
            for label, times in (
                ("search page (/console/search)", pages),
                ("scan, no match (Tandem)", scans),
                ("baseline: the sealed rows read, not opened", reads),
            ):
                each = statistics.median(times) / total * 1e6
                print(
                    f"  {label:42} {min(times):7.2f} {statistics.median(times):7.2f} {each:11.0f}"
                )


def _raw_rows(services: Services, streams: list[str]) -> int:
    """The baseline: the same messages' rows read from the database as stored (sealed), with
    nothing opened or searched: what any scan must pay before decrypting."""
    query = text(
        "SELECT data FROM events WHERE stream_id IN :streams"
        " AND event_type IN ('message.received', 'message.queued')"
    ).bindparams(bindparam("streams", expanding=True))
    with services.store.engine.connect() as conn:
        return len(conn.execute(query, {"streams": streams}).all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--databases", default="sqlite,postgresql")
    args = parser.parse_args()
    for kind in args.databases.split(","):
        run(kind, args.participants, args.messages, args.rounds)


if __name__ == "__main__":
    main()
