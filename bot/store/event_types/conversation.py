"""Conversation events: LLM calls, tool calls, state transitions, profile saves, failed turns."""

from __future__ import annotations

from typing import Any, Literal

from bot.store.events import EventData, event, fields


@event("llm.called")
class LLMCalled(EventData):
    """One chat completion: what was asked (unless STORE_PROMPTS=false), what came back, cost."""

    personal = fields("messages", "response", "error")
    plain = fields("finish_reason", "model", "purpose")

    call_id: str
    purpose: str
    model: str
    ok: bool = True
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    finish_reason: str | None = None
    messages: list[dict[str, Any]] | None = None
    response: dict[str, Any] | None = None
    error: str | None = None
    # Retries the SDK made before this answer (None when the call failed).
    retries: int | None = None
    # The sampling asked for (None in calls recorded before they were).
    temperature: float | None = None
    max_tokens: int | None = None


@event("tool.called")
class ToolCalled(EventData):
    personal = fields("arguments", "result")
    plain = fields("tool")

    call_id: str
    tool: str
    arguments: dict[str, Any]
    result: str


@event("tool.failed")
class ToolFailed(EventData):
    """A tool call that was refused or failed; the model was told `error` precisely."""

    personal = fields("arguments", "error", "detail")
    plain = fields("tool")

    call_id: str
    tool: str
    arguments: str
    error: str
    # What went wrong inside (an exception's type and message); never shown to the model.
    detail: str | None = None


@event("turn.failed")
class TurnFailed(EventData):
    """The turn could not be completed as intended; `fallback` says what was sent instead."""

    personal = fields("fallback", "reason")

    reason: str
    fallback: str | None = None


@event("state.transitioned")
class StateTransitioned(EventData):
    personal = fields("reason")
    plain = fields("from_state", "to_state")

    from_state: str | None
    to_state: str
    reason: str | None = None
    source: Literal["tool", "timer", "flow", "operator", "intervention", "broadcast"] = "tool"


@event("profile.saved")
class ProfileSaved(EventData):
    """Profile fields set (`changes`) and cleared (`cleared`)."""

    personal = fields("changes")
    plain = fields("cleared")

    changes: dict[str, Any] = {}
    cleared: list[str] = []
    source: Literal["tool", "flow", "operator", "intervention"] = "tool"
