"""`tandem worker` loads the learned crisis line (on by default) before it takes work, so its
memory is taken at start, not at some later first message; a model that cannot load stops the
worker with the reason, unless SAFETY_LEARNED=off says to screen without it. `tandem serve`'s
background process refuses the same way. The real commands in subprocesses, on SQLite."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.conversation.learned import read_card
from bot.runtime.background import CANNOT_START
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
# `tandem serve`'s background process, run in this process (its `spawn` would not carry BROKEN).
CHILD = (
    "from bot.core.config import load_settings\n"
    "from bot.runtime.background import _run\n"
    "from bot.runtime.threads import RuntimeOptions\n"
    "_run(load_settings(env_file=None), RuntimeOptions(), None, 0)\n"
)


def _start(tmp_path: Path, script: str, **env: str) -> subprocess.Popen[str]:
    with (tmp_path / "stderr.txt").open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-c", script, "worker"],
            cwd=tmp_path,
            env={**_env(tmp_path), **env},
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )


@contextmanager
def _running(tmp_path: Path, prelude: str = "", **env: str) -> Iterator[str]:
    """A worker started, until it says it runs; yields what it logged by then."""
    proc = _start(tmp_path, prelude + WORKER, **env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        logged = (tmp_path / "stderr.txt").read_text()
        assert "Tandem worker running" in line, (line, logged)
        yield logged
    finally:
        _stop(proc)
        assert proc.stdout is not None
        proc.stdout.close()


def test_the_worker_loads_the_learned_line_before_it_runs(tmp_path: Path) -> None:
    with _running(tmp_path) as logged:
        assert f"learned crisis line loaded: model {read_card().version}" in logged


def test_a_model_that_cannot_load_stops_the_worker_with_the_reason(tmp_path: Path) -> None:
    proc = _start(tmp_path, BROKEN + WORKER)
    out, _ = proc.communicate(timeout=DEADLINE)
    logged = (tmp_path / "stderr.txt").read_text()

    assert proc.returncode == 1 and "Tandem worker running" not in out
    assert "learned crisis line (SAFETY_LEARNED) could not load" in logged
    assert "model.zip: no such file" in logged and "SAFETY_LEARNED=off" in logged


def test_with_the_learned_line_off_the_same_install_runs(tmp_path: Path) -> None:
    with _running(tmp_path, BROKEN, SAFETY_LEARNED="off") as logged:
        assert "learned crisis line loaded" not in logged


def test_serve_s_background_process_refuses_with_the_reason_and_no_traceback(
    tmp_path: Path,
) -> None:
    proc = _start(tmp_path, BROKEN + CHILD)
    proc.communicate(timeout=DEADLINE)
    logged = (tmp_path / "stderr.txt").read_text()

    assert proc.returncode == CANNOT_START
    assert "learned crisis line (SAFETY_LEARNED) could not load" in logged
    assert "Traceback" not in logged
