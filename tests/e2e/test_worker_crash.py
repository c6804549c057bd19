"""A worker killed mid-turn loses nothing: after its lease lapses the item is handled once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.factories import enrolled, received

ROOT = Path(__file__).resolve().parents[2]


def start(url: str, mode: str, lease: float, marker: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.worker_process", url, mode, str(lease), str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_a_worker_killed_mid_item_leaves_it_to_be_processed_exactly_once(
    store: EventStore, database_url: str, tmp_path: Path
) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    store.append(stream, [received("SMcrash", "are you there?")])
    # The enrollment's item is handled without output; block the slow worker on the message.
    from bot.store.event_types.work import WorkCompleted
    from bot.store.schema import work_items

    with store.reading() as conn:
        enrolled_item = conn.execute(
            work_items.select().where(work_items.c.kind == "enrolled")
        ).one()
    store.append(stream, [WorkCompleted(work_id=enrolled_item.work_id)])

    marker = tmp_path / "started"
    slow = start(database_url, "slow", 2.0, marker)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert slow.poll() is None, slow.communicate()
        assert time.monotonic() < deadline, "the slow worker never started the turn"
        time.sleep(0.05)
    os.kill(slow.pid, signal.SIGKILL)
    slow.communicate()  # reaps it and closes its pipes

    fast = start(database_url, "fast", 2.0, tmp_path / "unused")
    out, err = fast.communicate(timeout=120)
    assert fast.returncode == 0, err

    events = store.load(stream)
    completed = [e.data.work_id for e in events if e.event_type == "work.completed"]
    replies = [e.data.body for e in events if e.event_type == "message.queued"]
    assert completed.count(marker.read_text()) == 1
    assert replies == ["You said: are you there?"]
