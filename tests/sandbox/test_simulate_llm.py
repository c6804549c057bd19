"""`tandem simulate` with LLMs (docs/simulate.md): an LLM persona's replies are the texts the
OpenAI-compatible server wrote (the local fake), its calls and tokens counted and a failed call
sending nothing; LLM personas and an intervention that needs an LLM are refused without one;
with one, the intervention's llm.called events land in the run's database."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.core.config import Settings
from bot.sandbox import sim_report
from bot.sandbox.persona_llm import PersonaWriter, prompt
from bot.sandbox.personas import Persona, Player, Replies, load_personas
from bot.sandbox.simulation import Run, simulate
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply

ROOT = Path(__file__).resolve().parents[2]
PRACTICE = Path(__file__).parent / "fixtures" / "practice"
TALKER = """kind: llm
description: A retired teacher who writes in full sentences and likes to chat.
traits: [chatty, polite]
model: persona-model
timezone: Europe/London
replies:
  probability: 1
  statements: 0
  latency: {median_minutes: 3, spread: 0.5, max_minutes: 30}
  active_hours: ["00:00", "23:59"]
"""
KEEN = """description: answers every question at once, and half the other messages
replies:
  probability: 1
  statements: 0.5
  latency: {median_minutes: 2, spread: 0, max_minutes: 10}
  active_hours: ["00:00", "23:59"]
answers: {valid: 1, invalid: 0, off_topic: 0}
"""


def folder(tmp_path: Path, **personas: str) -> Path:
    where = tmp_path / "personas"
    where.mkdir()
    for name, text in personas.items():
        (where / f"{name}.yaml").write_text(text)
    return where


def settings(fake: FakeOpenAI | None = None) -> Settings:
    values: dict[str, Any] = {"LLM_MAX_RETRIES": 0, "LLM_TIMEOUT_SECONDS": 10}
    if fake is not None:
        values |= {"OPENAI_BASE_URL": fake.url + "/v1", "OPENAI_API_KEY": "test-key"}
    return Settings.model_validate(values)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=("fake-model", "persona-model")) as server:
        yield server


def run(tmp_path: Path, config: Settings, target: str, personas: Path, **options: Any) -> Run:
    options = {"participants": 3, "days": 2, "seed": 5} | options
    return simulate(config, target, personas, report=tmp_path / "report", **options)


def received(run: Run) -> list[str]:
    return [
        e.data.body  # type: ignore[attr-defined]
        for n in range(len(run.names))
        for e in run.cohort.events(n)
        if e.event_type == "message.received"
    ]


def test_an_llm_persona_sends_the_texts_the_llm_wrote_and_its_tokens_are_counted(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Every third call fails: the persona sends nothing for it, and the report counts it."""
    written: list[str] = []
    tokens: list[int] = []  # the fake's count for each call answered (~4 characters a token)

    def answer(body: dict[str, Any]) -> ScriptedReply:
        if (len(fake.requests)) % 3 == 0:
            return ScriptedReply.error(500, "scripted outage")
        written.append(f"written by the LLM, number {len(written) + 1}")
        tokens.append(len(json.dumps(body["messages"])) // 4 + 1)
        return ScriptedReply.text(written[-1])

    fake.script(*[answer] * 400)
    done = run(tmp_path, settings(fake), "demo", folder(tmp_path, talker=TALKER))
    try:
        found = sim_report.build(done)
        texts = received(done)
    finally:
        done.cohort.close()
    asked = fake.requests
    assert len(asked) > 3 and len(written) > 0
    assert sorted(texts) == sorted(written)  # nothing else was sent, nothing substituted
    talker = found["llm_personas"]["talker"]
    assert talker["calls"] == len(asked)
    assert talker["failed"] == len(asked) - len(written) > 0
    assert talker["model"] == "persona-model"
    assert {r.body["model"] for r in asked} == {"persona-model"}
    assert talker["prompt_tokens"] == sum(tokens)
    assert talker["completion_tokens"] > 0
    assert found["replies"]["talker"] == {"llm": len(written)}
    first = asked[0].messages
    assert "retired teacher" in first[0]["content"] and "chatty, polite" in first[0]["content"]
    assert [m["role"] for m in first[1:]] == ["user"] * (len(first) - 1)  # the bot's so far
    assert "Reply with a number" in first[-1]["content"]  # the first that asks something
    later = asked[-1].messages
    assert any(m["role"] == "assistant" and m["content"] in written for m in later)
    assert "<h2>LLM personas</h2>" in sim_report.html(found)


def test_only_the_text_of_an_llm_personas_reply_comes_from_the_llm() -> None:
    """The same stream gives an LLM persona the same replies at the same moments as a scripted
    one with the same behaviour (a crisis line is the declared one); a failed call sends
    nothing and is counted."""
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    base = Persona(
        description="x", replies=Replies(probability=0.6), crisis=0.1, crisis_lines=["help me"]
    )
    llm = base.model_copy(update={"kind": "llm"})

    class Writes:
        def write(self, persona: Persona, conversation: list[tuple[str, str]]) -> str | None:
            return None if len(conversation) % 5 == 0 else f"llm {len(conversation)}"

    scripted = Player("s", base, random.Random(9), start)
    played = Player("l", llm, random.Random(9), start, writer=Writes())
    messages = [f"Message {k}. How are you?" for k in range(60)]
    one = [scripted.reply(m, start) for m in messages]
    two = [played.reply(m, start) for m in messages]
    for a, b in zip(one, two, strict=True):
        if b is not None:
            assert a is not None and a.after == b.after
            assert (b.kind == "llm" and b.text.startswith("llm")) or b.text == a.text == "help me"
    sent = sum(r is not None for r in two)
    assert sent + played.failed == sum(r is not None for r in one) and played.failed > 0


def test_the_persona_prompt_carries_the_conversation_in_turn() -> None:
    persona = Persona(kind="llm", description="A night-shift nurse.", traits=["tired"])
    messages = prompt(persona, [("bot", "Hi! Ready?"), ("me", "yes"), ("bot", "Pick 1 or 2")])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "night-shift nurse" in messages[0]["content"] and "tired" in messages[0]["content"]


def test_a_failed_call_is_counted_by_its_reason_and_writes_nothing(fake: FakeOpenAI) -> None:
    from tests.llm_clients import chat_client

    fake.script(ScriptedReply.error(429, "slow down"), ScriptedReply.text("  "))
    writer = PersonaWriter(chat_client(fake))
    persona = Persona(kind="llm", description="x")
    assert writer.write(persona, [("bot", "hello?")]) is None
    assert writer.write(persona, [("bot", "hello?")]) is None
    assert writer.calls == 2 and writer.failed == 2 and len(writer.errors) == 2
    writer.client.close()


def test_llm_personas_without_an_llm_are_refused_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    where = folder(tmp_path, talker=TALKER, keen=KEEN)
    report = tmp_path / "r"
    result = CliRunner().invoke(
        cli, ["simulate", "demo", "--personas", str(where), "--report", str(report)]
    )
    assert result.exit_code == 1
    assert "LLM personas need an LLM" in result.output and "talker" in result.output
    assert "keen" not in result.output and "OPENAI_API_KEY" in result.output
    assert not report.exists()


def test_an_intervention_that_needs_an_llm_is_refused_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    where = folder(tmp_path, keen=KEEN)
    report = tmp_path / "r"
    result = CliRunner().invoke(
        cli, ["simulate", str(PRACTICE), "--personas", str(where), "--report", str(report)]
    )
    assert result.exit_code == 1
    assert "needs an LLM" in result.output and "step coach" in result.output
    assert not report.exists()


def test_an_intervention_that_needs_an_llm_runs_on_it_and_records_its_calls(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(*[ScriptedReply.text("Well done, keep going!")] * 200)
    done = run(tmp_path, settings(fake), str(PRACTICE), folder(tmp_path, keen=KEEN), participants=4)
    try:
        called = [
            e.data
            for n in range(len(done.names))
            for e in done.cohort.events(n)
            if e.event_type == "llm.called"
        ]
        found = sim_report.build(done)
    finally:
        done.cohort.close()
    assert len(called) == len(fake.requests) > 0
    coach = [c for c in called if c.purpose.startswith("step:coach")]  # type: ignore[attr-defined]
    assert coach and all(c.ok and c.prompt_tokens and c.completion_tokens for c in coach)  # type: ignore[attr-defined]
    assert found["failures"]["total"] == 0
    assert "llm_personas" not in found  # no persona is an LLM one


def test_the_example_llm_persona_is_valid_and_not_in_the_default_folder() -> None:
    """personas/llm/ holds it, so the default `--personas personas/` run stays offline."""
    found = load_personas(ROOT / "personas" / "llm")
    assert all(p.kind == "llm" for p in found.values()) and found
    assert all(p.kind == "scripted" for p in load_personas(ROOT / "personas").values())
