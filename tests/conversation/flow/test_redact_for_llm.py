"""`redact_for_llm: true`: phone numbers, e-mail addresses and the participant's own name never
reach the LLM (checked in the scripted server's request log); the stored message is unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.conversation.redaction import Redactor
from modules import MODULES
from modules.step import StepModule
from tests.conversation.flow.conftest import Conversation
from tests.conversation.flow.test_applied import study
from tests.fakes.openai_api import ScriptedReply

SAID = "I'm Rosalind Featherstone, call me on 415 555 0134 or rosalind.f@example.org"


def _run(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: str,
) -> Conversation:
    study(tmp_path, extra)
    monkeypatch.setitem(MODULES, "step", StepModule(root=tmp_path))
    conversation = make_conversation(DEFAULT_REGION="US")
    conversation.enroll(intervention="study", name="Rosalind Featherstone")
    conversation.receive(SAID)
    conversation.fake.script(ScriptedReply.text("Hi!"), ScriptedReply.text("Tell me more."))
    conversation.run()
    return conversation


def _sent_to_llm(conversation: Conversation) -> str:
    return json.dumps([r.messages for r in conversation.fake.requests])


def test_with_redact_for_llm_the_llm_sees_placeholders_and_the_message_is_stored_as_sent(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conversation = _run(make_conversation, tmp_path, monkeypatch, "redact_for_llm: true\n")

    sent = _sent_to_llm(conversation)
    assert conversation.fake.requests
    for secret in ("Rosalind", "Featherstone", "415 555 0134", "rosalind.f@example.org"):
        assert secret not in sent
    assert "call me on [phone] or [email]" in sent
    assert "[name]" in sent
    [received] = conversation.data("message.received")
    assert received.body == SAID


def test_the_second_line_classifier_sees_the_redacted_message_too(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    study(tmp_path, "redact_for_llm: true\n")
    monkeypatch.setitem(MODULES, "step", StepModule(root=tmp_path))
    conversation = make_conversation(DEFAULT_REGION="US", SAFETY_CLASSIFIER="auto")
    conversation.enroll(intervention="study", name="Rosalind Featherstone")
    conversation.receive(SAID)
    verdict = {"category": "none", "severity": "none", "reason": "ordinary"}
    conversation.fake.script(
        ScriptedReply.text("Hi!"),
        ScriptedReply.structured(verdict),
        ScriptedReply.text("Tell me more."),
    )
    conversation.run()

    [classified] = conversation.data("safety.classified")
    assert classified.verdict == "none"
    sent = _sent_to_llm(conversation)
    for secret in ("Rosalind", "Featherstone", "415 555 0134", "rosalind.f@example.org"):
        assert secret not in sent
    assert sent.count("call me on [phone] or [email]") >= 2  # the classifier's and the step's


def test_without_it_the_llm_sees_the_message_as_written(
    make_conversation: Callable[..., Conversation],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conversation = _run(make_conversation, tmp_path, monkeypatch, "")

    assert "415 555 0134" in _sent_to_llm(conversation)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("text +44 20 7946 0958 now", "text [phone] now"),
        ("mail ADA@Example.co.uk", "mail [email]"),
        ("ada lovelace said hi to Ada", "[name] said hi to [name]"),
        ("Adams is not Ada", "Adams is not [name]"),
        ("no personal data, 3 walks", "no personal data, 3 walks"),
    ],
)
def test_the_redactor_replaces_phones_emails_and_the_name(text: str, expected: str) -> None:
    assert Redactor("Ada Lovelace", "GB").text(text) == expected


def test_tool_call_arguments_are_redacted_too() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "function": {"name": "x", "arguments": '{"a": "Ada"}'}}],
    }
    [out] = Redactor("Ada").messages([message])
    assert out["tool_calls"][0]["function"]["arguments"] == '{"a": "[name]"}'


def test_redact_for_llm_is_a_checked_key_of_intervention_yaml_and_in_its_schema() -> None:
    from pydantic import ValidationError

    from bot.interventions.language.format import Configuration
    from bot.interventions.language.schema import schemas

    base = {"title": "T", "version": "1", "module": "intake"}
    assert Configuration.model_validate({**base, "redact_for_llm": True}).redact_for_llm is True
    assert Configuration.model_validate(base).redact_for_llm is False
    with pytest.raises(ValidationError, match="redact_for_llm"):
        Configuration.model_validate({**base, "redact_for_llm": "maybe"})
    properties = schemas()["intervention.schema.json"]["properties"]
    assert properties["redact_for_llm"]["type"] == "boolean"
