"""Broadcasts to one arm of walk-pilot, end to end: participants enrolled over HTTP into the
study, the study's declared weekly tip made by the scheduler's leader once the clock reaches its
Monday, and an ad-hoc broadcast starting a step of the control arm's intervention (POST
/broadcasts), both sent by the broadcaster through the fake Twilio to the control arm only, each
an ordinary message of the participant's transcript (GET .../messages) and of messages.csv; the
coach arm gets neither, and a step its intervention lacks is a 400 naming it."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.runtime.threads import RuntimeOptions
from tests.conftest import TEST_MASTER_KEY
from tests.e2e.conftest import Pipe
from tests.e2e.test_study_pipe import enroll, running_study
from tests.web.researcher import AUTH, BASE

WEDNESDAY = datetime(2026, 12, 9, 18, 0, tzinfo=UTC)  # 10:00 in San Francisco
MONDAY_NOON = datetime(2026, 12, 14, 20, 0, tzinfo=UTC)  # past 09:00 in every US zone
WEEKLY = "this week's walking tip: add a 10-minute walk"
STEP_TIP = "This week: when you take a phone call, stand up and walk while you talk."
PHONES = [f"+1415555{n:04d}" for n in range(3100, 3108)]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(WEDNESDAY)


@pytest.fixture
def broadcast_pipe(
    database_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Pipe]:
    options = RuntimeOptions(workers=2, dispatchers=1, scheduler=True)
    with running_study(
        database_url,
        monkeypatch,
        options,
        clock,
        BROADCAST_RATE_PER_SECOND="50",
        SCHEDULER_LEASE_SECONDS="1.5",
    ) as pipe:
        yield pipe


def post_broadcast(pipe: Pipe, body: dict) -> requests.Response:
    return requests.post(pipe.server.url + "/broadcasts", json=body, headers=AUTH, timeout=30)


def transcript(pipe: Pipe, pid: str) -> list[dict]:
    answer = requests.get(f"{pipe.server.url}{BASE}/{pid}/messages", headers=AUTH, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_a_declared_weekly_tip_and_an_ad_hoc_step_reach_only_the_control_arm(
    broadcast_pipe: Pipe, clock: FakeClock, database_url: str, tmp_path: Path
) -> None:
    pipe = broadcast_pipe
    made = {p: enroll(pipe, p, "low") for p in PHONES}
    arms = {p: r["arm"] for p, r in made.items()}
    control = [p for p, a in arms.items() if a == "control"]
    coach = [p for p, a in arms.items() if a == "coach"]
    assert control and coach  # blocks of 4 or 6: both arms have participants after 8
    pipe.wait_for(lambda: all(pipe.bodies_to(p) for p in PHONES), seconds=120)
    greeted = {p: len(pipe.bodies_to(p)) for p in PHONES}

    # The ad-hoc broadcast: a step of walk-control, refused for the coach arm (no such step).
    refused = post_broadcast(
        pipe, {"step": "tip", "filter": {"study": "walk-pilot", "arm": "coach"}, "dry_run": True}
    )
    assert refused.status_code == 400 and "no step 'tip' in habit-coach" in refused.text
    to_control = {"step": "tip", "filter": {"study": "walk-pilot", "arm": "control"}}
    dry = post_broadcast(pipe, {**to_control, "dry_run": True})
    assert dry.status_code == 200, dry.text
    samples = dry.json()["result"]["samples"]
    assert len(samples) == min(3, len(control)) and all(STEP_TIP in s["text"] for s in samples)
    sent = post_broadcast(pipe, to_control)
    assert sent.status_code == 201, sent.text
    step_id = sent.json()["result"]["broadcast_id"]
    pipe.wait_for(lambda: all(STEP_TIP in " ".join(pipe.bodies_to(p)) for p in control), 120)

    # The declared weekly tip: made by the leader's beat once Monday's window is open.
    clock.set(MONDAY_NOON)
    pipe.wait_for(lambda: all(WEEKLY in " ".join(pipe.bodies_to(p)) for p in control), 120)

    for phone in coach:
        after = pipe.bodies_to(phone)[greeted[phone] :]
        assert not [b for b in after if WEEKLY in b or STEP_TIP in b], after
    listed = requests.get(pipe.server.url + "/broadcasts", headers=AUTH, timeout=10).json()
    by_id = {b["broadcast_id"]: b for b in listed["result"]}
    [weekly] = [b for b in by_id.values() if b["schedule"]]
    assert weekly["schedule"] == "walk-pilot/weekly-tip@2026-12-14"
    assert weekly["created_by"] == "study:walk-pilot" and by_id[step_id]["step"] == "tip"
    for b in (weekly, by_id[step_id]):
        assert b["recipients"] == len(control)

    for phone in control:
        lines = transcript(pipe, made[phone]["id"])
        kinds = [(line["kind"], line["text"]) for line in lines if line["direction"] == "outbound"]
        assert [k for k, text in kinds if WEEKLY in (text or "")] == ["broadcast"]
        assert [k for k, text in kinds if STEP_TIP in (text or "")] == ["broadcast"]
    for phone in coach:
        lines = transcript(pipe, made[phone]["id"])
        assert not [line for line in lines if line["kind"] == "broadcast"]

    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    result = CliRunner().invoke(cli, ["export", "--out", str(tmp_path / "x")], env=env)
    assert result.exit_code == 0, result.output
    with open(tmp_path / "x" / "messages.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "broadcast"]
    ids = {made[p]["id"] for p in control}
    assert {r["participant_id"] for r in rows} == ids and len(rows) == 2 * len(control)
    with open(tmp_path / "x" / "broadcasts.csv", newline="") as f:
        recipients = list(csv.DictReader(f))
    assert {r["participant_id"] for r in recipients} == ids
    assert {r["broadcast_id"] for r in recipients} == {step_id, weekly["broadcast_id"]}
