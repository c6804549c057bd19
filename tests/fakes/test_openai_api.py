"""The real openai SDK, pointed at base_url, against the fake OpenAI-compatible server."""

import json

import openai
import pytest
from pydantic import BaseModel

from tests.fakes.openai_api import FakeOpenAI, ScriptedReply

HELLO = [{"role": "user", "content": "Hello"}]


class TransitionState(BaseModel):
    """Move the conversation to another state."""

    target_state: str


class Judgement(BaseModel):
    engaged: bool
    sentiment: str


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def build_client(fake: FakeOpenAI, timeout: float = 2.0, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=fake.url + "/v1", api_key="test", max_retries=max_retries, timeout=timeout
    )


@pytest.fixture
def client(fake):
    with build_client(fake) as sdk:
        yield sdk


def complete(client: openai.OpenAI, **kwargs):
    return client.chat.completions.create(model="fake-model", messages=HELLO, **kwargs)


def test_a_text_reply_reaches_the_sdk_with_usage(fake, client):
    fake.script(ScriptedReply.text("Hello!"))

    completion = complete(client)

    assert completion.choices[0].message.content == "Hello!"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )


def test_tool_calls_are_parsed_by_the_sdk_with_json_arguments(fake, client):
    fake.script(ScriptedReply.tool_calls([("transition_state", {"target_state": "feedback"})]))

    message = complete(client).choices[0].message

    [call] = message.tool_calls
    assert call.function.name == "transition_state"
    assert json.loads(call.function.arguments) == {"target_state": "feedback"}


def test_a_raw_string_argument_is_sent_verbatim_even_when_malformed(fake, client):
    fake.script(ScriptedReply.tool_calls([("transition_state", '{"target_state": ')]))

    [call] = complete(client).choices[0].message.tool_calls

    assert call.function.arguments == '{"target_state": '


def test_an_empty_reply_has_no_content_and_no_tool_calls(fake, client):
    fake.script(ScriptedReply.empty())

    message = complete(client).choices[0].message

    assert (message.content, message.tool_calls) == (None, None)


def test_parse_turns_a_pydantic_tool_call_into_the_model(fake, client):
    fake.script(ScriptedReply.tool_calls([("TransitionState", {"target_state": "feedback"})]))

    completion = client.chat.completions.parse(
        model="fake-model", messages=HELLO, tools=[openai.pydantic_function_tool(TransitionState)]
    )

    [call] = completion.choices[0].message.tool_calls
    assert call.function.parsed_arguments == TransitionState(target_state="feedback")
    assert fake.requests[0].tools[0]["function"]["strict"] is True


def test_parse_turns_a_structured_reply_into_the_response_format_model(fake, client):
    fake.script(ScriptedReply.structured(Judgement(engaged=True, sentiment="positive")))

    completion = client.chat.completions.parse(
        model="fake-model", messages=HELLO, response_format=Judgement
    )

    assert completion.choices[0].message.parsed == Judgement(engaged=True, sentiment="positive")
    assert fake.requests[0].body["response_format"]["type"] == "json_schema"


def test_a_queued_callable_computes_the_reply_from_the_request(fake, client):
    fake.script(lambda body: ScriptedReply.text(f"you said {body['messages'][-1]['content']}"))

    assert complete(client).choices[0].message.content == "you said Hello"


def test_a_scripted_500_raises_internal_server_error(fake, client):
    fake.script(ScriptedReply.error(500))

    with pytest.raises(openai.InternalServerError):
        complete(client)


def test_an_empty_script_fails_loudly_naming_the_missing_reply(client):
    with pytest.raises(openai.InternalServerError, match="no scripted reply left"):
        complete(client)


def test_a_hang_past_the_client_timeout_raises_api_timeout_error(fake):
    fake.script(ScriptedReply.hang(5))

    with build_client(fake, timeout=0.3) as client, pytest.raises(openai.APITimeoutError):
        complete(client)


def test_every_request_body_is_recorded_in_order(fake, client):
    fake.script(ScriptedReply.text("one"), ScriptedReply.text("two"))

    complete(client, temperature=0.2)
    client.chat.completions.create(model="other-model", messages=HELLO)

    assert [r.body["model"] for r in fake.requests] == ["fake-model", "other-model"]
    assert fake.requests[0].messages == HELLO
    assert fake.requests[0].body["temperature"] == 0.2
    assert fake.pending == 0


def test_sdk_retries_are_visible_as_extra_recorded_requests(fake):
    fake.script(ScriptedReply.error(500), ScriptedReply.text("second time lucky"))

    with build_client(fake, max_retries=1) as client:
        completion = complete(client)

    assert completion.choices[0].message.content == "second time lucky"
    assert [r.headers.get("X-Stainless-Retry-Count") for r in fake.requests] == ["0", "1"]


def test_the_connection_is_kept_alive_between_requests_as_a_real_endpoint_does(fake, client):
    fake.script(*[ScriptedReply.text("Hi")] * 3)

    for _ in range(3):
        complete(client)

    assert len({r.peer for r in fake.requests}) == 1, [r.peer for r in fake.requests]


def test_the_models_endpoint_lists_the_configured_models(fake, client):
    assert [model.id for model in client.models.list()] == ["fake-model"]


def test_a_wrong_api_key_is_rejected_when_the_fake_checks_keys():
    with FakeOpenAI(api_key="right") as fake, build_client(fake) as client:
        with pytest.raises(openai.AuthenticationError):
            complete(client)
