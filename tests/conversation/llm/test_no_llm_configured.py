"""Without OPENAI_API_KEY or OPENAI_BASE_URL no call is made anywhere: "no LLM configured"."""

from __future__ import annotations

import logging

from pydantic import BaseModel

from bot.conversation.llm import NO_LLM, ChatClient
from bot.core.config import load_settings


class Verdict(BaseModel):
    """A yes or no."""

    ok: bool


def _client() -> ChatClient:
    return ChatClient.from_settings(load_settings({"LLM_MAX_RETRIES": "3"}, env_file=None))


def test_a_chat_fails_at_once_with_no_llm_configured():
    outcome = _client().chat([{"role": "user", "content": "hi"}], purpose="test")

    assert outcome.error == NO_LLM
    assert outcome.event.ok is False and outcome.event.error == NO_LLM
    assert outcome.event.latency_ms == 0.0  # no request went out, not even a failed one


def test_a_structured_call_fails_the_same_way():
    value, events = _client().structured([{"role": "user", "content": "hi"}], Verdict, purpose="t")

    assert value is None
    assert [e.error for e in events] == [NO_LLM]


def test_the_first_call_says_no_llm_is_configured_once_and_the_start_says_nothing(caplog):
    with caplog.at_level(logging.WARNING):
        client = _client()
        assert caplog.records == []  # an intervention in fixed wording never needs one
        client.chat([{"role": "user", "content": "hi"}], purpose="test")
        client.chat([{"role": "user", "content": "again"}], purpose="test")
    said = [r.getMessage() for r in caplog.records if "OPENAI_BASE_URL" in r.getMessage()]
    assert said == [
        "no LLM configured (neither OPENAI_API_KEY nor OPENAI_BASE_URL): this LLM call and "
        "every later one fail at once and send fallbacks"
    ]


def test_an_openai_base_url_alone_counts_as_configured():
    settings = load_settings({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, env_file=None)
    assert ChatClient.from_settings(settings).configured
