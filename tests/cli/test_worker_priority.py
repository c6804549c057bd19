"""`tandem worker` lowers its own CPU priority (web processes on the machine answer first), by
how much depending on the database: the real command in a subprocess, on SQLite and on
PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli.run import WORKER_NICENESS
from bot.core.config import ENV_NAMES
from bot.store.database import backend_name

DEADLINE = 120  # seconds on a loaded machine before the test gives up


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _running_worker(tmp_path: Path, url: str, *options: str) -> subprocess.Popen:
    """`tandem worker` on the migrated database at `url`, once it says it runs."""
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env = {**clean, "TANDEM_INSECURE_LOCAL": "true", "DATABASE_URL": url}
    command = [sys.executable, "-c", "from bot.cli.main import main; main()"]
    proc = subprocess.Popen(
        [*command, "worker", *options],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    began = time.monotonic()
    line = proc.stdout.readline()  # "Tandem worker running ...", printed once it runs
    assert "Tandem worker running" in line, (line, proc.poll())
    assert time.monotonic() - began < DEADLINE
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        assert proc.wait(timeout=DEADLINE) == 0
    finally:
        assert proc.stdout is not None
        proc.stdout.close()


def test_the_default_lowers_it_more_on_postgresql_than_on_sqlite() -> None:
    # SQLite's one writer lock, held by a worker far down the run queue, would keep every
    # webhook waiting (bot.cli.run.WORKER_NICENESS)
    assert WORKER_NICENESS["postgresql"] > WORKER_NICENESS["sqlite"] > 0


@pytest.mark.parametrize("options", [(), ("--niceness", "2")])
def test_the_worker_runs_at_a_lower_priority_than_it_was_started_at(
    tmp_path: Path, database_url: str, options: tuple[str, ...]
) -> None:
    lower_by = int(options[1]) if options else WORKER_NICENESS[backend_name(database_url)]
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    if mine + lower_by > 19:
        pytest.skip("the suite itself runs at a niceness the worker cannot go below")
    proc = _running_worker(tmp_path, database_url, *options)
    try:
        assert _nice(proc.pid) == mine + lower_by
        # every thread the worker runs (turns, sending, the scheduler) at that priority
        for thread in Path(f"/proc/{proc.pid}/task").iterdir():
            assert _nice(int(thread.name)) == mine + lower_by, thread.name
    finally:
        _stop(proc)


def test_niceness_0_leaves_the_priority_alone(tmp_path: Path, database_url: str) -> None:
    proc = _running_worker(tmp_path, database_url, "--niceness", "0")
    try:
        assert _nice(proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        _stop(proc)
