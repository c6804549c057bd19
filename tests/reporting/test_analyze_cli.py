"""`tandem analyze decisions`: reads an export's decisions.csv and prints the estimates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from bot.cli.main import cli
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.reporting.decision_rows import decision_rows
from bot.store.event_types.decisions import DecisionOutcome
from tests.reporting.test_decision_rows import P, point, stored


def export_of(tmp_path: Path, effect: float) -> Path:
    """decisions.csv of 30 participants x 60 points, walking 0.3 + `effect` after a nudge."""
    rng, events, seq = random.Random(3), [], 0
    for n in range(30):
        pid = f"p{n:02d}"
        for index in range(60):
            u = uniform_draw(b"cli", pid, "walk_prompt", index)
            option = choose(P, u)
            made = point(index).model_copy(update={"option": option, "u": u})
            walked = rng.random() < 0.3 + (effect if option == "suggest" else 0)
            outcome = DecisionOutcome(decision="walk_prompt", index=index, status="observed",
                                      value=walked)  # fmt: skip
            seq += 2
            events += [stored(pid, made, seq - 1), stored(pid, outcome, seq)]
    pd.DataFrame(decision_rows(events)).to_csv(tmp_path / "decisions.csv", index=False)
    return tmp_path


def test_the_command_prints_the_estimates_of_an_exports_decisions_as_json(
    tmp_path: Path,
) -> None:
    folder = export_of(tmp_path, 0.3)
    args = ["analyze", "decisions", "walk_prompt", "--export", str(folder), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert "suggest" in json.dumps(found) and found["decision"] == "walk_prompt"


def test_an_unknown_decision_is_refused_with_the_analysis_words(tmp_path: Path) -> None:
    folder = export_of(tmp_path, 0.0)
    result = CliRunner().invoke(cli, ["analyze", "decisions", "nudge", "--export", str(folder)])
    assert result.exit_code != 0 and "no decision points of 'nudge'" in result.output
