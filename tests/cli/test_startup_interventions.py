"""A process that would run participants' interventions refuses to start on one it cannot use:
`INTERVENTION` naming no intervention stops `tandem serve` and `tandem worker` with the problem."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.config import ENV_NAMES


@pytest.mark.parametrize("command", [["serve", "--port", "8999", "--no-migrate"], ["worker"]])
def test_an_unknown_intervention_stops_the_process_with_the_problem(
    tmp_path: Path, command: list[str]
) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env = {
        **clean,
        "DATABASE_URL": f"sqlite:///{tmp_path / 't.db'}",
        "TANDEM_INSECURE_LOCAL": "true",
        "INTERVENTION": "nosuch",
    }

    result = subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", *command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "interventions that cannot be used (INTERVENTION='nosuch')" in result.stderr
    assert (
        "nosuch: no such intervention; known: cbt-reframe, demo, ema-craving, fit-motivation, "
        "habit-coach" in (result.stderr)
    )


@pytest.mark.parametrize("command", [["serve", "--port", "8999", "--no-migrate"], ["worker"]])
def test_a_bad_setting_and_an_unknown_intervention_are_reported_in_one_round(
    tmp_path: Path, command: list[str]
) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env = {
        **clean,
        "DATABASE_URL": f"sqlite:///{tmp_path / 't.db'}",
        "TANDEM_INSECURE_LOCAL": "true",
        "DEFAULT_TIMEZONE": "Mars/Olympus",
        "INTERVENTION": "nosuch",
    }

    result = subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", *command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "DEFAULT_TIMEZONE:" in result.stderr
    assert "interventions that cannot be used (INTERVENTION='nosuch')" in result.stderr
