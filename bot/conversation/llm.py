"""The LLM client: chat completions against any OpenAI-compatible API, each call an event.

The only file that imports `openai`. No call raises to its caller: a timeout, a lost connection,
an HTTP error or a malformed reply becomes an outcome with `error` set and an `llm.called`
event with `ok=False`. Prompts and replies go into the event unless STORE_PROMPTS=false.

Rules for tool argument models and `structured()` response models (strict mode). `declare_tool`
and `check_strict` enforce them (StrictSchemaError), so a test that declares every registered
tool, and the intervention validator for judgement models, catch a broken model before use:
- The docstring is the description the model reads; a model without one is refused.
- Every field is one the model must send: strict mode makes all properties required.
- An optional field is `X | None = None`: the schema says "required, may be null", the model
  sends null, and our validation also accepts it missing (servers that ignore strict).
- No other default (`int = 0`, `Literal[...] = "a"`): OpenAI rejects a strict schema holding
  `default`. Make it `X | None = None` and apply the default in `run`.
- No open objects (`dict[str, Any]`, `dict[str, int]`): use a nested model with fixed fields.
- `model_config = ConfigDict(extra="forbid")`, so an unknown key is named back to the model
  instead of being dropped silently.
- Constraints (`Field(ge=0)`, `max_length`, `pattern`, `Literal`) are welcome: they are always
  re-validated here, whatever the server enforced, and a failure names the field to the model.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import openai
import orjson
from pydantic import BaseModel, ValidationError

from bot.conversation.embeddings import EmbeddingError
from bot.conversation.strict_mode import field_errors, schema_problems
from bot.conversation.thinking import split_thinking
from bot.conversation.tooling import ToolSpec
from bot.core import metrics
from bot.core.model_choice import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, ModelChoice
from bot.store.event_types.conversation import LLMCalled
from bot.store.events import EventData, new_id

if TYPE_CHECKING:
    from bot.core.config import Settings

log = logging.getLogger(__name__)

OPENAI_API = "https://api.openai.com/v1"
NO_LLM = "no LLM configured"
NO_KEY = "not-set"  # the SDK refuses an empty key; servers such as Ollama accept any
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MALFORMED = (AttributeError, IndexError, KeyError, TypeError, ValueError)
_AGAIN = "Reply again with only a JSON object that matches the schema."
M = TypeVar("M", bound=BaseModel)
Messages = Sequence[Mapping[str, Any]]


class StrictSchemaError(ValueError):
    """A model strict mode cannot take (see the rules above); the message says what and where."""


def declare_tool(spec: ToolSpec) -> dict[str, Any]:
    """The strict function-tool declaration of a tool (shared: do not mutate it)."""
    return _declaration(spec.name, spec.arguments)


def check_strict(model_cls: type[BaseModel]) -> None:
    """Raise StrictSchemaError if `model_cls` breaks a strict-mode rule (for load-time checks)."""
    _declaration(model_cls.__name__, model_cls)


@lru_cache(maxsize=256)
def _declaration(name: str, model_cls: type[BaseModel]) -> dict[str, Any]:
    description = inspect.cleandoc(model_cls.__doc__ or "")
    if not _TOOL_NAME.match(name):
        raise StrictSchemaError(f"tool name {name!r} must match {_TOOL_NAME.pattern}")
    if not description:
        raise StrictSchemaError(f"{name!r}: {model_cls.__name__} needs a docstring")
    declared: dict[str, Any] = dict(
        openai.pydantic_function_tool(model_cls, name=name, description=description)
    )
    problems = list(schema_problems(declared["function"]["parameters"], "arguments"))
    if problems:
        raise StrictSchemaError(f"{name!r} is not strict-compatible: " + "; ".join(problems))
    return declared


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call as the model asked for it; `arguments` is the raw string, maybe not JSON."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatOutcome:
    """One call's result: participant-safe `content`, tool calls, and the `llm.called` event."""

    event: LLMCalled
    content: str | None = None
    thinking: str | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    error: str | None = None

    @property
    def finish_reason(self) -> str | None:
        return self.event.finish_reason

    @property
    def latency_ms(self) -> float | None:
        return self.event.latency_ms

    @property
    def usage(self) -> tuple[int | None, int | None]:
        """(prompt tokens, completion tokens), as the server counted them."""
        return self.event.prompt_tokens, self.event.completion_tokens


@dataclass(frozen=True)
class _Sent:
    """One request's result: the response body or why there is none, retries and latency."""

    body: dict[str, Any] | None
    error: str | None
    latency_ms: float
    retries: int | None = None


@dataclass(frozen=True)
class _Answer:
    """The parts of a chat.completion body this client reads."""

    message: dict[str, Any]
    content: str | None
    reasoning: str | None
    refusal: str | None
    calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None

    @classmethod
    def read(cls, body: Mapping[str, Any]) -> _Answer:
        """Raises KeyError, IndexError, TypeError or ValueError on a malformed body."""
        choice = body["choices"][0]
        message = dict(choice["message"])
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        calls = tuple(_tool_call(call) for call in message.get("tool_calls") or ())
        return cls(
            message=message,
            content=_text(message.get("content")),
            reasoning=reasoning if isinstance(reasoning, str) else None,
            refusal=_text(message.get("refusal")),
            calls=calls,
            finish_reason=choice.get("finish_reason"),
        )


class ChatClient:
    """Chat completions against one OpenAI-compatible API; thread-safe, shared by workers."""

    def __init__(
        self,
        sdk: openai.OpenAI,
        *,
        model: str,
        store_prompts: bool = True,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        configured: bool = True,
    ) -> None:
        self._sdk = sdk
        self.model = model
        self.store_prompts = store_prompts
        self.default = ModelChoice(model, temperature, max_tokens)
        # Without OPENAI_API_KEY or OPENAI_BASE_URL nothing was chosen: never guess
        # api.openai.com, fail every call at once instead.
        self.configured = configured
        self._warned = False  # "no LLM configured" is logged once, at the first call
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatClient:
        timeout = settings.llm_timeout_seconds
        sdk = openai.OpenAI(
            api_key=settings.openai_api_key or NO_KEY,
            base_url=settings.openai_base_url or OPENAI_API,
            timeout=openai.Timeout(timeout, connect=min(5.0, timeout)),
            max_retries=settings.llm_max_retries,
        )
        configured = bool(settings.openai_api_key or settings.openai_base_url)
        # Without an LLM nothing is said at start: an intervention in fixed wording (the demo)
        # never calls one. The first call that needs one logs the warning (`_send`).
        if configured and not settings.openai_api_key and sdk.base_url.host == "api.openai.com":
            log.warning("OPENAI_API_KEY is not set: every LLM call will fail and send fallbacks")
        return cls(
            sdk,
            model=settings.model,
            store_prompts=settings.store_prompts,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            configured=configured,
        )

    def close(self) -> None:
        self._sdk.close()

    def limited(self, timeout_seconds: float) -> ChatClient:
        """The same client with its own timeout and no SDK retries (the safety classifier's:
        a slow answer must not hold the participant's turn)."""
        timeout = openai.Timeout(timeout_seconds, connect=min(5.0, timeout_seconds))
        limited = ChatClient(
            self._sdk.with_options(timeout=timeout, max_retries=0),
            model=self.model,
            store_prompts=self.store_prompts,
            configured=self.configured,
        )
        limited.default = self.default
        return limited

    def chat(
        self,
        messages: Messages,
        *,
        tools: Sequence[ToolSpec] = (),
        model: str | ModelChoice | None = None,
        purpose: str,
    ) -> ChatOutcome:
        """One completion, with `tools` offered in strict mode; never raises for API trouble."""
        request = self._request(model, _copy(messages))
        if tools:
            request["tools"] = [declare_tool(spec) for spec in tools]
        sent = self._send(request)
        answer, error = _read(sent)
        if answer is None:
            return ChatOutcome(self._event(request, purpose, sent, error=error), error=error)
        reply = split_thinking(answer.content, answer.reasoning)
        if reply.problem:
            error = f"malformed reply: {reply.problem}"
        elif answer.refusal and not (reply.content or answer.calls):
            error = "the model refused to answer"
        event = self._event(request, purpose, sent, answer, reply.thinking, error)
        if error:
            return ChatOutcome(event, thinking=reply.thinking, error=error)
        return ChatOutcome(event, reply.content, reply.thinking, answer.calls)

    def complete(
        self, system: str, user: str, purpose: str, *, model: str | ModelChoice | None = None
    ) -> tuple[str | None, list[EventData]]:
        """A plain sub-completion (for tools): the text, or None if it failed or said nothing."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        outcome = self.chat(messages, model=model, purpose=purpose)
        return (None if outcome.error else outcome.content), [outcome.event]

    def structured(
        self,
        messages: Messages,
        model_cls: type[M],
        *,
        purpose: str,
        model: str | ModelChoice | None = None,
        repairs: int = 1,
    ) -> tuple[M | None, list[EventData]]:
        """A reply validated as `model_cls`. An invalid reply is sent back with its errors for
        correction, at most `repairs` times; None if no valid reply came (reasons in events)."""
        check_strict(model_cls)
        conversation = _copy(messages)
        events: list[EventData] = []
        for attempt in range(repairs + 1):
            request = self._request(model, list(conversation))
            sent = self._send({**request, "response_format": _response_format(model_cls)})
            answer, error = _read(sent)
            if answer is None:
                events.append(self._event(request, purpose, sent, error=error))
                return None, events
            reply = split_thinking(answer.content, answer.reasoning)
            try:
                value = model_cls.model_validate_json(reply.content or "")
            except ValidationError as exc:
                problem = field_errors(exc) if reply.content else "the reply was empty"
                if answer.refusal:
                    problem = "the model refused to answer"
                error = f"the reply is not a valid {model_cls.__name__}: {problem}"
                events.append(self._event(request, purpose, sent, answer, reply.thinking, error))
                if answer.refusal or attempt == repairs:
                    return None, events
                ask = f"That reply was invalid: {problem}. {_AGAIN}"
                conversation += [
                    {"role": "assistant", "content": reply.content or ""},
                    {"role": "user", "content": ask},
                ]
            else:
                events.append(self._event(request, purpose, sent, answer, reply.thinking))
                return value, events
        return None, events  # pragma: no cover - the loop always returns

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """One vector per text from the `/embeddings` endpoint (bot.conversation.embeddings
        caches them); EmbeddingError when it fails."""
        if not self.configured:
            raise EmbeddingError("no LLM is configured (OPENAI_API_KEY or OPENAI_BASE_URL)")
        try:
            answer = self._sdk.embeddings.create(model=model, input=texts, encoding_format="float")
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"/embeddings failed: {self._describe(exc)}") from None
        ordered = sorted(answer.data, key=lambda item: item.index)
        return [list(item.embedding) for item in ordered]

    def _request(self, model: str | ModelChoice | None, messages: Messages) -> dict[str, Any]:
        """The request's model and sampling: the call's choice over the server's defaults.
        `max_tokens` rather than `max_completion_tokens`: Ollama and vLLM read only it."""
        choice = ModelChoice.of(model).over(self.default)
        return {
            "model": choice.name or self.model,
            "messages": messages,
            "temperature": choice.temperature,
            "max_tokens": choice.max_tokens,
        }

    def _send(self, request: dict[str, Any]) -> _Sent:
        """POST the request body as built here to /chat/completions through the SDK client's
        public `post` (its retries, timeouts, headers and error types), not through
        `chat.completions.create`/`parse`: those re-walk the whole body with the SDK's
        `maybe_transform` against the param TypedDicts (costly with a long transcript,
        issue 15), which changes nothing in a body of plain JSON values like this one. The body
        goes as JSON bytes made by orjson (`_json_body`)."""
        started = time.perf_counter()
        if not self.configured:
            with self._lock:
                first, self._warned = not self._warned, True
            if first:
                log.warning(
                    "no LLM configured (neither OPENAI_API_KEY nor OPENAI_BASE_URL): this LLM "
                    "call and every later one fail at once and send fallbacks"
                )
            return _Sent(None, NO_LLM, 0.0)
        try:
            raw = self._sdk.post(
                "/chat/completions",
                cast_to=openai.APIResponse[dict[str, Any]],
                **_json_body(request),
            )
            body = raw.http_response.json()
        except openai.OpenAIError as exc:
            return _Sent(None, self._describe(exc), _since(started))
        except ValueError:
            return _Sent(None, "malformed response: the body is not JSON", _since(started))
        if not isinstance(body, dict):
            return _Sent(None, "malformed response: the body is not an object", _since(started))
        return _Sent(body, None, _since(started), raw.retries_taken)

    def _describe(self, exc: openai.OpenAIError) -> str:
        """A short reason that quotes no prompt: what failed, after how many attempts."""
        attempts = f"{self._sdk.max_retries + 1} attempt(s)"
        if isinstance(exc, openai.APITimeoutError):
            timeout = self._sdk.timeout
            seconds = timeout.read if isinstance(timeout, openai.Timeout) else timeout
            return f"timed out: no answer within {seconds:g} s ({attempts})"
        if isinstance(exc, openai.APIConnectionError):
            return f"could not connect to {self._sdk.base_url} ({attempts})"
        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            return f"HTTP {exc.status_code}: {body.get('message') or exc.response.reason_phrase}"
        return f"{type(exc).__name__}: {exc}"

    def _event(
        self,
        request: dict[str, Any],
        purpose: str,
        sent: _Sent,
        answer: _Answer | None = None,
        thinking: str | None = None,
        error: str | None = None,
    ) -> LLMCalled:
        """The `llm.called` of one request; `model` is the one that answered, if it said."""
        body = sent.body or {}
        usage = body.get("usage") or {} if isinstance(body.get("usage"), dict) else {}
        response = None
        if answer is not None and self.store_prompts:
            response = {**answer.message, "thinking": thinking} if thinking else answer.message
        event = LLMCalled(
            call_id=new_id(),
            purpose=purpose,
            model=str(body.get("model") or request["model"]),
            ok=error is None,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_ms=sent.latency_ms,
            finish_reason=answer.finish_reason if answer else None,
            messages=request["messages"] if self.store_prompts else None,
            response=response,
            error=error,
            retries=sent.retries,
            temperature=request["temperature"],
            max_tokens=request["max_tokens"],
        )
        metrics.llm_called(event.ok, sent.latency_ms)
        if error:
            log.warning("llm call %s (%s) failed: %s", event.call_id, purpose, error)
        else:
            log.info(
                "llm call %s (%s) model=%s tokens=%s+%s %.0f ms",
                event.call_id,
                purpose,
                event.model,
                event.prompt_tokens,
                event.completion_tokens,
                sent.latency_ms,
            )
        return event


def _json_body(request: dict[str, Any]) -> dict[str, Any]:
    """The SDK's `post` argument for the request: its JSON as the SDK would make it (compact,
    UTF-8, `openapi_dumps`) by orjson, as `content` (a fraction of the SDK's `json.dumps`'s
    cost for a long prompt). A body orjson cannot encode as the SDK would (a key that is
    not a string; a NaN, which the SDK refuses and orjson writes as null) goes as `body`, for
    the SDK to encode."""
    if any(isinstance(value, float) and not math.isfinite(value) for value in request.values()):
        return {"body": request}
    try:
        return {"content": orjson.dumps(request)}
    except TypeError:  # orjson.JSONEncodeError
        return {"body": request}


def _read(sent: _Sent) -> tuple[_Answer | None, str | None]:
    if sent.body is None:
        return None, sent.error
    try:
        return _Answer.read(sent.body), None
    except _MALFORMED as exc:
        return None, f"malformed response ({type(exc).__name__}: {exc})"[:300]


def _tool_call(call: Mapping[str, Any]) -> ToolCallRequest:
    """A function tool call (or a custom one, whose input stands in for the arguments)."""
    function = call["custom"] if call.get("type") == "custom" else call["function"]
    arguments = function.get("input" if call.get("type") == "custom" else "arguments")
    if isinstance(arguments, dict | list):  # some servers send the object, not its JSON
        arguments = json.dumps(arguments)
    return ToolCallRequest(str(call["id"]), str(function["name"]), str(arguments or ""))


@lru_cache(maxsize=256)
def _response_format(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The strict `json_schema` response format of a model, as `chat.completions.parse` sends
    it (named after the model; the schema is the SDK's strict one, as for tools)."""
    schema = openai.pydantic_function_tool(model_cls)["function"]["parameters"]
    return {
        "type": "json_schema",
        "json_schema": {"schema": schema, "name": model_cls.__name__, "strict": True},
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _copy(messages: Messages) -> list[dict[str, Any]]:
    return [dict(m) for m in messages]


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
