"""Each long-running process freezes its startup heap out of the cyclic collector before it
serves (bot.runtime.heap): `tandem worker`, and each gunicorn worker of the Procfile's web line.
The real commands in subprocesses, on SQLite. (`tandem serve` and its child:
tests/cli/test_serve_background.py.)"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bot.core.config import ENV_NAMES
from tests.cli.local_http import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEADLINE = 120  # seconds on a loaded machine before the test gives up
FROZE = re.compile(r"froze (\d+) startup objects out of the cyclic collector")


def _env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env = {**clean, "TANDEM_INSECURE_LOCAL": "true", "DATABASE_URL": f"sqlite:///{tmp_path}/t.db"}
    command = [sys.executable, "-c", "from bot.cli.main import main; main()", "migrate"]
    subprocess.run(command, cwd=tmp_path, env=env, check=True, capture_output=True)
    return env


def _frozen(text: str) -> list[int]:
    return [int(n) for n in FROZE.findall(text)]


def _stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> None:
    proc.send_signal(sig)
    try:
        proc.wait(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_worker_freezes_its_startup_heap_before_it_runs(tmp_path: Path) -> None:
    err = tmp_path / "stderr.txt"
    command = [sys.executable, "-c", "from bot.cli.main import main; main()", "worker"]
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "Tandem worker running ...", printed once it runs
        assert "Tandem worker running" in line, (line, err.read_text())
        frozen = _frozen(err.read_text())
        assert len(frozen) == 1 and frozen[0] > 10_000, err.read_text()
    finally:
        _stop(proc)
        assert proc.stdout is not None
        proc.stdout.close()


def _procfile_web(port: int) -> list[str]:
    """The Procfile's web command, from this venv, bound to a loopback port."""
    line = next(
        line.removeprefix("web:")
        for line in (ROOT / "Procfile").read_text().splitlines()
        if line.startswith("web:")
    )
    program, *words = shlex.split(line)
    at = words.index("--bind")
    words[at + 1] = f"127.0.0.1:{port}"
    return [str(BIN / program), *words]


def test_each_gunicorn_worker_of_the_procfile_freezes_its_startup_heap(tmp_path: Path) -> None:
    port = free_port()
    command = _procfile_web(port)
    workers = int(command[command.index("--workers") + 1])
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + DEADLINE
        while len(_frozen(err.read_text())) < workers:
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as answer:
            assert answer.status == 200
        frozen = _frozen(err.read_text())
        assert len(frozen) == workers and min(frozen) > 10_000, err.read_text()
    finally:
        _stop(proc, signal.SIGTERM)
