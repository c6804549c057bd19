"""`tandem worker` lowers its own CPU priority (web processes on the machine answer first):
the real command in a subprocess, on SQLite."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.core.config import ENV_NAMES

DEADLINE = 120  # seconds on a loaded machine before the test gives up


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _running_worker(tmp_path: Path, *options: str) -> subprocess.Popen:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env = {**clean, "TANDEM_INSECURE_LOCAL": "true", "DATABASE_URL": f"sqlite:///{tmp_path}/t.db"}
    command = [sys.executable, "-c", "from bot.cli.main import main; main()"]
    subprocess.run([*command, "migrate"], cwd=tmp_path, env=env, check=True, capture_output=True)
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


@pytest.mark.parametrize(("options", "lower_by"), [((), 5), (("--niceness", "2"), 2)])
def test_the_worker_runs_at_a_lower_priority_than_it_was_started_at(
    tmp_path: Path, options: tuple[str, ...], lower_by: int
) -> None:
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    if mine + lower_by > 19:
        pytest.skip("the suite itself runs at a niceness the worker cannot go below")
    proc = _running_worker(tmp_path, *options)
    try:
        assert _nice(proc.pid) == mine + lower_by
    finally:
        _stop(proc)


def test_niceness_0_leaves_the_priority_alone(tmp_path: Path) -> None:
    proc = _running_worker(tmp_path, "--niceness", "0")
    try:
        assert _nice(proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        _stop(proc)
