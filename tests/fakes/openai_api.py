"""A fake OpenAI-compatible chat completions API that answers from a FIFO script, and an
embeddings endpoint that answers deterministically (hashed bag of words: texts sharing words
point the same way)."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import Flask, jsonify, request

from tests.fakes.http_server import KeepAliveServer

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer to a chat completion call."""

    status: int = 200
    content: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    finish_reason: str = "stop"
    error_message: str = ""
    hang_seconds: float = 0.0

    @classmethod
    def text(cls, content: str, finish_reason: str = "stop") -> ScriptedReply:
        return cls(content=content, finish_reason=finish_reason)

    @classmethod
    def structured(cls, value: Any) -> ScriptedReply:
        """JSON text content, as a server answers a `response_format` request."""
        dump = getattr(value, "model_dump_json", None)
        return cls(content=dump() if dump else json.dumps(value))

    @classmethod
    def tool_calls(cls, calls: list[tuple[str, dict | str]], content: str | None = None):
        """Tool calls; a str argument is sent verbatim, so it may be malformed JSON."""
        encoded = tuple((n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls)
        return cls(content=content, calls=encoded, finish_reason="tool_calls")

    @classmethod
    def empty(cls) -> ScriptedReply:
        return cls()

    @classmethod
    def error(cls, status: int, message: str = "Scripted error") -> ScriptedReply:
        return cls(status=status, error_message=message)

    @classmethod
    def hang(cls, seconds: float) -> ScriptedReply:
        """Answer with text only after `seconds` (or when the fake stops)."""
        return cls(content="(answered too late)", hang_seconds=seconds)

    @property
    def client_timeout(self) -> str:
        """The client timeout (seconds, as a setting's text) for a test of this one reply: short
        for a hang, to be waited out; long for a reply the fake has ready, which a busy 2-core
        machine once answered after more than 0.5 s (llm_down_three_ways.yaml failed so)."""
        return "0.5" if self.hang_seconds else "10"


Script = ScriptedReply | Callable[[dict], ScriptedReply]


@dataclass(frozen=True)
class RecordedChat:
    """One chat completion request as the fake received it."""

    body: dict
    headers: dict[str, str]
    received_at: datetime
    peer: str = ""  # the client's address and port: one per TCP connection

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def tools(self) -> list[dict]:
        return self.body.get("tools", [])


EMBEDDING_SIZE = 64


def fake_embedding(text: str, model: str) -> list[float]:
    """A unit vector: each word of two letters or more adds 1 at a dimension chosen by a hash
    of the model and the word. Deterministic; texts sharing words have a higher cosine."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in re.findall(r"\w\w+", text.lower()):
        digest = hashlib.sha256(f"{model}:{word}".encode()).digest()
        vector[digest[0] % EMBEDDING_SIZE] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [round(x / norm, 6) for x in vector]


def _error(status: int, message: str):
    kind = _ERROR_TYPES.get(status, "server_error")
    return jsonify(
        {"error": {"message": message, "type": kind, "param": None, "code": None}}
    ), status


class FakeOpenAI(KeepAliveServer):
    """Serves /v1/chat/completions and /v1/models on loopback; records every chat request."""

    def __init__(
        self,
        api_key: str | None = None,
        models: tuple[str, ...] = ("fake-model",),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.api_key, self.models, self._clock = api_key, models, clock
        self._lock = threading.Lock()
        self._queue: deque[Script] = deque()
        self._records: list[RecordedChat] = []
        self._released = threading.Event()
        app = Flask(__name__)
        app.add_url_rule("/v1/chat/completions", view_func=self._complete, methods=["POST"])
        app.add_url_rule("/v1/models", view_func=self._list_models, methods=["GET"])
        app.add_url_rule("/v1/embeddings", view_func=self._embed, methods=["POST"])
        self._embedded: list[dict[str, Any]] = []
        self.embedding_failures = 0  # the next N embeddings requests fail with a 500
        # Keep-alive like a real endpoint: a turn's LLM call reuses the SDK's open connection.
        super().__init__(app)

    def script(self, *replies: Script) -> None:
        """Queue replies (or callables of the request JSON returning one) for the next calls."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are still unused."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedChat]:
        with self._lock:
            return list(self._records)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """The body of every /v1/embeddings request, in order."""
        with self._lock:
            return list(self._embedded)

    def stop(self) -> None:
        self._released.set()
        super().stop()

    def _embed(self):
        if not self._authorised():
            return _error(401, "Incorrect API key provided")
        body = request.get_json()
        with self._lock:
            self._embedded.append(body)
            failing = self.embedding_failures > 0
            self.embedding_failures -= 1 if failing else 0
        if failing:
            return _error(500, "FakeOpenAI: scripted embeddings failure")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": n, "embedding": fake_embedding(text, body["model"])}
            for n, text in enumerate(texts)
        ]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
        return jsonify({"object": "list", "data": data, "model": body["model"], "usage": usage})

    def _authorised(self) -> bool:
        return self.api_key is None or request.headers.get("Authorization") == (
            f"Bearer {self.api_key}"
        )

    def _list_models(self):
        if not self._authorised():
            return _error(401, "Incorrect API key provided")
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return jsonify({"object": "list", "data": data})

    def _complete(self):
        if not self._authorised():
            return _error(401, "Incorrect API key provided")
        body = request.get_json()
        with self._lock:
            seq = len(self._records) + 1
            peer = f"{request.environ.get('REMOTE_ADDR')}:{request.environ.get('REMOTE_PORT')}"
            self._records.append(RecordedChat(body, dict(request.headers), self._clock(), peer))
            scripted = self._queue.popleft() if self._queue else None
        if scripted is None:
            return _error(500, f"FakeOpenAI: no scripted reply left for request #{seq}")
        reply = scripted(body) if callable(scripted) else scripted
        if reply.hang_seconds:
            self._released.wait(reply.hang_seconds)
        if reply.status != 200:
            return _error(reply.status, reply.error_message)
        return jsonify(self._completion(seq, body, reply))

    def _completion(self, seq: int, body: dict, reply: ScriptedReply) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{seq:03d}_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for index, (name, arguments) in enumerate(reply.calls)
            ]
        # Token counts are a deterministic rough estimate (~4 characters a token).
        prompt_tokens = len(json.dumps(body.get("messages", []))) // 4 + 1
        completion_tokens = len(json.dumps(message)) // 4 + 1
        return {
            "id": f"chatcmpl-fake{seq:06d}",
            "object": "chat.completion",
            "created": int(self._clock().timestamp()),
            "model": body.get("model", self.models[0]),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
