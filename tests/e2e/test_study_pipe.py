"""A study run end to end: 40 participants enrolled into walk-pilot through the API over HTTP,
allocated by its stratified blocks, each greeted by their own arm's intervention through the
real flow and the fake Twilio, answered through the signed webhook, and exported with their
arm and allocation."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from bot.channel.factory import build_messenger
from bot.cli.main import cli
from bot.conversation import timer_turns
from bot.conversation.daily_cycle import prompt as daily_prompt
from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.threads import Runtime, RuntimeOptions
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.services import Services
from bot.web import create_app
from tests.conftest import TEST_MASTER_KEY
from tests.e2e.conftest import Pipe
from tests.fakes.http_server import LocalServer
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH, BASE

COACH_GREETING = "Hi, I am your habit coach. What small habit shall we build?"
COACH_REPLY = "Lovely. When in your day could it fit?"
CONTROL_GREETING = "welcome to the walking study!"
PHONES = [f"+1415555{n:04d}" for n in range(3000, 3040)]


def coach_answer(body: dict) -> ScriptedReply:
    """The coach's LLM: a greeting for an enrollment turn, a reply to a message."""
    said = [m for m in body["messages"] if m["role"] == "user"]
    return ScriptedReply.text(COACH_REPLY if said else COACH_GREETING)


@contextmanager
def running_study(
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    options: RuntimeOptions,
    clock: FakeClock | None = None,
    **extra: str,
) -> Iterator[Pipe]:
    """The web app over HTTP and a runtime (the real flow, the fake Twilio, the coach's
    scripted LLM) on `database_url`, with `extra` settings; stopped on leaving."""
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    monkeypatch.setattr(daily_prompt, "register", lambda *a, **k: None)
    twilio, openai = FakeTwilio(), FakeOpenAI()
    openai.script(*[coach_answer] * 200)
    settings = settings_for(
        database_url,
        MESSENGER="twilio",
        TANDEM_MASTER_KEY=TEST_MASTER_KEY,
        SUPERVISOR_PHONES="none",
        TWILIO_API_BASE_URL=twilio.url,
        TWILIO_ACCOUNT_SID=twilio.account_sid,
        TWILIO_AUTH_TOKEN=twilio.auth_token,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=openai.url + "/v1",
        TANDEM_MODEL="fake-model",
        SAFETY_CLASSIFIER="off",
        **extra,
    )
    services = build_services(settings, clock=clock) if clock else build_services(settings)
    server = LocalServer(create_app(services))
    runtime = Runtime(services, build_handler(services), build_messenger(settings), options)
    runtime.start()
    try:
        yield Pipe(services, server, twilio)
    finally:
        runtime.stop()
        server.stop()
        twilio.stop()
        openai.stop()
        services.close()


@pytest.fixture
def study_pipe(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pipe]:
    options = RuntimeOptions(workers=4, dispatchers=2, scheduler=False)
    with running_study(database_url, monkeypatch, options) as pipe:
        yield pipe


def enroll(pipe: Pipe, phone: str, level: str) -> dict:
    body = {
        "phone_number": phone,
        "name": "Sam",
        "study": "walk-pilot",
        "baseline": {"activity_level": level, "age": 40},
    }
    answer = requests.post(pipe.server.url + BASE, json=body, headers=AUTH, timeout=10)
    assert answer.status_code == 201, answer.text
    return answer.json()["result"]


def allocations(services: Services) -> list[ParticipantAllocated]:
    events = services.store.read_all(event_types=[ParticipantAllocated.event_type])
    return [e.data for e in events]


def test_forty_enrollments_are_balanced_greeted_by_their_arm_and_exported(
    study_pipe: Pipe, database_url: str, tmp_path: Path
) -> None:
    pipe = study_pipe
    made = {p: enroll(pipe, p, "low" if n % 3 else "high") for n, p in enumerate(PHONES)}

    drawn = allocations(pipe.services)
    assert len(drawn) == 40
    for stratum in {a.stratum for a in drawn}:
        within = [a for a in drawn if a.stratum == stratum]
        for end in [i for i, a in enumerate(within) if a.position == a.block_size]:
            counts = Counter(a.arm for a in within[: end + 1])
            assert counts["coach"] == counts["control"], (stratum, counts)
    totals = Counter(a.arm for a in drawn)
    assert abs(totals["coach"] - totals["control"]) <= 6  # at most one open block per stratum
    by_arm = {p: r["arm"] for p, r in made.items()}
    assert {r["intervention"] for r in made.values() if r["arm"] == "coach"} == {"habit-coach"}
    assert {r["intervention"] for r in made.values() if r["arm"] == "control"} == {"walk-control"}

    pipe.wait_for(lambda: all(pipe.bodies_to(p) for p in PHONES), seconds=120)
    for phone, arm in by_arm.items():
        first = pipe.bodies_to(phone)[0]
        if arm == "coach":
            assert first == COACH_GREETING
        else:
            assert CONTROL_GREETING in first and COACH_GREETING not in pipe.bodies_to(phone)

    coach = next(p for p, a in by_arm.items() if a == "coach")
    control = next(p for p, a in by_arm.items() if a == "control")
    before = {p: len(pipe.bodies_to(p)) for p in (coach, control)}
    assert pipe.text(coach, "hello").status_code == 200
    assert pipe.text(control, "hello").status_code == 200
    pipe.wait_for(lambda: all(len(pipe.bodies_to(p)) > before[p] for p in before))
    assert pipe.bodies_to(coach)[before[coach]] == COACH_REPLY
    assert COACH_REPLY not in pipe.bodies_to(control)

    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    result = CliRunner().invoke(cli, ["export", "--out", str(tmp_path / "x")], env=env)
    assert result.exit_code == 0, result.output
    with open(tmp_path / "x" / "participants.csv", newline="") as f:
        rows = {r["participant_id"]: r for r in csv.DictReader(f)}
    with open(tmp_path / "x" / "allocations.csv", newline="") as f:
        allocated = {r["participant_id"]: r for r in csv.DictReader(f)}
    for phone, answered in made.items():
        row, allocation = rows[answered["id"]], allocated[answered["id"]]
        assert (row["study"], row["arm"]) == ("walk-pilot", by_arm[phone])
        assert row["stratum"] == allocation["stratum"] and row["allocated_at_utc"]
        assert (allocation["arm"], allocation["method"]) == (by_arm[phone], "stratified")
        assert float(allocation["p_coach"]) == 0.5
