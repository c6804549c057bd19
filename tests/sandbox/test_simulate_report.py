"""`tandem simulate`'s later sections on a real run: time to completion and adherence agree
with the run's events, LLM calls are counted and priced with --prices (a bad price table is
refused at file:line before anything runs), the slowest turns go to timings.json (never into
report.json), and the report is recorded in the run's database for the console."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply
from tests.sandbox.test_simulate import events_of, simulate

ROOT = Path(__file__).resolve().parents[2]
PERSONAS = ["--personas", str(ROOT / "personas")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    report = tmp_path_factory.mktemp("demo-report")
    args = ["demo", *PERSONAS, "--participants", "12", "--days", "4", "--seed", "2"]
    return report, simulate(report, *args)


def test_time_to_completion_is_the_participants_who_entered_the_end_step(
    demo: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = demo
    done = found["completion"]
    assert done["end_steps"] == ["goodbye"]
    entered = events_of(report, "step.entered", monkeypatch)
    finished = {e["stream_id"] for e in entered if e["data"]["step"] == "goodbye"}
    assert done["overall"]["completed"] == len(finished) > 0
    assert done["overall"]["completed"] + done["overall"]["not_finished"] == 12
    assert sum(r["completed"] for r in done["by_persona"].values()) == len(finished)
    assert done["by_persona"]["never-replies"]["completed"] == 0
    assert 0 <= done["overall"]["days"]["median"] <= done["overall"]["days"]["max"] <= 4


def test_adherence_is_the_questions_answered_of_those_asked(
    demo: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = demo
    questions = found["adherence"]["questions"]
    asked = Counter(
        e["data"]["measurement"] for e in events_of(report, "measurement.asked", monkeypatch)
    )
    recorded = events_of(report, "measurement.recorded", monkeypatch)
    answered = Counter(e["data"]["measurement"] for e in recorded)
    assert {k: r["sent"] for k, r in questions.items()} == dict(asked)
    assert {k: r["answered"] for k, r in questions.items()} == {k: answered[k] for k in asked}
    assert found["adherence"]["by_persona"]["never-replies"]["answered"] == 0
    assert found["adherence"]["by_persona"]["engaged"]["adherence"] > 0.5


def test_timings_go_to_their_own_files_and_neither_report_json_nor_report_html(
    demo: tuple[Path, Any],
) -> None:
    report, found = demo
    assert "timings" not in found and "slowest" not in json.dumps(found)
    timings = json.loads((report / "timings.json").read_text())
    assert 0 < len(timings["slowest"]) <= 10
    ms = [row["ms"] for row in timings["slowest"]]
    assert ms == sorted(ms, reverse=True) and ms[0] == timings["turns"]["max_ms"]
    assert timings["turns"]["count"] >= 12  # at least each enrollment's turn
    assert found["llm"] == {"calls": 0, "note": "no LLM calls"}
    page = (report / "report.html").read_text()
    assert "Slowest turns" not in page and "No LLM calls." in page  # a seed repeats the page
    assert "<a href='timings.html'>" in page
    assert "Slowest turns" in (report / "timings.html").read_text()
    assert "Time to completion" in page and "Measurement adherence" in page


def test_the_report_is_recorded_in_the_runs_database(
    demo: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    report, found = demo
    recorded = events_of(report, "simulation.reported", monkeypatch)
    assert len(recorded) == 1 and recorded[0]["stream_id"] == "system"
    assert recorded[0]["data"]["report"] == found
    assert recorded[0]["data"]["timings"] == json.loads((report / "timings.json").read_text())
    assert "<h2>Steps</h2>" in recorded[0]["data"]["page"]
    sections = recorded[0]["data"]["page"].split("<h2>Slowest turns</h2>")[0]
    assert sections in (report / "report.html").read_text()


def test_llm_calls_are_counted_and_a_model_without_a_price_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """health-intake asks the LLM (the local fake: an intervention that needs an LLM is not
    simulated without one); its model has no declared price, so no cost is made up."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("per_million_tokens:\n  gpt-4o-mini: {input: 0.15, output: 0.6}\n")
    args = ["health-intake", *PERSONAS, "--participants", "4", "--days", "1"]
    with FakeOpenAI() as fake:
        fake.script(*[ScriptedReply.text("Thanks, tell me more.")] * 2000)
        for name, value in {
            "OPENAI_BASE_URL": fake.url + "/v1",
            "OPENAI_API_KEY": "test-key",
            "TANDEM_MODEL": "fake-model",
            "LLM_MAX_RETRIES": "0",
        }.items():
            monkeypatch.setenv(name, value)
        found = simulate(tmp_path / "r", *args, "--prices", str(prices))
    called = events_of(tmp_path / "r", "llm.called", monkeypatch)
    assert found["llm"]["calls"] == len(called) == len(fake.requests) > 0
    assert found["llm"]["failed"] == sum(not e["data"]["ok"] for e in called)
    assert found["llm"]["unpriced_models"] == ["fake-model"] and found["llm"]["cost"] is None
    assert found["llm"]["by_model"]["fake-model"]["cost"] is None
    assert (
        "<strong>No declared price</strong>: fake-model ("
        in (tmp_path / "r" / "report.html").read_text()
    )


def test_a_bad_price_table_is_refused_before_anything_runs(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("per_million_tokens:\n  gpt-4o-mini: {input: cheap, output: 0.6}\n")
    result = CliRunner().invoke(
        cli,
        ["simulate", "demo", *PERSONAS, "--report", str(tmp_path / "r"), "--prices", str(prices)],
    )
    assert result.exit_code == 1
    assert "prices cannot be used" in result.output and f"{prices}:2:" in result.output
    assert not (tmp_path / "r").exists()


def test_questionnaire_adherence_is_the_administrations_completed_of_those_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ema-craving administers `craving`: sent are its instrument.started, answered its
    instrument.completed, as the instruments section counts them too."""
    found = simulate(
        tmp_path / "ema", "ema-craving", *PERSONAS, "--participants", "6", "--days", "3"
    )
    craving = found["adherence"]["instruments"]["craving"]
    started = events_of(tmp_path / "ema", "instrument.started", monkeypatch)
    completed = events_of(tmp_path / "ema", "instrument.completed", monkeypatch)
    assert craving["sent"] == len(started) == found["instruments"]["craving"]["started"] > 0
    assert (
        craving["answered"] == len(completed) == found["instruments"]["craving"].get("completed", 0)
    )
    assert craving["adherence"] == round(len(completed) / len(started), 3)
