"""A real ChatClient (real openai SDK) built from settings and pointed at a FakeOpenAI."""

from __future__ import annotations

from typing import Any

from bot.conversation.llm import ChatClient
from bot.core.config import Settings
from tests.fakes.openai_api import FakeOpenAI


def chat_client(fake: FakeOpenAI, **settings: Any) -> ChatClient:
    """Settings by their environment names override the test defaults (2 s, no retries)."""
    values = {
        "OPENAI_BASE_URL": fake.url + "/v1",
        "OPENAI_API_KEY": "test-key",
        "TANDEM_MODEL": "fake-model",
        "LLM_TIMEOUT_SECONDS": 2,
        "LLM_MAX_RETRIES": 0,
        **settings,
    }
    return ChatClient.from_settings(Settings.model_validate(values))
