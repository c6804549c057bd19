"""The second line of crisis detection: one small structured LLM call per inbound message.

It runs beside the deterministic phrase screen (bot.conversation.safety), after it and before
the module answers; either line firing raises the alert. Both verdicts are recorded
(`safety.screened`, `safety.classified`), so a study can report how each line performed.
The classifier never blocks a turn: a timeout, an HTTP error or output that does not validate
is recorded as verdict `no_verdict` and the screen decides alone. Its prompt is
prompts/safety/classifier.md. SAFETY_CLASSIFIER=auto (the default) turns it on whenever an LLM
is configured; `off` turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import frontmatter
from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.conversation.llm import ChatClient
from bot.conversation.safety import ScreenResult
from bot.core.config import Settings
from bot.core.model_choice import ModelChoice
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.safety import SafetyClassified, SafetyScreened
from bot.store.events import EventData

PROMPT = Path(__file__).resolve().parents[2] / "prompts" / "safety" / "classifier.md"
PURPOSE = "safety_classifier"
RULE = "classifier"
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
_PROMPT_KEYS = {"model", "temperature", "max_tokens"}


class SafetyVerdict(BaseModel):
    """Your classification of the participant's message: its crisis category (or none), how
    severe, and one short sentence saying why, without quoting the message."""

    model_config = ConfigDict(extra="forbid")
    category: Literal["suicide", "self_harm", "harm_to_others", "overdose", "abuse", "none"]
    severity: Literal["none", "low", "medium", "high", "critical"]
    reason: str = Field(min_length=1, max_length=200)

    @model_validator(mode="after")
    def _coherent(self) -> SafetyVerdict:
        if (self.category == "none") != (self.severity == "none"):
            raise ValueError("severity is none exactly when category is none")
        return self


@dataclass(frozen=True)
class Classification:
    """One message's classification: the event to record and whether it fired."""

    event: SafetyClassified
    calls: tuple[EventData, ...]

    @property
    def crisis(self) -> bool:
        return self.event.verdict == "crisis"

    def as_screen(self) -> ScreenResult:
        """The verdict in the screen's terms, for the alert and the safety reply."""
        return ScreenResult(True, RULE, self.event.category, None, None)


@dataclass(frozen=True)
class ClassifierPrompt:
    """The classifier's system prompt and its model settings."""

    text: str
    choice: ModelChoice


@cache
def load_prompt(path: Path = PROMPT) -> ClassifierPrompt:
    """Read the prompt file; a broken one is a ValueError at start, never a silent default."""
    post = frontmatter.loads(path.read_text(encoding="utf-8"))
    unknown = sorted(set(post.metadata) - _PROMPT_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown front matter key(s) {unknown}")
    if not post.content.strip():
        raise ValueError(f"{path}: the prompt is empty")
    meta: dict[str, Any] = post.metadata  # YAML front matter: the author's values, as written
    choice = ModelChoice(meta.get("model"), meta.get("temperature"), meta.get("max_tokens"))
    return ClassifierPrompt(post.content.strip(), choice)


class SafetyClassifier:
    """Classifies one message with the configured LLM; thread-safe, never raises for LLM
    trouble."""

    def __init__(self, client: ChatClient, timeout_seconds: float, prompt: ClassifierPrompt):
        self.client = client.limited(timeout_seconds)
        self.prompt = prompt

    @classmethod
    def configured(cls, client: ChatClient, settings: Settings) -> SafetyClassifier | None:
        """The classifier SAFETY_CLASSIFIER asks for: None when off or no LLM is configured."""
        if settings.safety_classifier == "off" or not client.configured:
            return None
        return cls(client, settings.safety_classifier_timeout_seconds, load_prompt())

    def classify(self, text: str, message_event_id: str) -> Classification:
        messages = [
            {"role": "system", "content": self.prompt.text},
            {"role": "user", "content": text},
        ]
        value, calls = self.client.structured(
            messages, SafetyVerdict, purpose=PURPOSE, model=self.prompt.choice, repairs=0
        )
        call = next((c for c in reversed(calls) if isinstance(c, LLMCalled)), None)
        common = {
            "message_event_id": message_event_id,
            "call_id": call.call_id if call else None,
            "latency_ms": call.latency_ms if call else None,
        }
        if not isinstance(value, SafetyVerdict):
            error = (call.error if call else None) or "no reply"
            event = SafetyClassified(verdict="no_verdict", error=error, **common)
        else:
            event = SafetyClassified(
                verdict="none" if value.category == "none" else "crisis",
                category=None if value.category == "none" else value.category,
                severity=value.severity,
                reason=value.reason,
                **common,
            )
        return Classification(event, tuple(calls))


def screened_event(screened: ScreenResult, message_event_id: str) -> SafetyScreened:
    """The phrase screen's verdict as an event."""
    return SafetyScreened(
        message_event_id=message_event_id,
        crisis=screened.crisis,
        rule=screened.rule,
        category=screened.category,
        language=screened.language,
    )


def both_lines(
    classifier: SafetyClassifier | None, screened: ScreenResult, text: str, message_event_id: str
) -> tuple[ScreenResult, list[EventData]]:
    """The verdict the turn acts on (the screen's if it fired, else the classifier's if that
    fired) and the events recording both lines; the screen alone when there is no classifier."""
    if classifier is None or not text.strip():  # nothing to classify (an attachment alone)
        return screened, []
    classified = classifier.classify(text, message_event_id)
    events = [screened_event(screened, message_event_id), *classified.calls, classified.event]
    if not screened.crisis and classified.crisis:
        return classified.as_screen(), events
    return screened, events
