"""Benchmark the researcher console's server time: the participants page at 10,000
participants, and a participant's page with 10,000 events, beside the researcher API's JSON
reads of the same data (the baseline), in alternating rounds on SQLite and PostgreSQL.

Server time = the Flask app answering through its test client (no network, no browser).
Run by hand: `python bench/console.py [--participants 10000] [--events 10000] [--rounds 40]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import database, percentile  # noqa: E402
from bot.channel.outbound import to_participant  # noqa: E402
from bot.console import accounts  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.store.event_types import MessageReceived, ParticipantEnrolled  # noqa: E402
from bot.store.event_types.alerts import AlertRaised  # noqa: E402
from bot.store.events import new_id, participant_stream  # noqa: E402
from bot.store.services import Services  # noqa: E402
from bot.web import create_app  # noqa: E402

TOKEN = "bench-token-" + "x" * 32  # API tokens are at least 32 characters
BASE = "https://tandem.example.org"
PASSWORD = "bench password 123"


def _seed(services: Services, count: int, events: int) -> str:
    """`count` participants (every 50th with an open alert); the first gets `events` events."""
    store = services.store
    first = ""
    for start in range(0, count, 500):
        with store.transaction() as tx:
            for n in range(start, min(count, start + 500)):
                pid = new_id()
                first = first or pid
                enrolled = ParticipantEnrolled(
                    participant_id=pid,
                    phone=f"+1415{n:07d}",
                    timezone="America/Toronto",
                    intervention="demo",
                    name=f"Participant {n:05d}",
                )
                batch: list = [enrolled]
                if n % 50 == 0:
                    batch.append(AlertRaised(alert_id=new_id(), kind="crisis", summary="bench"))
                tx.append(participant_stream(pid), batch)
    row = store.projection_row("participants", first)
    assert row is not None
    made = 0
    while made < events:
        with store.transaction() as tx:
            batch = []
            for _ in range(min(500, events - made) // 2):
                batch.append(
                    MessageReceived(
                        message_sid=f"SM{new_id().replace('-', '')}",
                        from_address=row["phone"],
                        to_address="+15005550006",
                        channel="sms",
                        body="a message from the participant",
                    )
                )
                batch += to_participant(row, "and the bot's answer to it")
            tx.append(participant_stream(first), batch)
            made += len(batch)
    return first


def _timed(get: Callable[[], int]) -> float:
    began = time.perf_counter()
    status = get()
    elapsed = (time.perf_counter() - began) * 1000
    assert status == 200, status
    return elapsed


def _line(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return (
        f"  {name:<50} min {ms[0]:>7.1f}  median {statistics.median(ms):>7.1f}  "
        f"p50 {percentile(ms, 50):>7.1f}  p99 {percentile(ms, 99):>7.1f} ms"
    )


def run(kind: str, participants: int, events: int, rounds: int) -> None:
    with database(kind) as url:
        env = {
            "DATABASE_URL": url,
            "TANDEM_API_TOKENS": TOKEN,
            "TANDEM_MASTER_KEY": "b" * 40,
            "TWILIO_AUTH_TOKEN": "bench-auth-token",
            "PUBLIC_BASE_URL": BASE,
            "LOG_LEVEL": "WARNING",
        }
        services = build_services(load_settings(env, env_file=None), clock=SystemClock())
        began = time.perf_counter()
        pid = _seed(services, participants, events)
        print(
            f"{kind}: seeded {participants} participants and {events} events for one of "
            f"them in {time.perf_counter() - began:.0f} s"
        )
        accounts.add(services.store, "bench@example.org", "admin", "bench", SystemClock().now())
        accounts.set_password(
            services.store, "bench@example.org", PASSWORD, PASSWORD, SystemClock().now()
        )
        app = create_app(services)
        console = app.test_client()
        with console.session_transaction(base_url=BASE + "/console/") as session:
            session["email"] = "bench@example.org"
        api = app.test_client()
        auth = {"Authorization": f"Bearer {TOKEN}"}
        last_page = -(-participants // 50)
        pairs = {
            "participants page 1 (by enrollment)": (
                lambda: console.get("/console/participants", base_url=BASE).status_code,
                lambda: api.get("/conversation/participants?limit=50", headers=auth).status_code,
            ),
            f"participants page {last_page} (last)": (
                lambda: (
                    console.get(
                        f"/console/participants?page={last_page}", base_url=BASE
                    ).status_code
                ),
                lambda: (
                    api.get(
                        f"/conversation/participants?limit=50&offset={(last_page - 1) * 50}",
                        headers=auth,
                    ).status_code
                ),
            ),
            "participants: search + open-alert filter": (
                lambda: (
                    console.get(
                        "/console/participants?q=participant+01&alert=open&sort=name", base_url=BASE
                    ).status_code
                ),
                None,
            ),
            f"participant page ({events} events)": (
                lambda: console.get(f"/console/participants/{pid}", base_url=BASE).status_code,
                lambda: (
                    api.get(
                        f"/conversation/participants/{pid}/events?limit=200", headers=auth
                    ).status_code
                ),
            ),
            "participant transcript poll": (
                lambda: (
                    console.get(
                        f"/console/participants/{pid}/transcript", base_url=BASE
                    ).status_code
                ),
                lambda: (
                    api.get(
                        f"/conversation/participants/{pid}/messages?limit=100", headers=auth
                    ).status_code
                ),
            ),
        }
        for name, (tandem, baseline) in pairs.items():
            ours, theirs = [], []
            tandem(), baseline and baseline()  # warm caches and compiled statements
            for _ in range(rounds):  # alternating rounds: both see the same machine load
                ours.append(_timed(tandem))
                if baseline:
                    theirs.append(_timed(baseline))
            print(_line(f"console: {name}", ours))
            if theirs:
                print(_line("  baseline: the API's JSON read of it", theirs))
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--engines", default="sqlite,postgresql")
    args = parser.parse_args()
    for kind in args.engines.split(","):
        run(kind, args.participants, args.events, args.rounds)


if __name__ == "__main__":
    main()
