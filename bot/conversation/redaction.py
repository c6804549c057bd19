"""`redact_for_llm: true` (intervention.yaml): phone numbers, e-mail addresses and the
participant's own name are replaced with placeholders in everything sent to the LLM. What is
stored (the message, the transcript) is unchanged; only the request is redacted.

Phone numbers are found by `phonenumbers.PhoneNumberMatcher` (in the participant's region and
in international form), not by a hand-written pattern.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import phonenumbers

PHONE = "[phone]"
EMAIL = "[email]"
NAME = "[name]"
_EMAIL = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")
_MIN_NAME_PART = 3  # "Al" or "Jo" alone would redact too much ordinary text


@dataclass(frozen=True)
class Redactor:
    """Redacts text for one participant: their `name` (whole, and each part of it) and any
    phone number or e-mail address; `region` reads national phone numbers."""

    name: str | None = None
    region: str | None = None

    def text(self, text: str) -> str:
        text = _EMAIL.sub(EMAIL, text)
        text = self._phones(text)
        for pattern in self._names():
            text = pattern.sub(NAME, text)
        return text

    def _phones(self, text: str) -> str:
        spans = [
            (m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(text, self.region or "US")
        ]
        for start, end in reversed(spans):
            text = text[:start] + PHONE + text[end:]
        return text

    def _names(self) -> list[re.Pattern[str]]:
        name = (self.name or "").strip()
        if not name:
            return []
        parts = [p for p in re.split(r"\s+", name) if len(p) >= _MIN_NAME_PART]
        wanted = sorted({name, *parts}, key=len, reverse=True)  # the whole name first
        return [re.compile(rf"(?<!\w){re.escape(w)}(?!\w)", re.IGNORECASE) for w in wanted]

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """A copy of chat `messages` with the text of each redacted (tool calls' arguments
        included: they may quote the participant)."""
        return [self._message(m) for m in messages]

    def _message(self, message: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(message)
        content = out.get("content")
        if isinstance(content, str):
            out["content"] = self.text(content)
        elif isinstance(content, list):
            out["content"] = [
                {**part, "text": self.text(part["text"])}
                if isinstance(part, Mapping) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        calls = out.get("tool_calls")
        if isinstance(calls, list):
            out["tool_calls"] = [_redact_call(self, call) for call in calls]
        return out


def _redact_call(redactor: Redactor, call: Any) -> Any:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call
    function = dict(call["function"])
    if isinstance(function.get("arguments"), str):
        function["arguments"] = redactor.text(function["arguments"])
    return {**call, "function": function}


class RedactingClient:
    """The LLM client, with every request's text redacted first (same methods, same events:
    the `llm.called` event records the redacted request, as it was sent)."""

    def __init__(self, client: Any, redactor: Redactor) -> None:
        self._client = client
        self.redactor = redactor

    def chat(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> Any:
        return self._client.chat(self.redactor.messages(messages), **kwargs)

    def complete(self, system: str, user: str, purpose: str, **kwargs: Any) -> Any:
        redact = self.redactor.text
        return self._client.complete(redact(system), redact(user), purpose, **kwargs)

    def structured(self, messages: Sequence[Mapping[str, Any]], *args: Any, **kwargs: Any) -> Any:
        return self._client.structured(self.redactor.messages(messages), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
