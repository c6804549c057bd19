"""The debug trace text and who may receive it (pure)."""

from __future__ import annotations

from bot.conversation.debug_trace import (
    MAX_TRACE,
    TurnReport,
    public,
    trace_messages,
    trace_text,
    wanted,
)
from bot.conversation.tool_loop import ToolTrace
from bot.store.event_types.conversation import LLMCalled

PARTICIPANT = {"phone": "+14155552671", "channel": "whatsapp", "debug": False}


def test_only_a_flagged_participant_or_a_listed_phone_gets_traces() -> None:
    assert not wanted(PARTICIPANT, {"+15005550100"})
    assert wanted({**PARTICIPANT, "debug": True}, set())
    assert wanted(PARTICIPANT, {"+14155552671"})


def test_the_trace_shows_state_module_tools_tokens_and_latency() -> None:
    calls = [
        LLMCalled(
            call_id="a",
            purpose="intake",
            model="m",
            prompt_tokens=100,
            completion_tokens=20,
            latency_ms=700.4,
        ),
        LLMCalled(
            call_id="b",
            purpose="intake",
            model="m",
            prompt_tokens=150,
            completion_tokens=10,
            latency_ms=300.0,
        ),
    ]
    tools = [ToolTrace("save_user_profile", True, 'SUCCESS: profile saved\n{"status": 1}')]
    report = TurnReport("intake", "feedback", "intake", tools, calls)

    assert trace_text(report).splitlines() == [
        "🐛 DEBUG: state intake → feedback · module intake",
        'tool save_user_profile ok: SUCCESS: profile saved {"status": 1}',
        "llm: 2 call(s), 250+30 tokens, 1000 ms",
    ]


def test_a_long_trace_is_cut_and_goes_to_the_participants_own_address() -> None:
    tools = [ToolTrace(f"tool_{n}", False, "x" * 80) for n in range(40)]
    report = TurnReport("intake", "intake", "intake", tools)

    (message,) = trace_messages(PARTICIPANT, report)

    assert len(message.body) == MAX_TRACE and message.body.endswith("…")
    assert (message.to_address, message.kind, message.to_participant) == (
        "whatsapp:+14155552671",
        "debug",
        False,
    )


def test_public_text_drops_urls_host_ports_ips_and_provider_error_bodies() -> None:
    assert public("could not connect to http://10.0.0.5:11434/v1 (3 attempt(s))") == (
        "could not connect to the server (3 attempt(s))"
    )
    assert public("cannot reach llm.lab.internal:8000 or 192.168.1.20") == (
        "cannot reach the server or the server"
    )
    assert public("HTTP 401: Incorrect API key provided: sk-abc (1 attempt(s))") == (
        "HTTP 401 (1 attempt(s))"
    )
    assert public("timed out: no answer within 45 s") == "timed out: no answer within 45 s"
