"""Fixtures of the LLM layer's tests: a scripted OpenAI-compatible server and a real client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.conversation.llm import ChatClient
from tests.fakes.openai_api import FakeOpenAI
from tests.llm_clients import chat_client


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def client(fake: FakeOpenAI) -> Iterator[ChatClient]:
    built = chat_client(fake)
    yield built
    built.close()
