"""Model settings in the request the scripted LLM receives and in each `llm.called`: the
server's defaults (PromptPipe's 0.1 and 1000), an intervention's own, a prompt file's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.conversation.module import PromptModule
from bot.conversation.prompts import load_prompt
from modules import MODULES
from modules.step import StepModule
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply


def study(root: Path, settings: str) -> None:
    folder = root / "study"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "intervention.yaml").write_text(
        f"title: Study\nversion: 1\nmodule: intake\n{settings}"
    )


def test_without_settings_every_call_asks_for_temperature_0_1_and_1000_tokens(
    conversation: Conversation,
) -> None:
    conversation.fake.script(ScriptedReply.text("Welcome!"), ScriptedReply.text("What habit?"))
    conversation.enroll(conversation_state="intake")
    conversation.receive("hello")

    conversation.run()

    asked = [(r.body["temperature"], r.body["max_tokens"]) for r in conversation.fake.requests]
    assert asked == [(0.1, 1000), (0.1, 1000)]
    recorded = [(c.model, c.temperature, c.max_tokens) for c in conversation.data("llm.called")]
    assert recorded == [("fake-model", 0.1, 1000)] * 2


def test_the_server_defaults_come_from_tandem_temperature_and_tandem_max_tokens(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation(TANDEM_TEMPERATURE="0.7", TANDEM_MAX_TOKENS="250")
    conversation.fake.script(ScriptedReply.text("Welcome!"), ScriptedReply.text("Hi!"))
    conversation.enroll(conversation_state="intake")
    conversation.receive("hello")

    conversation.run()

    asked = [(r.body["temperature"], r.body["max_tokens"]) for r in conversation.fake.requests]
    assert asked == [(0.7, 250), (0.7, 250)]


def test_an_interventions_temperature_and_max_tokens_apply_to_its_modules_calls(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study(tmp_path, "temperature: 0.4\nmax_tokens: 300\n")
    monkeypatch.setitem(MODULES, "step", StepModule(root=tmp_path))  # build_handler reads its root
    conversation = make_conversation()
    conversation.fake.script(ScriptedReply.text("Welcome!"), ScriptedReply.text("Hi!"))
    conversation.enroll(intervention="study", conversation_state="intake")
    conversation.receive("hello")

    conversation.run()

    asked = [(r.body["temperature"], r.body["max_tokens"]) for r in conversation.fake.requests]
    assert asked == [(0.4, 300), (0.4, 300)]
    recorded = [(c.temperature, c.max_tokens) for c in conversation.data("llm.called")]
    assert recorded == [(0.4, 300)] * 2


def test_a_prompt_files_settings_win_over_the_interventions(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study(tmp_path, "temperature: 0.4\nmax_tokens: 300\n")
    monkeypatch.setitem(MODULES, "step", StepModule(root=tmp_path))
    prompt = tmp_path / "intake.md"
    prompt.write_text(
        "---\nfallback: Sorry.\nmodel: careful-model\ntemperature: 0\nmax_tokens: 64\n---\n"
        "You are a test coach.\n"
    )
    monkeypatch.setitem(MODULES, "intake", PromptModule("intake", load_prompt(prompt)))
    conversation = make_conversation()
    conversation.fake.script(ScriptedReply.text("Welcome!"), ScriptedReply.text("Hi!"))
    conversation.enroll(intervention="study", conversation_state="intake")
    conversation.receive("hello")

    conversation.run()

    asked = [
        (r.body["model"], r.body["temperature"], r.body["max_tokens"])
        for r in conversation.fake.requests
    ]
    assert asked == [("careful-model", 0, 64)] * 2
