"""`tandem interventions graph` of the shipped habit-coach draws its modules and daily cycle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_graph_of_habit_coach_shows_intake_feedback_and_the_daily_cycle() -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ("REMINDER_AFTER_PROMPT_HOURS",)}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from bot.cli.main import main; main()",
            "interventions",
            "graph",
            "interventions/habit-coach",
        ],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert '[["module: intake"]]' in result.stdout
    assert '[["module: feedback"]]' in result.stdout
    assert "timer daily: the habit time − 10 min" in result.stdout
    assert 'c_prompt -.->|"no reply in 5 h"| t_reminder' in result.stdout
