"""`tandem simulate studies/<slug>` (docs/simulate.md, "Simulating a study"): synthetic
participants join the study through its enrollment rules, minimisation allocates them, each
arm's intervention runs; the same seed gives the same report; the arms section's numbers are
the run's events as `tandem events` prints them (with the run's own master key)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.sandbox.sim_study import simulation_key
from tests.sandbox.test_simulate import events_of, simulate

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "studies" / "walk-prompts"
SEED, PARTICIPANTS, DAYS = 2, 12, 3
ARGS = ["--personas", str(ROOT / "personas"), "--participants", str(PARTICIPANTS)]
ARGS += ["--days", str(DAYS), "--seed", str(SEED)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    report = tmp_path_factory.mktemp("walk-prompts")
    return report, simulate(report, str(STUDY), *ARGS)


def events(report: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The run's events of `kind`, read with the run's own master key."""
    monkeypatch.setenv("TANDEM_MASTER_KEY", simulation_key(SEED))
    return events_of(report, kind, monkeypatch, none_ok=True)


def arms_of(report: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Each participant's stream id -> the arm they ended in."""
    found = {}
    for e in events(report, "participant.allocated", monkeypatch):
        found[e["stream_id"]] = e["data"]["arm"]
    return found


def test_the_same_seed_gives_the_same_study_report(
    run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    report, found = run
    simulate(tmp_path / "again", str(STUDY), *ARGS)
    assert (tmp_path / "again" / "report.json").read_text() == (report / "report.json").read_text()
    assert (tmp_path / "again" / "report.html").read_text() == (report / "report.html").read_text()
    assert found["summary"]["target"] == "walk-prompts"
    assert "not the real allocation" in found["arms"]["note"]
    assert "not the real allocation" in (report / "report.html").read_text()


def test_arm_counts_are_the_allocation_events(
    run: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = run
    allocated = events(report, "participant.allocated", monkeypatch)
    assert len(allocated) == PARTICIPANTS
    assert {e["data"]["method"] for e in allocated} == {"minimisation"}
    arms = found["arms"]
    assert arms["participants"] == dict(Counter(e["data"]["arm"] for e in allocated))
    assert set(arms["participants"]) == {"tips", "prompts"}
    by_factors: dict[str, Counter[str]] = defaultdict(Counter)
    for e in allocated:
        label = ", ".join(f"{k}={v}" for k, v in sorted(e["data"]["factors"].items()))
        by_factors[label][e["data"]["arm"]] += 1
    assert arms["strata"] == {k: dict(v) for k, v in by_factors.items()}


def test_baselines_are_drawn_within_the_declared_fields(
    run: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, _ = run
    baselines = [
        e["data"]["baseline"] for e in events(report, "participant.allocated", monkeypatch)
    ]
    assert all(set(b) == {"activity_level", "shift_work", "age"} for b in baselines)
    assert {b["activity_level"] for b in baselines} == {"low", "high"}
    assert {b["shift_work"] for b in baselines} == {True, False}
    assert all(isinstance(b["age"], int) and 18 <= b["age"] <= 100 for b in baselines)


def test_the_arms_figures_are_the_runs_events(
    run: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = run
    arm = arms_of(report, monkeypatch)
    to_them = {
        e["data"]["outbox_id"]
        for e in events(report, "message.queued", monkeypatch)
        if e["data"].get("to_participant", True)
    }
    sent = Counter(
        arm[e["stream_id"]]
        for e in events(report, "message.sent", monkeypatch)
        if e["data"]["outbox_id"] in to_them
    )
    alerts = Counter(arm[e["stream_id"]] for e in events(report, "alert.raised", monkeypatch))
    wrote = {e["stream_id"] for e in events(report, "message.received", monkeypatch)}
    members = Counter(arm.values())
    for name, figures in found["arms"]["by_arm"].items():
        assert figures["participants"] == members[name]
        assert figures["messages_per_participant_per_day"] == round(
            sent[name] / (members[name] * DAYS), 3
        )
        assert figures["alerts"] == alerts[name]
        never = sum(1 for s, a in arm.items() if a == name and s not in wrote)
        assert figures["never_replied"] == never
        assert sum(figures["dropoff"].values()) == members[name]
    assert sum(sent.values()) == found["burden"]["per_participant_per_day"]["total"]


def test_each_arms_intervention_has_its_own_steps_block(
    run: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = run
    arm = arms_of(report, monkeypatch)
    runs = {"tips": "walk-control", "prompts": "walk-mrt"}
    reached: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in events(report, "step.entered", monkeypatch):
        reached[(runs[arm[e["stream_id"]]], e["data"]["step"])].add(e["stream_id"])
    blocks = found["arms"]["interventions"]
    assert set(blocks) == {"walk-control", "walk-mrt"}
    for slug, block in blocks.items():
        assert block["participants"] == sum(1 for a in arm.values() if runs[a] == slug)
        for row in block["steps"]["steps"]:
            assert row["participants"] == len(reached[(slug, row["step"])])
        assert block["graph"] and "style" in block["graph"]
    # walk-mrt's quiet hours (21:00-07:00) hold: the New York participants' welcome waited
    assert found["burden"]["quiet_hours_violations"] == 0


def test_a_personas_baseline_fixes_values_and_is_checked_against_the_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "low.yaml").write_text(
        "description: inactive\nbaseline: {activity_level: low, age: 40}\n"
    )
    simulate(
        tmp_path / "r",
        str(STUDY),
        "--personas",
        str(folder),
        "--participants",
        "4",
        "--days",
        "1",
        "--seed",
        str(SEED),
    )
    baselines = [
        e["data"]["baseline"] for e in events(tmp_path / "r", "participant.allocated", monkeypatch)
    ]
    assert [(b["activity_level"], b["age"]) for b in baselines] == [("low", 40)] * 4
    (folder / "low.yaml").write_text(
        "description: inactive\nbaseline: {activity_level: sedentary, height: 180}\n"
    )
    refused = CliRunner().invoke(
        cli, ["simulate", str(STUDY), "--personas", str(folder), "--report", str(tmp_path / "x")]
    )
    assert refused.exit_code == 1
    assert "persona low: baseline.activity_level" in refused.output
    assert "persona low: baseline.height: not a baseline field" in refused.output
    assert not (tmp_path / "x" / "simulation.db").exists()
