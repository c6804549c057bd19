"""The tool loop: ask the model, run the tools it calls, tell it the results, until it answers.

Rules (PromptPipe's loop, without its silent failures):
- A round is one LLM call. Its tool calls run in order, each answered with one `tool` message:
  the tool's message, or "Error: …" saying precisely what was wrong (unknown tool, arguments
  that are not a JSON object, each invalid field by name, a tool that refused or crashed).
- A round with content ends the loop with that content, after running any tools it also
  called. A round with neither content nor tool calls is an error ("empty reply"): the caller
  sends its fallback instead of nothing.
- At most `max_rounds` calls. Tool calls in the last round without content are not run (the
  model could never hear their results); they are recorded as `tool.failed` and the loop ends
  with "too many tool rounds".
- A successful tool's `events` are its decisions: they are recorded and folded into
  `ctx.participant`, `ctx.history` and `ctx.pending_timers`, so a later tool sees them. A
  failed tool's `events` are dropped; its `side_events` (an LLM sub-call, say) are recorded
  either way and never folded.
- An LLM failure ends the loop with its reason. Events of tools that already ran stay in the
  result: they happened, and the caller appends them with its `turn.failed`.
- Tools' own LLM calls: if `ctx.complete` is None the loop lends the tools a completer that
  uses `client` and records each call's `llm.called` right after the tool's record. It returns
  the text, or raises CompletionFailed with the reason (timeout, HTTP error, empty reply).
- Arguments that are not a JSON object are replayed to the model as `{}`: vLLM and SGLang
  re-parse earlier tool calls and reject the whole request otherwise. The raw text is kept in
  the `tool.failed` event.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import ValidationError

from bot.conversation.llm import ChatClient, ChatOutcome, ToolCallRequest
from bot.conversation.strict_mode import field_errors
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.conversation.working import Working, pending_timers
from bot.core.model_choice import ModelChoice
from bot.store.event_types.conversation import ToolCalled, ToolFailed
from bot.store.events import EventData

log = logging.getLogger(__name__)

EMPTY_REPLY = "empty reply"
TOO_MANY_ROUNDS = "too many tool rounds"
EXCERPT = 80


class CompletionFailed(RuntimeError):
    """A tool's sub-completion produced no text; the message is the reason (never the prompt)."""


class ToolTrace(NamedTuple):
    """One tool call for the debug trace: its name, whether it worked, what it said."""

    name: str
    ok: bool
    excerpt: str


@dataclass
class LoopResult:
    """The reply to send (`text`), or why there is none (`error`), and everything recorded."""

    text: str | None = None
    events: list[EventData] = field(default_factory=list)
    error: str | None = None
    rounds: int = 0
    tools_called: list[ToolTrace] = field(default_factory=list)
    silent: bool = False  # no reply on purpose (never from the LLM's loop)


def run_tool_loop(
    client: ChatClient,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec],
    ctx: ToolContext,
    *,
    purpose: str,
    model: str | ModelChoice | None = None,
    max_rounds: int = 10,
) -> LoopResult:
    """Run the conversation's tool rounds; `ctx.participant` ends holding the tools' changes."""
    if len({spec.name for spec in tools}) != len(tools):
        raise ValueError(f"tool names offered twice: {[spec.name for spec in tools]}")
    if max_rounds < 1:
        raise ValueError("max_rounds must be at least 1")
    turn = _Turn(client, tools, ctx, purpose, model)
    lent = ctx.complete is None
    if lent:
        ctx.complete = turn.complete
    try:
        return turn.run([dict(m) for m in messages], max_rounds)
    finally:
        if lent:
            ctx.complete = None


class _Turn:
    """The state of one loop: what is offered, what was recorded, the tools' LLM calls."""

    def __init__(
        self,
        client: ChatClient,
        tools: Sequence[ToolSpec],
        ctx: ToolContext,
        purpose: str,
        model: str | ModelChoice | None,
    ) -> None:
        self.client, self.tools, self.ctx = client, tools, ctx
        self.purpose, self.model = purpose, model
        self.by_name = {spec.name: spec for spec in tools}
        self.result = LoopResult()
        self.sub_calls: list[EventData] = []

    def run(self, conversation: list[dict[str, Any]], max_rounds: int) -> LoopResult:
        result = self.result
        for round_number in range(1, max_rounds + 1):
            outcome = self.client.chat(
                conversation, tools=self.tools, model=self.model, purpose=self.purpose
            )
            result.rounds = round_number
            result.events.append(outcome.event)
            if outcome.error:
                result.error = f"LLM call failed: {outcome.error}"
                return result
            if not outcome.tool_calls:
                result.text = outcome.content
                result.error = None if outcome.content else EMPTY_REPLY
                return result
            if round_number == max_rounds and not outcome.content:
                for call in outcome.tool_calls:
                    self.failed(call, f"not run: the turn reached {max_rounds} rounds")
                result.error = f"{TOO_MANY_ROUNDS} ({max_rounds})"
                return result
            conversation.append(_assistant_message(outcome))
            for call in outcome.tool_calls:
                answer = self.call(call)
                conversation.append({"role": "tool", "tool_call_id": call.id, "content": answer})
            if outcome.content:
                result.text = outcome.content
                return result
        raise AssertionError("unreachable: every round returns or continues")  # pragma: no cover

    def complete(self, system: str, user: str, purpose: str) -> str:
        """The completer lent to tools: the text, recorded; CompletionFailed if there is none."""
        text, events = self.client.complete(system, user, purpose, model=self.model)
        self.sub_calls.extend(events)
        if text is None:
            raise CompletionFailed(getattr(events[-1], "error", None) or EMPTY_REPLY)
        return text

    def call(self, call: ToolCallRequest) -> str:
        """Run one call and record it; the text the model is told."""
        spec = self.by_name.get(call.name)
        if spec is None:
            available = ", ".join(sorted(self.by_name)) or "none"
            return self.failed(call, f"unknown tool '{call.name}'; available: {available}")
        try:
            raw = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            problem = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            return self.failed(call, f"arguments are not valid JSON ({problem}); send one object")
        if not isinstance(raw, dict):
            kind = type(raw).__name__
            return self.failed(call, f"arguments must be a JSON object, not a {kind}")
        try:
            arguments = spec.arguments.model_validate(raw)
        except ValidationError as exc:
            return self.failed(call, f"invalid arguments: {field_errors(exc)}")
        try:
            outcome = spec.run(arguments, self.ctx)
            if not isinstance(outcome, ToolOutcome):
                raise TypeError(f"run returned {type(outcome).__name__}, not a ToolOutcome")
            if outcome.ok:
                self.ctx.participant = _folded(self.ctx, outcome.events)
        except Exception as exc:  # noqa: BLE001 - a broken tool must not end the conversation
            log.warning("tool %s (call %s) raised %s", call.name, call.id, type(exc).__name__)
            log.debug("tool %s traceback", call.name, exc_info=True)
            told = f"the tool failed with an internal error ({type(exc).__name__}); nothing changed"
            return self.failed(call, told, detail=f"{type(exc).__name__}: {exc}"[:500])
        if not outcome.ok:
            reason = outcome.message or "the tool refused without a reason"
            return self.failed(call, reason, side_events=outcome.side_events)
        message = outcome.message or "done"
        dump = arguments.model_dump(mode="json")
        self.record(ToolCalled(call_id=call.id, tool=call.name, arguments=dump, result=message))
        self.result.events.extend([*outcome.side_events, *outcome.events])
        self.result.tools_called.append(ToolTrace(call.name, True, message[:EXCERPT]))
        return message

    def failed(
        self,
        call: ToolCallRequest,
        error: str,
        detail: str | None = None,
        side_events: Sequence[EventData] = (),
    ) -> str:
        failure = ToolFailed(
            call_id=call.id, tool=call.name, arguments=call.arguments, error=error, detail=detail
        )
        self.record(failure)
        self.result.events.extend(side_events)
        self.result.tools_called.append(ToolTrace(call.name, False, error[:EXCERPT]))
        return f"Error: {error}"

    def record(self, tool_event: EventData) -> None:
        """The tool's record, then the LLM calls it made through the lent completer."""
        self.result.events.append(tool_event)
        self.result.events.extend(self.sub_calls)
        self.sub_calls.clear()


def _assistant_message(outcome: ChatOutcome) -> dict[str, Any]:
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": _replayable(call.arguments)},
        }
        for call in outcome.tool_calls
    ]
    return {"role": "assistant", "content": outcome.content, "tool_calls": calls}


def _replayable(arguments: str) -> str:
    try:
        return arguments if isinstance(json.loads(arguments), dict) else "{}"
    except ValueError:
        return "{}"


def _folded(ctx: ToolContext, decisions: Sequence[EventData]) -> dict[str, Any]:
    """The participant row with a tool's events applied, as the store will apply them.

    The events also join `ctx.history`, and timers they schedule or cancel update
    `ctx.pending_timers`, so that a later tool of the turn sees them as if already recorded.
    """
    working = Working(ctx.participant, ctx.history, ctx.now)
    before = len(working.history)
    working.add(decisions)
    ctx.pending_timers = pending_timers(working.history[before:], ctx.pending_timers)
    ctx.history = working.history
    return working.row
