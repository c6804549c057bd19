"""The chat sandbox's stand-in for the LLM client when none is configured: it fails at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.conversation.embeddings import EmbeddingError
from bot.conversation.llm import ChatOutcome
from bot.core.model_choice import ModelChoice
from bot.store.event_types.conversation import LLMCalled
from bot.store.events import EventData, new_id

NO_LLM = "no LLM configured"


class NoLLM:
    """Answers every call as a failed one (recorded as `llm.called` with ok=False), with no
    network: the flow then sends the fallback, as in production when the LLM is down.
    `calls` counts the calls, so the sandbox can say once why fallbacks are sent."""

    configured = False  # read by whatever asks whether an LLM is there (the classifier)

    def __init__(self) -> None:
        self.calls = 0

    def chat(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] = (),
        model: str | ModelChoice | None = None,
        purpose: str,
    ) -> ChatOutcome:
        self.calls += 1
        event = LLMCalled(
            call_id=new_id(),
            purpose=purpose,
            model=ModelChoice.of(model).name or "-",
            ok=False,
            error=NO_LLM,
        )
        return ChatOutcome(event, error=NO_LLM)

    def complete(
        self, system: str, user: str, purpose: str, *, model: str | ModelChoice | None = None
    ) -> tuple[str | None, list[EventData]]:
        return None, [self.chat([], model=model, purpose=purpose).event]

    def structured(
        self,
        messages: Sequence[Any],
        model_cls: type,
        *,
        purpose: str,
        model: str | ModelChoice | None = None,
        repairs: int = 1,
    ) -> tuple[None, list[EventData]]:
        return None, [self.chat([], model=model, purpose=purpose).event]

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """A library ranked by embeddings cannot rank: `retrieval.failed`, the step answers."""
        self.calls += 1
        raise EmbeddingError(NO_LLM)

    def close(self) -> None:
        """Nothing to close: no connection was ever opened."""
