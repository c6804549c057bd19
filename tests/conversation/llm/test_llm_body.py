"""The chat request's body goes as the JSON bytes the SDK itself would make of it."""

from __future__ import annotations

import math

from openai._utils._json import openapi_dumps

from bot.conversation.llm import _json_body

REQUEST = {
    "model": "fake-model",
    "messages": [
        {"role": "system", "content": 'Be kind.\n\tTabs, "quotes", \\ and \u2028 too.'},
        {"role": "user", "content": "Ça va? 👋 \x00\x1f"},
    ],
    "temperature": 0.7,
    "max_tokens": 400,
    "tools": [{"type": "function", "function": {"name": "f", "strict": True}}],
}


def test_a_plain_request_goes_as_the_bytes_the_sdk_would_send():
    assert _json_body(REQUEST) == {"content": openapi_dumps(REQUEST)}


def test_a_request_orjson_cannot_encode_as_the_sdk_would_is_left_to_the_sdk():
    for odd in ({**REQUEST, "temperature": math.nan}, {**REQUEST, "extra": {1: "a"}}):
        assert _json_body(odd) == {"body": odd}
