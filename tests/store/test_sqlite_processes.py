"""Several processes appending to one SQLite file never see "database is locked"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.conftest import fresh_database

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_four_processes_append_to_one_sqlite_file_without_lock_errors(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = fresh_database("sqlite", request, tmp_path)
    per_process = 300
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store.sqlite_writer", url, f"w{n}", str(per_process)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "locked=0"
    store = EventStore(make_engine(url))
    try:
        total = sum(len(store.load(participant_stream(f"w{n}"))) for n in range(4))
        shared = [store.load(participant_stream(f"shared-{k}")) for k in range(3)]
        assert total + sum(len(s) for s in shared) == 4 * per_process
        for stream in shared:  # versions stay gap-free under contention
            assert [e.stream_version for e in stream] == list(range(1, len(stream) + 1))
    finally:
        store.engine.dispose()
