"""Debug traces (pure): who gets them, and the "🐛 DEBUG:" text sent after a turn's reply.

A trace goes only to the participant's own phone, and only if their `debug` flag is on or
their phone is listed in DEBUG_PHONES. It is queued after the reply (PromptPipe sent it first),
as a message of kind "debug" that is not part of the participant's transcript.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.channel import outbound
from bot.core.addresses import format_address
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.messages import MessageQueued
from bot.store.events import EventData

PREFIX = "🐛 DEBUG:"
MAX_RESULT = 80
MAX_TRACE = 1500
# A trace goes to a phone: internal addresses and what a provider said in an error body stay
# in the logs and events (for the operator), never in the text.
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_HOST_PORT = re.compile(r"\b(?:\d{1,3}(?:\.\d{1,3}){3}|localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b")
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_STATUS_BODY = re.compile(r"\b(HTTP \d{3}):[^;()]*?(?=\s*[;(]|\s*$)")


class ToolLine(Protocol):
    """A tool call as the tool loop traces it (bot.conversation.tool_loop.ToolTrace)."""

    @property
    def name(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def excerpt(self) -> str: ...


@dataclass(frozen=True)
class TurnReport:
    """What a turn did, for the trace."""

    state_before: str | None
    state_after: str | None
    module: str
    tools: Sequence[ToolLine] = ()
    events: Sequence[EventData] = ()
    notes: Sequence[str] = field(default_factory=tuple)


def wanted(participant: Mapping[str, Any], debug_phones: Collection[str]) -> bool:
    """Whether this participant gets traces: their flag, or their phone in DEBUG_PHONES."""
    return bool(participant.get("debug")) or participant.get("phone") in debug_phones


def trace_text(report: TurnReport) -> str:
    """The trace: state, module, each tool with its (truncated) result, LLM tokens and time."""
    before, after = report.state_before or "none", report.state_after or "none"
    state = before if before == after else f"{before} → {after}"
    lines = [f"{PREFIX} state {state} · module {report.module}"]
    for tool in report.tools:
        mark = "ok" if tool.ok else "FAILED"
        result = _cut(" ".join(public(tool.excerpt).split()), MAX_RESULT)
        lines.append(f"tool {tool.name} {mark}: {result}")
    if not report.tools:
        lines.append("tools: none")
    calls = [e for e in report.events if isinstance(e, LLMCalled)]
    if calls:
        prompt = sum(c.prompt_tokens or 0 for c in calls)
        completion = sum(c.completion_tokens or 0 for c in calls)
        latency = sum(c.latency_ms or 0 for c in calls)
        failed = sum(not c.ok for c in calls)
        lines.append(
            f"llm: {len(calls)} call(s), {prompt}+{completion} tokens, {latency:.0f} ms"
            + (f", {failed} failed" if failed else "")
        )
    else:
        lines.append("llm: no calls")
    lines += [public(note) for note in report.notes]
    return _cut("\n".join(lines), MAX_TRACE)


def public(text: str) -> str:
    """`text` without internal addresses (URLs, host:port, IPs) or provider error bodies."""
    text = _STATUS_BODY.sub(r"\1", text)
    text = _URL.sub("the server", text)
    text = _HOST_PORT.sub("the server", text)
    return _IP.sub("the server", text).rstrip()


def trace_messages(participant: Mapping[str, Any], report: TurnReport) -> list[MessageQueued]:
    """The trace queued to the participant's own address (not part of their transcript)."""
    channel = participant["channel"]
    address = format_address(channel, participant["phone"])
    return outbound.to_address(address, channel, trace_text(report), kind="debug")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
