"""`tandem worker` loads the learned crisis line (on by default) before it takes work, so its
memory is taken at start, not at some later first message; a model that cannot load stops the
worker with the reason, unless SAFETY_LEARNED=off says to screen without it. The real command
in a subprocess, on SQLite. (`tandem serve`'s background process: bot.runtime.background.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.conversation.learned import read_card
from tests.cli.test_startup_heap import DEADLINE, _env, _stop

# The worker's command line; `BROKEN` first makes the model's loader fail as a missing or
# corrupt install would.
WORKER = "from bot.cli.main import main; main()"
BROKEN = (
    "import bot.conversation.learned as learned\n"
    "def broken():\n"
    "    raise OSError('model.zip: no such file')\n"
    "learned.load_line = broken\n"
)


def _start(tmp_path: Path, prelude: str = "", **env: str) -> subprocess.Popen[str]:
    with (tmp_path / "stderr.txt").open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-c", prelude + WORKER, "worker"],
            cwd=tmp_path,
            env={**_env(tmp_path), **env},
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )


def test_the_worker_loads_the_learned_line_before_it_runs(tmp_path: Path) -> None:
    proc = _start(tmp_path)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        logged = (tmp_path / "stderr.txt").read_text()
        assert "Tandem worker running" in line, (line, logged)
        assert f"learned crisis line loaded: model {read_card().version}" in logged
    finally:
        _stop(proc)
        assert proc.stdout is not None
        proc.stdout.close()


def test_a_model_that_cannot_load_stops_the_worker_with_the_reason(tmp_path: Path) -> None:
    proc = _start(tmp_path, BROKEN)
    out, _ = proc.communicate(timeout=DEADLINE)
    logged = (tmp_path / "stderr.txt").read_text()

    assert proc.returncode == 1 and "Tandem worker running" not in out
    assert "learned crisis line (SAFETY_LEARNED) could not load" in logged
    assert "model.zip: no such file" in logged and "SAFETY_LEARNED=off" in logged


def test_with_the_learned_line_off_the_same_install_runs(tmp_path: Path) -> None:
    proc = _start(tmp_path, BROKEN, SAFETY_LEARNED="off")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        logged = (tmp_path / "stderr.txt").read_text()
        assert "Tandem worker running" in line, (line, logged)
        assert "learned crisis line loaded" not in logged
    finally:
        _stop(proc)
        assert proc.stdout is not None
        proc.stdout.close()
