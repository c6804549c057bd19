"""The tool loop with the real openai SDK against the fake server, and dummy tools."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ConfigDict, Field

from bot.conversation.tool_loop import CompletionFailed, ToolTrace, run_tool_loop
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.store.event_types.conversation import LLMCalled, ProfileSaved, ToolCalled, ToolFailed
from tests.fakes.openai_api import ScriptedReply
from tests.llm_clients import chat_client

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
MESSAGES = [{"role": "system", "content": "You help."}, {"role": "user", "content": "Hi"}]


class SaveGoal(BaseModel):
    """Save the participant's goal."""

    model_config = ConfigDict(extra="forbid")
    goal: str


class ReadGoal(BaseModel):
    """Read back the saved goal."""

    model_config = ConfigDict(extra="forbid")


class SetReminder(BaseModel):
    """Remind the participant later."""

    model_config = ConfigDict(extra="forbid")
    delay_minutes: int = Field(ge=0)
    note: str | None = None


def save_goal(arguments: SaveGoal, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(True, "goal saved", [ProfileSaved(changes={"goal": arguments.goal})])


def read_goal(arguments: ReadGoal, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(True, f"goal is {ctx.participant['profile'].get('goal')}")


def set_reminder(arguments: SetReminder, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(True, f"reminder in {arguments.delay_minutes} min")


def explode(arguments: ReadGoal, ctx: ToolContext) -> ToolOutcome:
    raise RuntimeError("participant wrote: I feel awful")


def refuse(arguments: SaveGoal, ctx: ToolContext) -> ToolOutcome:
    sub_call = LLMCalled(call_id="sub", purpose="check_goal", model="fake-model")
    return ToolOutcome(
        False,
        "goals must be about a habit",
        events=[ProfileSaved(changes={"goal": arguments.goal})],
        side_events=[sub_call],
    )


TOOLS = [
    ToolSpec("save_goal", SaveGoal, save_goal),
    ToolSpec("read_goal", ReadGoal, read_goal),
    ToolSpec("set_reminder", SetReminder, set_reminder),
]


@pytest.fixture
def ctx() -> ToolContext:
    participant = {
        "participant_id": "p1",
        "conversation_state": "intake",
        "profile": {},
        "version": 4,
    }
    return ToolContext(participant=participant, now=NOW)


def run(client, ctx, tools=TOOLS, **kwargs):
    return run_tool_loop(client, MESSAGES, tools, ctx, purpose="intake", **kwargs)


def types(events):
    return [event.event_type for event in events]


def tool_messages(request):
    return [m for m in request.messages if m["role"] == "tool"]


def test_a_reply_without_tool_calls_is_the_text(fake, client, ctx):
    fake.script(ScriptedReply.text("Hello! What habit would you like?"))

    result = run(client, ctx)

    assert (result.text, result.error, result.rounds) == (
        "Hello! What habit would you like?",
        None,
        1,
    )
    assert types(result.events) == ["llm.called"]


def test_a_tool_round_then_text_records_the_tool_and_folds_its_events(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("save_goal", {"goal": "walk daily"})]),
        ScriptedReply.text("Saved! Walking it is."),
    )

    result = run(client, ctx)

    assert result.text == "Saved! Walking it is."
    assert result.rounds == 2
    assert types(result.events) == ["llm.called", "tool.called", "profile.saved", "llm.called"]
    called = result.events[1]
    assert (called.tool, called.arguments, called.result) == (
        "save_goal",
        {"goal": "walk daily"},
        "goal saved",
    )
    assert ctx.participant["profile"] == {"goal": "walk daily"}
    assert ctx.participant["version"] == 4
    assert result.tools_called == [ToolTrace("save_goal", True, "goal saved")]
    assistant, tool = fake.requests[1].messages[-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["function"] == {
        "name": "save_goal",
        "arguments": '{"goal": "walk daily"}',
    }
    assert tool == {"role": "tool", "tool_call_id": "call_001_0", "content": "goal saved"}


def test_two_calls_in_one_round_run_in_order_and_the_second_sees_the_first(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("save_goal", {"goal": "stretch"}), ("read_goal", {})]),
        ScriptedReply.text("Done."),
    )

    result = run(client, ctx)

    assert [t.name for t in result.tools_called] == ["save_goal", "read_goal"]
    assert [m["content"] for m in tool_messages(fake.requests[1])] == [
        "goal saved",
        "goal is stretch",
    ]
    assert [m["tool_call_id"] for m in tool_messages(fake.requests[1])] == [
        "call_001_0",
        "call_001_1",
    ]


def test_the_tools_are_offered_strict_in_every_round(fake, client, ctx):
    fake.script(ScriptedReply.tool_calls([("read_goal", {})]), ScriptedReply.text("ok"))

    run(client, ctx)

    for request in fake.requests:
        assert [t["function"]["name"] for t in request.tools] == [s.name for s in TOOLS]
        assert all(t["function"]["strict"] for t in request.tools)


def test_an_unknown_tool_is_named_with_the_available_ones_and_the_loop_goes_on(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("transition_state", {"target": "feedback"})]),
        ScriptedReply.text("Let us continue."),
    )

    result = run(client, ctx)

    failed = result.events[1]
    assert isinstance(failed, ToolFailed)
    assert (
        failed.error
        == "unknown tool 'transition_state'; available: read_goal, save_goal, set_reminder"
    )
    assert tool_messages(fake.requests[1])[0]["content"] == f"Error: {failed.error}"
    assert result.text == "Let us continue."


def test_arguments_that_are_not_json_are_named_and_replayed_as_an_empty_object(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("save_goal", '{"goal": "walk')]),
        ScriptedReply.text("Sorry, what was the goal?"),
    )

    result = run(client, ctx)

    failed = result.events[1]
    assert failed.arguments == '{"goal": "walk'
    assert failed.error.startswith("arguments are not valid JSON (Unterminated string")
    assistant = fake.requests[1].messages[-2]
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    assert result.text == "Sorry, what was the goal?"


def test_arguments_that_are_json_but_not_an_object_are_refused(fake, client, ctx):
    fake.script(ScriptedReply.tool_calls([("save_goal", '["walk"]')]), ScriptedReply.text("ok"))

    result = run(client, ctx)

    assert result.events[1].error == "arguments must be a JSON object, not a list"


def test_invalid_fields_are_named_to_the_model_and_the_loop_continues(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("set_reminder", {"delay_minutes": -5, "colour": "red"})]),
        ScriptedReply.tool_calls([("set_reminder", {"delay_minutes": 30, "note": None})]),
        ScriptedReply.text("I'll remind you in 30 minutes."),
    )

    result = run(client, ctx)

    told = tool_messages(fake.requests[1])[0]["content"]
    assert told == (
        "Error: invalid arguments: field 'delay_minutes': Input should be greater than or "
        "equal to 0; field 'colour': Extra inputs are not permitted"
    )
    assert result.tools_called == [
        ToolTrace("set_reminder", False, told.removeprefix("Error: ")[:80]),
        ToolTrace("set_reminder", True, "reminder in 30 min"),
    ]
    assert result.text == "I'll remind you in 30 minutes."


def test_a_missing_field_and_a_wrong_type_are_both_named(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("set_reminder", {"delay_minutes": "soon"})]),
        ScriptedReply.text("ok"),
    )

    result = run(client, ctx)

    assert result.events[1].error == (
        "invalid arguments: field 'delay_minutes': Input should be a valid integer, "
        "unable to parse string as an integer"
    )


def test_a_tool_that_raises_is_recorded_and_the_model_told_without_the_message(
    fake, client, ctx, caplog
):
    tools = [*TOOLS, ToolSpec("explode", ReadGoal, explode)]
    fake.script(ScriptedReply.tool_calls([("explode", {})]), ScriptedReply.text("Sorry."))

    with caplog.at_level(logging.INFO):
        result = run(client, ctx, tools=tools)

    failed = result.events[1]
    assert failed.error == "the tool failed with an internal error (RuntimeError); nothing changed"
    assert failed.detail == "RuntimeError: participant wrote: I feel awful"
    assert tool_messages(fake.requests[1])[0]["content"] == f"Error: {failed.error}"
    assert "RuntimeError" in caplog.text
    assert "I feel awful" not in caplog.text
    assert result.text == "Sorry."


def test_a_refusing_tool_changes_nothing_but_its_side_events_are_kept(fake, client, ctx):
    tools = [ToolSpec("save_goal", SaveGoal, refuse)]
    fake.script(
        ScriptedReply.tool_calls([("save_goal", {"goal": "be rich"})]),
        ScriptedReply.text("What habit could help?"),
    )

    result = run(client, ctx, tools=tools)

    assert types(result.events) == ["llm.called", "tool.failed", "llm.called", "llm.called"]
    assert result.events[1].error == "goals must be about a habit"
    assert result.events[2].purpose == "check_goal"
    assert ctx.participant["profile"] == {}


def test_a_tool_returning_an_unregistered_event_is_a_failure(fake, client, ctx):
    def bad(arguments: ReadGoal, ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(True, "fine", events=["profile.saved"])  # type: ignore[list-item]

    fake.script(ScriptedReply.tool_calls([("bad", {})]), ScriptedReply.text("ok"))

    result = run(client, ctx, tools=[ToolSpec("bad", ReadGoal, bad)])

    assert result.events[1].detail.startswith("InvalidEventData")


def test_content_with_tool_calls_runs_the_tools_then_returns_the_content(fake, client, ctx):
    fake.script(ScriptedReply.tool_calls([("save_goal", {"goal": "read"})], content="Noted!"))

    result = run(client, ctx)

    assert (result.text, result.rounds, len(fake.requests)) == ("Noted!", 1, 1)
    assert types(result.events) == ["llm.called", "tool.called", "profile.saved"]


def test_thinking_in_a_tool_round_is_not_the_reply(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("read_goal", {})], content="<think>check first</think>"),
        ScriptedReply.text("Your goal is unset."),
    )

    result = run(client, ctx)

    assert result.text == "Your goal is unset."
    assert fake.requests[1].messages[-2]["content"] is None


def test_too_many_rounds_stops_with_an_error_and_the_last_calls_not_run(fake, client, ctx):
    fake.script(*[ScriptedReply.tool_calls([("save_goal", {"goal": f"g{i}"})]) for i in range(3)])

    result = run(client, ctx, max_rounds=3)

    assert (result.text, result.error, result.rounds) == (None, "too many tool rounds (3)", 3)
    assert len(fake.requests) == 3
    assert ctx.participant["profile"] == {"goal": "g1"}
    last = result.events[-1]
    assert isinstance(last, ToolFailed)
    assert last.error == "not run: the turn reached 3 rounds"


def test_an_empty_reply_is_an_error_for_the_caller_to_cover(fake, client, ctx):
    fake.script(ScriptedReply.empty())

    result = run(client, ctx)

    assert (result.text, result.error) == (None, "empty reply")


def test_a_reply_of_only_thinking_is_an_empty_reply(fake, client, ctx):
    fake.script(ScriptedReply.text('{"thinking": "nothing to add", "content": ""}'))

    result = run(client, ctx)

    assert (result.text, result.error) == (None, "empty reply")


def test_an_llm_failure_after_a_tool_round_keeps_the_tool_events(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("save_goal", {"goal": "sleep"})]), ScriptedReply.error(500)
    )

    result = run(client, ctx)

    assert result.error == "LLM call failed: HTTP 500: Scripted error"
    assert types(result.events) == ["llm.called", "tool.called", "profile.saved", "llm.called"]
    assert result.events[-1].ok is False


def test_a_timeout_ends_the_loop_with_the_reason(fake, ctx):
    fake.script(ScriptedReply.hang(5))
    client = chat_client(fake, LLM_TIMEOUT_SECONDS=0.3)

    result = run(client, ctx)

    assert result.error == "LLM call failed: timed out: no answer within 0.3 s (1 attempt(s))"


def test_the_callers_messages_are_not_changed(fake, client, ctx):
    messages = [dict(m) for m in MESSAGES]
    fake.script(ScriptedReply.tool_calls([("read_goal", {})]), ScriptedReply.text("ok"))

    run_tool_loop(client, messages, TOOLS, ctx, purpose="intake")

    assert messages == MESSAGES


def test_tool_names_offered_twice_are_a_programming_error(client, ctx):
    with pytest.raises(ValueError, match="offered twice"):
        run(client, ctx, tools=[*TOOLS, TOOLS[0]])


def test_tool_called_events_hold_the_validated_arguments(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("set_reminder", {"delay_minutes": "15"})]),
        ScriptedReply.text("ok"),
    )

    result = run(client, ctx)

    called = result.events[1]
    assert isinstance(called, ToolCalled)
    assert called.arguments == {"delay_minutes": 15, "note": None}
    assert json.loads(fake.requests[1].messages[-2]["tool_calls"][0]["function"]["arguments"]) == {
        "delay_minutes": "15"
    }


def write_prompt(arguments: ReadGoal, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(True, ctx.complete("Write a prompt.", "walking", purpose="write_prompt"))


WRITER = [ToolSpec("write_prompt", ReadGoal, write_prompt)]


def test_tools_llm_calls_go_through_the_loops_client_and_are_recorded(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("write_prompt", {})]),
        ScriptedReply.text("After lunch, walk for 5 minutes."),
        ScriptedReply.text("Here it is: after lunch, walk for 5 minutes."),
    )

    result = run(client, ctx, tools=WRITER)

    assert types(result.events) == ["llm.called", "tool.called", "llm.called", "llm.called"]
    assert result.events[2].purpose == "write_prompt"
    assert result.events[1].result == "After lunch, walk for 5 minutes."
    assert fake.requests[1].messages == [
        {"role": "system", "content": "Write a prompt."},
        {"role": "user", "content": "walking"},
    ]
    assert ctx.complete is None


def test_a_failed_sub_call_raises_its_reason_to_the_tool_and_is_recorded(fake, client, ctx):
    fake.script(
        ScriptedReply.tool_calls([("write_prompt", {})]),
        ScriptedReply.error(500),
        ScriptedReply.text("I could not write one just now."),
    )

    result = run(client, ctx, tools=WRITER)

    failed, sub_call = result.events[1:3]
    assert failed.detail == f"{CompletionFailed.__name__}: HTTP 500: Scripted error"
    assert (sub_call.purpose, sub_call.ok) == ("write_prompt", False)
    assert result.text == "I could not write one just now."


def test_a_completer_the_caller_chose_is_left_in_place(fake, client, ctx):
    ctx.complete = lambda system, user, purpose: "canned prompt"
    fake.script(ScriptedReply.tool_calls([("write_prompt", {})]), ScriptedReply.text("ok"))

    result = run(client, ctx, tools=WRITER)

    assert result.events[1].result == "canned prompt"
    assert len(fake.requests) == 2
