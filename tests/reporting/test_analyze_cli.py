"""`tandem analyze decisions`: reads an export's decisions.csv and prints the estimates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from bot.cli.main import cli
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.reporting.decision_file import decision_file_rows
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


def test_an_exports_decisions_csv_is_read_with_the_columns_of_the_decision_named(
    tmp_path: Path,
) -> None:
    """The export's shape: `participant_id`, and the p_ columns of another decision (blank in
    walk_prompt's rows), which must not count as walk_prompt's options."""
    rng, events, seq = random.Random(5), [], 0
    for n in range(30):
        pid = f"p{n:02d}"
        for index in range(40):
            u = uniform_draw(b"cli", pid, "walk_prompt", index)
            made = point(index).model_copy(update={"option": choose(P, u), "u": u})
            walked = rng.random() < (0.6 if made.option == "suggest" else 0.3)
            outcome = DecisionOutcome(decision="walk_prompt", index=index, status="observed",
                                      value=walked)  # fmt: skip
            other = point(index).model_copy(
                update={"decision": "tip", "probabilities": {"a": 0.5, "b": 0.5}, "option": "a"}
            )
            seq += 3
            events += [stored(pid, made, seq - 2), stored(pid, outcome, seq - 1)]
            events.append(stored(pid, other, seq))
    rows = []
    for n in range(30):
        pid = f"p{n:02d}"
        mine = [e for e in events if e.participant_id == pid]
        rows += decision_file_rows(mine, {"participant_id": pid, "timezone": "UTC"})
    frame = pd.DataFrame(rows)
    assert {"p_a", "p_suggest", "participant_id"} <= set(frame.columns)
    frame.to_csv(tmp_path / "decisions.csv", index=False)
    args = ["analyze", "decisions", "walk_prompt", "--export", str(tmp_path), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["n_participants"] == 30 and list(found["options"]) == ["suggest"]
