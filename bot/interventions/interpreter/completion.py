"""Completing a rendered template's slots in order, each answer passed on as data.

The conversation sent for slot k is: a system message with the frame and the text before the
first slot; then, for each earlier slot, its answer as an assistant message and the text that
followed it as a system message; then the slot's instruction. Answers are message content,
never template source. Free-text slots go through the tool loop (the last speakable slot, the
reply, with the step's tools); pick/bool/int slots through structured output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.conversation.module import Converse, Structured
from bot.core.model_choice import ModelChoice
from bot.interventions.language.libraries import Embed
from bot.interventions.language.templates import Rendered, Slot
from bot.store.events import EventData

REPLY = Slot("speak", "reply")


@dataclass(frozen=True)
class Asker:
    """The LLM as the pipeline uses it, with the model chosen for this template."""

    converse: Converse
    structured: Structured | None
    model: str | ModelChoice | None = None
    embed: Embed | None = None  # for libraries ranked by embeddings


@dataclass
class Completion:
    """Every slot's value (in order), the slot sent (if any), what was recorded, and why the
    completion stopped early (`error`)."""

    values: dict[str, Any] = field(default_factory=dict)
    sent: str | None = None
    events: list[EventData] = field(default_factory=list)
    error: str | None = None
    tools_called: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str | None:
        return self.values.get(self.sent) if self.sent else None


def complete(
    rendered: Rendered,
    asker: Asker,
    *,
    purpose: str,
    frame: str = "",
    tools: Sequence[str] = (),
    notes: Sequence[str] = (),
    reply: bool = True,
) -> Completion:
    """Complete every slot; with `reply`, the last speakable slot is the message to send (a
    template without slots is one implicit `[[reply]]` at its end)."""
    texts, slots = list(rendered.texts), list(rendered.slots)
    if reply and not slots:
        slots, texts = [REPLY], [*texts, ""]
    speaking = [i for i, slot in enumerate(slots) if slot.speakable] if reply else []
    reply_at = speaking[-1] if speaking else None
    result = Completion(sent=slots[reply_at].name if reply_at is not None else None)
    opening = "\n\n".join(part for part in (frame.strip(), texts[0].strip()) if part)
    messages: list[dict[str, Any]] = [{"role": "system", "content": opening}] if opening else []
    for index, slot in enumerate(slots):
        ask = [*messages, *({"role": "system", "content": note} for note in notes)]
        ask.append({"role": "system", "content": slot.instruction(note=not reply)})
        name = f"{purpose}:{slot.name}"
        value = _typed(slot, ask, asker, name, result) if slot.typed else None
        if not slot.typed:
            offered = tools if index == reply_at else ()
            value = _text(ask, offered, asker, name, result)
        if result.error:
            return result
        result.values[slot.name] = value
        shown = value if isinstance(value, str) else json.dumps(value)
        messages.append({"role": "assistant", "content": shown})
        following = texts[index + 1].strip()
        if following:
            messages.append({"role": "system", "content": following})
    return result


def _text(
    ask: list[dict[str, Any]], tools: Sequence[str], asker: Asker, purpose: str, into: Completion
) -> str | None:
    looped = asker.converse(ask, tools, purpose, model=asker.model)
    into.events += looped.events
    into.tools_called += looped.tools_called
    text = (looped.text or "").strip()
    if looped.error or not text:
        into.error = f"{purpose}: {looped.error or 'empty reply'}"
        return None
    return text


def _typed(
    slot: Slot, ask: list[dict[str, Any]], asker: Asker, purpose: str, into: Completion
) -> Any:
    if asker.structured is None:
        into.error = f"{purpose}: structured output is not available"
        return None
    value, events = asker.structured(ask, slot.model(), purpose, model=asker.model)
    into.events += events
    if value is None:
        reason = next((err for e in reversed(events) if (err := getattr(e, "error", None))), None)
        into.error = f"{purpose}: no valid {slot.kind} value ({reason or 'no reply'})"
        return None
    return value.value  # type: ignore[attr-defined]  # slot.model() is made at runtime with a `value` field
