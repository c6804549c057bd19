"""ChatClient with the real openai SDK against the fake OpenAI-compatible server."""

from __future__ import annotations

import pytest
from flask import Flask
from pydantic import BaseModel, ConfigDict, Field

from bot.conversation.llm import StrictSchemaError, declare_tool
from bot.conversation.tooling import ToolOutcome, ToolSpec
from bot.core.model_choice import ModelChoice
from bot.store.event_types.conversation import LLMCalled
from tests.fakes.http_server import LocalServer
from tests.fakes.openai_api import ScriptedReply
from tests.llm_clients import chat_client

HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]


class SetReminder(BaseModel):
    """Remind the participant after a delay."""

    model_config = ConfigDict(extra="forbid")

    delay_minutes: int = Field(ge=0, description="Minutes from now.")
    note: str | None = None


def _unused(arguments: BaseModel, ctx: object) -> ToolOutcome:
    raise AssertionError("chat() never runs tools")


REMINDER = ToolSpec("set_reminder", SetReminder, _unused)


def test_a_text_reply_comes_back_with_its_llm_called_event(fake, client):
    fake.script(ScriptedReply.text("Hi there!"))

    outcome = client.chat(HELLO, purpose="intake")

    assert (outcome.content, outcome.error, outcome.tool_calls) == ("Hi there!", None, ())
    event = outcome.event
    assert isinstance(event, LLMCalled)
    assert (event.ok, event.purpose, event.model, event.finish_reason) == (
        True,
        "intake",
        "fake-model",
        "stop",
    )
    assert event.prompt_tokens and event.completion_tokens and event.latency_ms is not None
    assert event.messages == HELLO
    assert event.response["content"] == "Hi there!"
    assert event.retries == 0


def test_a_model_named_per_call_is_the_one_requested(fake, client):
    fake.script(ScriptedReply.text("ok"))

    outcome = client.chat(HELLO, model="step-model", purpose="step")

    assert fake.requests[0].body["model"] == "step-model"
    assert outcome.event.model == "step-model"


def test_think_blocks_are_kept_out_of_the_content_and_in_the_event(fake, client):
    fake.script(ScriptedReply.text("<think>They seem tired.</think>\nHow did you sleep?"))

    outcome = client.chat(HELLO, purpose="step")

    assert outcome.content == "How did you sleep?"
    assert outcome.thinking == "They seem tired."
    assert outcome.event.response["thinking"] == "They seem tired."


def test_the_json_thinking_wrapper_is_unwrapped(fake, client):
    fake.script(ScriptedReply.text('{"thinking": "Ask about goals.", "content": "What matters?"}'))

    outcome = client.chat(HELLO, purpose="intake")

    assert (outcome.content, outcome.thinking) == ("What matters?", "Ask about goals.")


def test_a_broken_thinking_wrapper_is_an_error_and_never_content(fake, client):
    fake.script(ScriptedReply.text('{"thinking": "private plan", "content": "Hel'))

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.content is None
    assert outcome.error.startswith("malformed reply")
    assert outcome.event.ok is False


def test_tools_are_declared_strict_with_the_docstring_as_description(fake, client):
    fake.script(ScriptedReply.text("ok"))

    client.chat(HELLO, tools=[REMINDER], purpose="step")

    [tool] = fake.requests[0].tools
    function = tool["function"]
    assert (tool["type"], function["name"], function["strict"]) == (
        "function",
        "set_reminder",
        True,
    )
    assert function["description"] == "Remind the participant after a delay."
    parameters = function["parameters"]
    assert parameters["required"] == ["delay_minutes", "note"]
    assert parameters["additionalProperties"] is False


def test_tool_calls_come_back_with_their_raw_arguments(fake, client):
    fake.script(ScriptedReply.tool_calls([("set_reminder", '{"delay_minutes": ')]))

    outcome = client.chat(HELLO, tools=[REMINDER], purpose="step")

    [call] = outcome.tool_calls
    assert (call.name, call.arguments) == ("set_reminder", '{"delay_minutes": ')
    assert outcome.finish_reason == "tool_calls"
    assert outcome.error is None


def test_a_server_error_is_an_error_outcome_not_an_exception(fake, client):
    fake.script(ScriptedReply.error(500, "upstream exploded"))

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.content is None
    assert outcome.error == "HTTP 500: upstream exploded"
    assert (outcome.event.ok, outcome.event.error) == (False, "HTTP 500: upstream exploded")
    assert outcome.event.messages == HELLO


def test_a_500_is_retried_by_the_sdk_and_the_retry_is_recorded(fake):
    fake.script(ScriptedReply.error(500), ScriptedReply.text("second time lucky"))
    client = chat_client(fake, LLM_MAX_RETRIES=1)

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.content == "second time lucky"
    assert [r.headers.get("X-Stainless-Retry-Count") for r in fake.requests] == ["0", "1"]
    assert outcome.event.retries == 1


def test_persistent_500s_fail_after_the_retries(fake):
    fake.script(ScriptedReply.error(503), ScriptedReply.error(503))
    client = chat_client(fake, LLM_MAX_RETRIES=1)

    outcome = client.chat(HELLO, purpose="intake")

    assert len(fake.requests) == 2
    assert outcome.error.startswith("HTTP 503")
    assert outcome.event.ok is False


def test_a_hanging_server_times_out_into_an_error_outcome(fake):
    fake.script(ScriptedReply.hang(5))
    client = chat_client(fake, LLM_TIMEOUT_SECONDS=0.3)

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.error == "timed out: no answer within 0.3 s (1 attempt(s))"
    assert outcome.event.ok is False
    assert outcome.event.latency_ms >= 300


def test_an_unreachable_server_is_a_connection_error_outcome(fake):
    url = fake.url
    fake.stop()
    client = chat_client(fake, OPENAI_BASE_URL=url + "/v1")

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.error.startswith(f"could not connect to {url}/v1")


def test_a_malformed_completion_body_is_an_error_outcome():
    app = Flask(__name__)
    app.add_url_rule(
        "/v1/chat/completions", "complete", lambda: {"id": "x", "choices": []}, methods=["POST"]
    )
    with LocalServer(app) as server:
        client = chat_client(server)  # type: ignore[arg-type]
        outcome = client.chat(HELLO, purpose="intake")

    assert outcome.error.startswith("malformed response (IndexError")
    assert outcome.event.ok is False


def test_store_prompts_false_keeps_messages_and_reply_out_of_the_event(fake):
    fake.script(ScriptedReply.text("<think>private</think>Hi"))
    client = chat_client(fake, STORE_PROMPTS="false")

    outcome = client.chat(HELLO, purpose="intake")

    assert outcome.content == "Hi"
    assert (outcome.event.messages, outcome.event.response) == (None, None)
    assert outcome.event.prompt_tokens is not None
    assert "private" not in outcome.event.model_dump_json()


def test_complete_returns_the_text_and_its_event(fake, client):
    fake.script(ScriptedReply.text("Try a walk after lunch."))

    text, events = client.complete("Write a habit prompt.", "Walking", "generate_habit_prompt")

    assert text == "Try a walk after lunch."
    [event] = events
    assert (event.purpose, event.ok) == ("generate_habit_prompt", True)
    assert fake.requests[0].messages == [
        {"role": "system", "content": "Write a habit prompt."},
        {"role": "user", "content": "Walking"},
    ]


def test_complete_returns_none_when_the_call_fails(fake, client):
    fake.script(ScriptedReply.error(500))

    text, [event] = client.complete("system", "user", "generate_habit_prompt")

    assert text is None
    assert event.ok is False


class WithDefault(BaseModel):
    """Has a non-None default."""

    delay_minutes: int = 0


class WithOpenObject(BaseModel):
    """Has a free-form dict."""

    fields: dict[str, str]


class WithoutDocstring(BaseModel):
    delay_minutes: int


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        (WithDefault, "arguments.delay_minutes has the default 0"),
        (WithOpenObject, "arguments.fields is an open object"),
        (WithoutDocstring, "needs a docstring"),
    ],
)
def test_models_strict_mode_cannot_take_are_refused_with_the_reason(model, problem):
    with pytest.raises(StrictSchemaError, match=problem):
        declare_tool(ToolSpec("a_tool", model, _unused))


def test_nested_models_and_nullable_fields_are_strict_compatible():
    class Slot(BaseModel):
        model_config = ConfigDict(extra="forbid")
        hour: int = Field(ge=0, le=23)

    class SetSchedule(BaseModel):
        """Set the daily schedule."""

        model_config = ConfigDict(extra="forbid")
        slots: list[Slot]
        note: str | None = None

    declared = declare_tool(ToolSpec("set_schedule", SetSchedule, _unused))

    assert declared["function"]["strict"] is True


def test_the_sampling_asked_for_is_in_the_request_and_in_llm_called(fake, client):
    fake.script(ScriptedReply.text("ok"), ScriptedReply.text("ok"))

    default = client.chat(HELLO, purpose="intake").event
    chosen = client.chat(HELLO, model=ModelChoice(None, 0.5, 64), purpose="step").event

    sent = [(r.body["model"], r.body["temperature"], r.body["max_tokens"]) for r in fake.requests]
    assert sent == [("fake-model", 0.1, 1000), ("fake-model", 0.5, 64)]
    recorded = [(e.temperature, e.max_tokens) for e in (default, chosen)]
    assert recorded == [(0.1, 1000), (0.5, 64)]
