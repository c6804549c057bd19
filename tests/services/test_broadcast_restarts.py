"""A broadcast whose sending process is killed twice (SIGKILL) mid-send still reaches each
recipient at most once through the fake Twilio and the real twilio SDK, and every recipient
is settled: sent, or (a send cut off mid-request) marked failed rather than risked twice. The
same holds for a broadcast that starts a step, whose messages the workers' turns queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.clock import SystemClock
from bot.services import broadcasts
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.sealing import Sealer
from tests.channel.dispatching import settings_env
from tests.conftest import TEST_MASTER_KEY, fresh_database
from tests.fakes.twilio_api import FakeTwilio
from tests.services.broadcasting import CATALOGUE, enroll

N = 200
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as server:
        yield server


def start(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.services.broadcast_process"],
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for(check, seconds: float, state=lambda: None) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out: {state()}"
        time.sleep(0.05)


def test_killed_twice_mid_send_nobody_gets_the_broadcast_twice(
    request: pytest.FixtureRequest, tmp_path: Path, fake: FakeTwilio
) -> None:
    url = fresh_database("postgresql", request, tmp_path)
    store = EventStore(make_engine(url), clock=SystemClock(), sealer=Sealer(TEST_MASTER_KEY))
    try:
        for n in range(N):
            enroll(store, n)
        now = datetime.now(UTC)
        planned = broadcasts.create(store, CATALOGUE, {"message": "Walk!"}, actor="t", now=now)
        env = settings_env(
            url, fake, BROADCAST_RATE_PER_SECOND="400", TANDEM_MASTER_KEY=TEST_MASTER_KEY
        )
        for share in (N // 4, N // 2):
            process = start(env)
            wait_for(lambda share=share: len(fake.messages) >= share, 60)
            process.send_signal(signal.SIGKILL)
            process.wait()
        process = start(env)
        try:
            bid = str(planned.broadcast_id)

            def settled() -> bool:
                progress = broadcasts.show(store, bid)["progress"]
                # a send cut off by a kill stays unknown until its claim expires (minutes)
                return progress["sent"] >= N - 2 and progress["sent"] + progress["pending"] == N

            wait_for(settled, 60, lambda: broadcasts.show(store, bid)["progress"])
            time.sleep(1)  # nothing more goes out
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait()
        per_phone = Counter(m.form["To"] for m in fake.messages)
        assert max(per_phone.values()) == 1  # no duplicates
        progress = broadcasts.show(store, bid)["progress"]
        # A send cut off by a kill may have reached Twilio before its outcome was recorded: it
        # stays pending (never resent) until its claim expires. At most one per kill.
        assert N - 2 <= progress["sent"] <= len(per_phone) <= progress["sent"] + 2
        assert progress["sent"] + progress["pending"] == N
        assert progress["held"] == progress["failed"] == 0
    finally:
        store.engine.dispose()


STEP_N = 40
TIP = "This week: when you take a phone call"


def test_a_step_broadcast_killed_twice_mid_send_starts_nobodys_step_twice(
    request: pytest.FixtureRequest, tmp_path: Path, fake: FakeTwilio
) -> None:
    url = fresh_database("postgresql", request, tmp_path)
    store = EventStore(make_engine(url), clock=SystemClock(), sealer=Sealer(TEST_MASTER_KEY))
    try:
        pids = [enroll(store, n, intervention="walk-control") for n in range(STEP_N)]
        now = datetime.now(UTC)
        planned = broadcasts.create(store, CATALOGUE, {"step": "tip"}, actor="t", now=now)
        env = settings_env(
            url,
            fake,
            BROADCAST_RATE_PER_SECOND="100",
            TANDEM_MASTER_KEY=TEST_MASTER_KEY,
            BROADCAST_PROCESS_WORKERS="2",
        )

        def tips() -> Counter[str]:
            return Counter(m.form["To"] for m in fake.messages if TIP in m.form.get("Body", ""))

        for share in (STEP_N // 4, STEP_N // 2):
            process = start(env)
            wait_for(lambda share=share: sum(tips().values()) >= share, 120)
            process.send_signal(signal.SIGKILL)
            process.wait()
        process = start(env)
        try:
            bid = str(planned.broadcast_id)

            def settled() -> bool:
                progress = broadcasts.show(store, bid)["progress"]
                return progress["sent"] >= STEP_N - 2 and progress["pending"] <= 2

            wait_for(settled, 120, lambda: broadcasts.show(store, bid)["progress"])
            time.sleep(1)  # nothing more goes out
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait()
        assert max(tips().values()) == 1  # no step's message twice
        for pid in pids:
            started = [
                e
                for e in store.load(f"participant:{pid}")
                if e.event_type == "broadcast.step_requested"
            ]
            entered = [
                e
                for e in store.load(f"participant:{pid}")
                if e.event_type == "step.entered" and e.data.via == "broadcast"
            ]
            assert len(started) == 1 and len(entered) == 1
        progress = broadcasts.show(store, bid)["progress"]
        assert STEP_N - 2 <= progress["sent"] <= len(tips()) <= progress["sent"] + 2
        assert progress["held"] == progress["failed"] == 0
    finally:
        store.engine.dispose()
