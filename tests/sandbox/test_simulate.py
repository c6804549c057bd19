"""`tandem simulate` (docs/simulate.md): the shipped personas rehearse the demo offline on the
real engine; the same seed gives the same report; a persona that never replies drops off at the
first question; planted bugs (a transition that can never fire, a template that breaks for one
answer) show as dead steps and as failures at file:line; the report's numbers agree with the
run's events as `tandem events` prints them from the run's own database."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.sandbox.personas import (
    Answers,
    Persona,
    PersonaError,
    Player,
    Replies,
    load_personas,
    options_in,
    read_persona,
)
from tests.conftest import fresh_database

ROOT = Path(__file__).resolve().parents[2]
PLANTED = Path(__file__).parent / "simulated" / "planted"
# The command: the shipped personas, 50 participants x 14 days, seed 1.
DEMO = ["--personas", str(ROOT / "personas"), "--participants", "50", "--days", "14"]
DEMO += ["--seed", "1"]


def simulate(report: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["simulate", *args, "--report", str(report)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads((report / "report.json").read_text())


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The issue's command: 50 participants x 14 days, seed 1, the shipped personas."""
    report = tmp_path_factory.mktemp("demo")
    started = time.perf_counter()
    found = simulate(report, str(ROOT / "interventions" / "demo"), *DEMO)
    print(f"\nsimulate demo 50 x 14: {time.perf_counter() - started:.1f} s")  # noqa: T201
    return report, found


def events_of(
    report: Path, kind: str, monkeypatch: pytest.MonkeyPatch, *, none_ok: bool = False
) -> list[dict[str, Any]]:
    """The run's events of `kind`, as `tandem events` reads them from its database (`none_ok`:
    an empty list when there are none, which `tandem events` exits 1 for)."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{report / 'simulation.db'}")
    result = CliRunner().invoke(cli, ["events", "--type", kind], catch_exceptions=False)
    if none_ok and result.exit_code == 1 and "no events match" in result.output:
        return []
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def test_the_demo_runs_offline_and_everyone_is_enrolled(demo: tuple[Path, Any]) -> None:
    report, found = demo
    assert found["summary"]["participants"] == 50
    assert sum(found["summary"]["personas"].values()) == 50
    assert set(found["summary"]["personas"]) == {p.stem for p in (ROOT / "personas").glob("*.yaml")}
    assert found["burden"]["quiet_hours_violations"] == 0
    assert found["failures"]["total"] == 0
    assert found["steps"]["dead_steps"] == []  # the demo as shipped reaches every step
    page = (report / "report.html").read_text()
    assert "<script" not in page and "Dead steps: none" in page
    assert f"<strong>{found['burden']['quiet_hours_violations']}</strong> violations" in page


def test_the_same_seed_gives_the_same_report(demo: tuple[Path, Any], tmp_path: Path) -> None:
    report, found = demo
    again = simulate(tmp_path / "again", "demo", *DEMO)
    assert (tmp_path / "again" / "report.json").read_text() == (report / "report.json").read_text()
    assert (tmp_path / "again" / "report.html").read_text() == (report / "report.html").read_text()
    assert again == found


def test_a_persona_that_never_replies_drops_off_at_the_first_question(
    demo: tuple[Path, Any],
) -> None:
    _, found = demo
    silent = found["summary"]["personas"]["never-replies"]
    assert silent > 0
    assert found["dropoff"]["never-replies"] == {
        "never replied; question topic (step welcome)": silent
    }
    assert found["replies"]["never-replies"] == {}


def test_the_reports_numbers_are_the_runs_events(
    demo: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = demo
    sent = events_of(report, "message.sent", monkeypatch)
    assert found["burden"]["per_participant_per_day"]["total"] == len(sent)
    assert sum(found["burden"]["per_day_total"]) == len(sent)
    assert sum(found["burden"]["per_local_hour"]) == len(sent)
    per_stream = Counter(e["stream_id"] for e in sent)
    assert found["burden"]["per_participant_per_day"]["max"] <= max(per_stream.values())
    entered = events_of(report, "step.entered", monkeypatch)
    moves: dict[tuple[str, str], set[str]] = {}
    for e in entered:
        if e["data"]["from_step"]:
            moves.setdefault((e["data"]["from_step"], e["data"]["step"]), set()).add(e["stream_id"])
    taken = {(t["from"], t["to"]): t["participants"] for t in found["steps"]["taken"]}
    assert taken == {k: len(v) for k, v in moves.items()}
    reached = {r["step"]: r["participants"] for r in found["steps"]["steps"]}
    for step, count in reached.items():
        assert count == len({e["stream_id"] for e in entered if e["data"]["step"] == step})
    turns = Counter(e["data"]["step"] for e in events_of(report, "step.turn_taken", monkeypatch))
    assert {r["step"]: r["turns"] for r in found["steps"]["steps"]} == {
        step: turns[step] for step in reached
    }


def test_planted_bugs_show_as_a_dead_step_and_failures_at_file_line(tmp_path: Path) -> None:
    found = simulate(
        tmp_path / "planted",
        str(PLANTED),
        "--personas",
        str(ROOT / "personas"),
        "--participants",
        "16",
        "--days",
        "2",
        "--seed",
        "3",
    )
    steps = found["steps"]
    assert {"check-in", "goodbye"} <= set(steps["dead_steps"])
    assert "tip -> check-in" in steps["dead_transitions"]
    tip = next(r for r in steps["steps"] if r["step"] == "tip")
    assert tip["participants"] > 0  # reached, but never left
    failed = [f for f in found["failures"]["failures"] if f["event"] == "template.failed"]
    assert failed, found["failures"]
    file, _, line = failed[0]["where"].rpartition(":")
    assert file.endswith("steps/tip.md") and int(line) > 0
    assert failed[0]["step"] == "tip"
    page = (tmp_path / "planted" / "report.html").read_text()
    assert "check-in" in page.split("Dead steps:")[1].split("</p>")[0]
    assert failed[0]["where"] in page


def test_the_shipped_personas_are_valid() -> None:
    found = load_personas(ROOT / "personas")
    assert {"engaged", "sporadic", "never-replies", "drops-out"} <= set(found)
    assert found["never-replies"].replies.probability == 0


def test_a_bad_persona_is_refused_at_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("description: x\nreplies:\n  probability: 2\n  latency: {median: 3}\n")
    persona, problems = read_persona(path)
    assert persona is None
    said = sorted(str(p) for p in problems)
    assert any(s.startswith(f"{path}:3:") and "probability" in s for s in said), said
    assert any(s.startswith(f"{path}:4:") and "median" in s for s in said), said
    with pytest.raises(PersonaError):
        load_personas(tmp_path)


def test_llm_personas_and_llm_arms_are_refused_clearly(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "talker.yaml").write_text("kind: llm\ndescription: a chatty person\n")
    result = CliRunner().invoke(
        cli,
        ["simulate", "demo", "--personas", str(folder), "--report", str(tmp_path / "r")],
    )
    assert result.exit_code == 1
    assert "LLM personas need" in result.output and "talker" in result.output
    assert not (tmp_path / "r" / "report.json").exists()
    study = CliRunner().invoke(  # its coach arm runs an LLM intervention
        cli,
        ["simulate", str(ROOT / "studies" / "walk-pilot"), "--report", str(tmp_path / "s")],
    )
    assert study.exit_code == 1
    assert "arm 'coach' cannot be simulated here" in study.output
    assert not (tmp_path / "s" / "report.json").exists()


def test_postgresql_gives_the_report_sqlite_gives(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """--database runs on the database given; the report does not depend on which."""
    url = fresh_database("postgresql", request, tmp_path)
    args = ["demo", "--personas", str(ROOT / "personas"), "--participants", "8", "--days", "2"]
    on_postgres = simulate(tmp_path / "pg", *args, "--database", url)
    on_sqlite = simulate(tmp_path / "lite", *args)
    assert not (tmp_path / "pg" / "simulation.db").exists()
    assert (tmp_path / "lite" / "simulation.db").exists()
    assert on_postgres == on_sqlite
    assert on_postgres["burden"]["per_participant_per_day"]["total"] > 0


def test_a_scripted_persona_answers_from_the_question_and_keeps_its_hours() -> None:
    """Answers come from the numbered options or the scale asked for; a reply due outside the
    persona's active hours waits for them; STOP ends replies; drop-out silences for good."""
    assert options_in("Pick one:\n1. Sleep\n2. Moving more\n3. Stress") == ["1", "2", "3"]
    assert options_in("Reply 0 (none) to 10 (the worst)") == [str(n) for n in range(11)]
    assert options_in("Just reply with a number from 1 to 5.") == ["1", "2", "3", "4", "5"]
    assert options_in("take a 10-minute walk at 8 am") == []
    start = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)  # 03:00 in London: outside 08:00-22:00
    keen = Persona(description="keen", answers=Answers(valid=1, invalid=0, off_topic=0))
    keen = keen.model_copy(update={"replies": Replies(probability=1)})
    player = Player("keen", keen, random.Random(1), start)
    answers = [player.reply("Reply 1 to 3", start) for _ in range(50)]
    assert all(a is not None and a.text in {"1", "2", "3"} for a in answers)
    assert {a.text for a in answers if a} == {"1", "2", "3"}
    assert all(a and start + a.after >= datetime(2026, 1, 5, 8, 0, tzinfo=UTC) for a in answers)
    stopper = Player("stop", keen.model_copy(update={"stop": 1.0}), random.Random(2), start)
    first = stopper.reply("How are you?", start)
    assert first is not None and first.text == "STOP"
    assert stopper.reply("How are you?", start) is None
    gone = Player("gone", keen.model_copy(update={"dropout_per_day": 1.0}), random.Random(3), start)
    assert gone.reply("How are you?", start) is None


def test_instruments_and_decision_points_get_their_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ema-craving administers a questionnaire, walk-mrt has decision points: each report has
    its feature's section (the demo's has neither), counted from the run's events."""
    args = ["--personas", str(ROOT / "personas"), "--participants", "6", "--days", "2"]
    ema = simulate(tmp_path / "ema", "ema-craving", *args)
    started = events_of(tmp_path / "ema", "instrument.started", monkeypatch)
    assert ema["instruments"]["craving"]["started"] == len(started) > 0
    assert "decisions" not in ema
    # Quiet hours 22:00-08:00: everyone is enrolled at 09:00 UTC, 04:00 in New York, so those
    # participants' welcome waits for 08:00 there (a `greeting` timer): no violation.
    new_york = ema["summary"]["personas"]["sporadic"]  # the persona in America/New_York
    assert ema["burden"]["quiet_hours_violations"] == 0
    held = [e for e in events_of(tmp_path / "ema", "timer.scheduled", monkeypatch)]
    held = [e for e in held if e["data"]["kind"] == "greeting"]
    assert len(held) == new_york > 0
    assert {e["data"]["due_at"][:19] for e in held} == {"2026-01-05T13:00:00"}
    walk = simulate(tmp_path / "walk", "walk-mrt", *args)
    made = events_of(tmp_path / "walk", "decision.made", monkeypatch)
    assert sum(walk["decisions"]["walk_prompt"].values()) == len(made) > 0
    drawn = Counter(e["data"]["option"] for e in made if e["data"]["available"])
    assert {k: v for k, v in walk["decisions"]["walk_prompt"].items() if k[0] != "("} == drawn
    assert "instruments" not in walk


def test_the_runs_database_exports_like_a_studys(
    demo: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = demo
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{report / 'simulation.db'}")
    result = CliRunner().invoke(cli, ["export", "--out", str(tmp_path / "export")])
    assert result.exit_code == 0, result.output
    rows = (tmp_path / "export" / "participants.csv").read_text().splitlines()
    assert len(rows) - 1 == found["summary"]["participants"]
