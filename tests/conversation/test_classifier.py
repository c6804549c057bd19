"""The second-line classifier's parts: its verdict model, its prompt file, when it is on."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.conversation.classifier import (
    CATEGORIES,
    SafetyClassifier,
    SafetyVerdict,
    both_lines,
    load_prompt,
)
from bot.conversation.llm import ChatClient, check_strict
from bot.conversation.safety import CrisisScreen, ScreenResult
from bot.core.config import load_settings
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply
from tests.llm_clients import chat_client


def test_the_verdict_model_is_strict_and_its_categories_are_the_screens() -> None:
    check_strict(SafetyVerdict)
    catalogue = CrisisScreen.from_default()
    found = {catalogue.check(text).category for text in ("I want to kill myself",)}
    assert found <= set(CATEGORIES)
    schema = SafetyVerdict.model_json_schema()["properties"]["category"]["enum"]
    assert sorted(schema) == sorted([*CATEGORIES, "none"])


@pytest.mark.parametrize(
    "value",
    [
        {"category": "none", "severity": "high", "reason": "x"},
        {"category": "overdose", "severity": "none", "reason": "x"},
        {"category": "fear", "severity": "high", "reason": "x"},
        {"category": "abuse", "severity": "high", "reason": ""},
        {"category": "abuse", "severity": "high", "reason": "x", "quote": "y"},
        {"category": "abuse", "severity": "high", "reason": "x" * 201},
    ],
    ids=["none-but-severe", "crisis-but-none", "unknown", "no-reason", "extra-key", "long"],
)
def test_a_malformed_verdict_does_not_validate(value: dict) -> None:
    with pytest.raises(ValidationError):
        SafetyVerdict.model_validate(value)


def test_the_prompt_file_loads_with_its_own_sampling() -> None:
    prompt = load_prompt()
    assert "harm_to_others" in prompt.text and "self_harm" in prompt.text
    assert prompt.choice.temperature == 0


def test_a_prompt_file_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "classifier.md"
    path.write_text("---\ntools: [x]\n---\nClassify.\n")
    with pytest.raises(ValueError, match="unknown front matter"):
        load_prompt(path)


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({"OPENAI_API_KEY": "k"}, True),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, True),
        ({"OPENAI_API_KEY": "k", "SAFETY_CLASSIFIER": "off"}, False),
        ({"OPENAI_API_KEY": "k", "SAFETY_CLASSIFIER": " OFF "}, False),
        ({}, False),  # no LLM configured: nothing is called, not even the classifier
    ],
)
def test_the_classifier_is_on_whenever_an_llm_is_configured_unless_turned_off(
    env: dict, on: bool
) -> None:
    settings = load_settings(env, env_file=None)
    client = ChatClient.from_settings(settings)
    assert (SafetyClassifier.configured(client, settings) is not None) is on
    client.close()


def test_an_unknown_classifier_setting_is_refused() -> None:
    with pytest.raises(Exception, match="SAFETY_CLASSIFIER"):
        load_settings({"SAFETY_CLASSIFIER": "sometimes"}, env_file=None)


def test_either_line_firing_decides_and_both_verdicts_are_recorded() -> None:
    with FakeOpenAI() as fake:
        client = chat_client(fake)
        classifier = SafetyClassifier(client, 2, load_prompt())
        fake.script(
            ScriptedReply.structured({"category": "suicide", "severity": "high", "reason": "r"}),
            ScriptedReply.structured({"category": "none", "severity": "none", "reason": "r"}),
        )
        missed = ScreenResult(crisis=False)
        caught = ScreenResult(True, "en.suicide.direct", "suicide", "en", "kill myself")

        by_classifier, first = both_lines(classifier, missed, "text", "ev1")
        by_screen, second = both_lines(classifier, caught, "text", "ev2")
        client.close()

    assert (by_classifier.crisis, by_classifier.rule) == (True, "classifier")
    assert by_screen is caught
    assert [e.event_type for e in first] == ["safety.screened", "llm.called", "safety.classified"]
    assert [e.message_event_id for e in (first[0], first[2])] == ["ev1", "ev1"]
    assert (second[0].crisis, second[2].verdict) == (True, "none")
    assert fake.requests[0].body["temperature"] == 0
    assert fake.requests[0].body["response_format"]["json_schema"]["name"] == "SafetyVerdict"


def test_without_a_classifier_the_screen_decides_alone_and_nothing_is_recorded() -> None:
    caught = ScreenResult(True, "en.suicide.direct", "suicide", "en", "kill myself")
    assert both_lines(None, caught, "text", "ev") == (caught, [])


def test_a_message_without_text_is_not_sent_to_the_classifier() -> None:
    with FakeOpenAI() as fake:  # nothing scripted: a call would be an HTTP 500 and recorded
        client = chat_client(fake)
        classifier = SafetyClassifier(client, 2, load_prompt())
        missed = ScreenResult(crisis=False)

        assert both_lines(classifier, missed, "  ", "ev") == (missed, [])
        client.close()
    assert fake.requests == []
