"""What a conversation module is given and returns, and the prompt-driven module intake and
feedback are made of.

A module never touches the LLM client, the store or an SDK: the flow hands it a `converse`
callable (the tool loop, bound to the ChatClient and to this participant's tool context) and
appends what comes back. A module names its tools by string; the flow resolves them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

from bot.conversation import embeddings
from bot.conversation.prompts import Prompt
from bot.conversation.tone import tone_guide
from bot.core.model_choice import ModelChoice
from bot.store.events import Event, EventData

if TYPE_CHECKING:
    from bot.conversation.debug_trace import ToolLine
    from bot.conversation.tool_loop import LoopResult

# "abandoned": an administration left unanswered was abandoned by its timer, and the step
# module checks the step's transitions (bot.conversation.flow); "broadcast": a broadcast starts
# a step (bot.services.broadcast_steps).
Trigger = Literal["inbound", "enrolled", "broadcast", "abandoned"]
ENROLLED = (
    "The participant has just been enrolled and has not written anything yet. Send your first "
    "message: greet them (by name if you know it), say in a sentence what this chat is for, "
    "and ask your first question."
)


class Converse(Protocol):
    """Run the tool loop on `messages` offering `tools` (by name); `purpose` labels the calls."""

    def __call__(
        self,
        messages: list[dict[str, Any]],
        tools: Sequence[str],
        purpose: str,
        *,
        model: str | ModelChoice | None = None,
    ) -> LoopResult: ...


# model, texts -> one vector each (raises bot.conversation.embeddings.EmbeddingError)
Embed = embeddings.Embed


class Structured(Protocol):
    """One LLM reply validated as `model_cls` (bot.conversation.llm.ChatClient.structured):
    the value, or None if no valid reply came, and the `llm.called` events."""

    def __call__(
        self,
        messages: list[dict[str, Any]],
        model_cls: type[BaseModel],
        purpose: str,
        *,
        model: str | ModelChoice | None = None,
    ) -> tuple[BaseModel | None, list[EventData]]: ...


@dataclass(frozen=True)
class ModuleContext:
    """One turn as a module sees it.

    `transcript` is the chat so far (bot.conversation.transcript_llm), ending with the message
    being answered on an inbound turn; `variables` the engine's prompt variables
    (bot.conversation.context); `notes`
    system notes the flow adds (what the safety screen did, say); `structured` asks for a typed
    reply (judgements); `inbound` is the message being answered, if any; `pending` the
    participant's pending timers as rows of the timers table, as of the turn so far (None:
    folded from `history`, which then holds the whole stream); `start` the step a broadcast
    starts (trigger "broadcast"), which the step module moves to before it answers.
    """

    participant: Mapping[str, Any]
    now: datetime
    trigger: Trigger
    transcript: list[dict[str, Any]]
    history: Sequence[Event]
    variables: Mapping[str, Any]
    converse: Converse
    notes: Sequence[str] = ()
    structured: Structured | None = None
    inbound: Event | None = None
    embed: Embed | None = None  # model, texts -> vectors (bot.conversation.embeddings)
    pending: Sequence[Mapping[str, Any]] | None = None
    start: str | None = None


class TurnResult(Protocol):
    """What a module's turn produced: the tool loop's LoopResult, or the step module's
    StepResult (bot.interventions.interpreter.turn), which is shaped like it."""

    @property
    def text(self) -> str | None: ...
    @property
    def events(self) -> list[EventData]: ...
    @property
    def error(self) -> str | None: ...
    @property
    def tools_called(self) -> Sequence[ToolLine]: ...
    @property
    def silent(self) -> bool: ...


@dataclass(frozen=True)
class ModuleReply:
    """The loop's result and the text to send instead if it produced no reply; `greeting` is
    the one to send instead of a failed greeting (None: send nothing rather than a text that
    reads as a reply to a message the participant never sent)."""

    result: TurnResult
    fallback: str
    greeting: str | None = None


class Module(Protocol):
    """A conversation module: the state it serves, the tools it may offer, the text sent when
    its turn fails, and a turn.

    A module may also have `opening(participant, history, trigger) -> list[EventData]`, which
    the flow calls before routing every turn (the step module moves a participant who has just
    enrolled into their intervention's root step).
    """

    @property
    def name(self) -> str: ...
    @property
    def tools(self) -> Sequence[str]: ...

    @property
    def fallback(self) -> str: ...

    def run(self, ctx: ModuleContext) -> ModuleReply: ...


Extra = Callable[[ModuleContext], Mapping[str, Any]]


def no_extra(ctx: ModuleContext) -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True)
class PromptModule:
    """A module that is its prompt: render it, add the tone policy, run the loop once.

    `extra` adds variables of the module's own to the engine's (the last habit prompt, say).
    """

    name: str
    prompt: Prompt
    extra: Extra = no_extra

    @property
    def tools(self) -> Sequence[str]:
        return self.prompt.tools

    @property
    def fallback(self) -> str:
        return self.prompt.fallback

    def system_prompt(self, ctx: ModuleContext) -> str:
        """The rendered prompt, then the `<TONE POLICY>` block when tone tags are active."""
        text = self.prompt.render({**ctx.variables, **self.extra(ctx)})
        guide = tone_guide(ctx.participant.get("profile") or {})
        return f"{text}\n\n{guide}" if guide else text

    def run(self, ctx: ModuleContext) -> ModuleReply:
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt(ctx)}]
        messages += ctx.transcript
        if ctx.trigger == "enrolled":
            messages.append({"role": "system", "content": ENROLLED})
        messages += [{"role": "system", "content": note} for note in ctx.notes]
        result = ctx.converse(messages, self.tools, self.name, model=self.prompt.choice)
        return ModuleReply(result, self.fallback, self.prompt.greeting_fallback)
