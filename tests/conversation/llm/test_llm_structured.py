"""ChatClient.structured: a reply validated as a pydantic model, corrected once if invalid."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from bot.conversation.llm import StrictSchemaError
from tests.fakes.openai_api import ScriptedReply

ASK = [{"role": "user", "content": "Did the participant engage?"}]


class Engagement(BaseModel):
    """Whether the participant engaged with the step."""

    model_config = ConfigDict(extra="forbid")

    engaged: Literal["yes", "no"]
    reason: str | None = None


def test_a_valid_reply_is_the_model_instance(fake, client):
    fake.script(ScriptedReply.structured({"engaged": "yes", "reason": None}))

    value, [event] = client.structured(ASK, Engagement, purpose="judgement:engaged")

    assert value == Engagement(engaged="yes")
    assert event.ok is True
    response_format = fake.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True


def test_json_behind_a_think_block_is_still_read(fake, client):
    fake.script(ScriptedReply.text('<think>they did</think>{"engaged": "yes", "reason": "did"}'))

    value, [event] = client.structured(ASK, Engagement, purpose="judgement:engaged")

    assert value == Engagement(engaged="yes", reason="did")
    assert event.response["thinking"] == "they did"


def test_invalid_json_is_sent_back_with_the_error_and_the_correction_is_used(fake, client):
    fake.script(
        ScriptedReply.text("Yes, they engaged."),
        ScriptedReply.structured({"engaged": "yes", "reason": None}),
    )

    value, [first, second] = client.structured(ASK, Engagement, purpose="judgement:engaged")

    assert value == Engagement(engaged="yes")
    assert first.ok is False
    assert first.error.startswith("the reply is not a valid Engagement: Invalid JSON")
    assert second.ok is True
    correction = fake.requests[1].messages[-2:]
    assert correction[0] == {"role": "assistant", "content": "Yes, they engaged."}
    assert correction[1]["content"].startswith("That reply was invalid: Invalid JSON")


def test_a_wrong_field_is_named_and_after_the_repairs_it_gives_up(fake, client):
    fake.script(
        ScriptedReply.structured({"engaged": "maybe", "reason": None}),
        ScriptedReply.structured({"engaged": "perhaps", "reason": None}),
    )

    value, events = client.structured(ASK, Engagement, purpose="judgement:engaged")

    assert value is None
    assert [e.ok for e in events] == [False, False]
    assert "field 'engaged': Input should be 'yes' or 'no'" in events[1].error
    assert fake.pending == 0


def test_an_api_failure_is_not_repaired(fake, client):
    fake.script(ScriptedReply.error(500))

    value, [event] = client.structured(ASK, Engagement, purpose="judgement:engaged")

    assert value is None
    assert event.error == "HTTP 500: Scripted error"
    assert len(fake.requests) == 1


class WithDefault(BaseModel):
    """A judgement with a default OpenAI would refuse in strict mode."""

    engaged: bool = False


def test_a_model_strict_mode_cannot_take_is_refused_before_any_request(fake, client):
    with pytest.raises(StrictSchemaError, match="arguments.engaged has the default False"):
        client.structured(ASK, WithDefault, purpose="judgement:engaged")

    assert fake.requests == []
