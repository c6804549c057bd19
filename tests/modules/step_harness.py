"""Drive the step module in process, turn by turn: a stream of real events folded by the
participants reducer, as the flow would append them, and a scripted LLM."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.channel.outbound import to_participant
from bot.conversation.context import prompt_variables
from bot.conversation.module import ModuleContext, ModuleReply
from bot.conversation.timer_turns import handle_fired
from bot.conversation.tool_loop import LoopResult
from bot.conversation.transcript_llm import chat_messages
from bot.conversation.working import pending_timers
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.messages import MessageQueued, MessageReceived, MessageSent
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.events import Event, EventData, new_id, participant_stream
from bot.store.projections.participants import fold
from modules.step import StepModule

FIXTURES = Path(__file__).resolve().parents[1] / "interventions" / "fixtures"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PHONE = "+447700900123"


def _called(purpose: str, ok: bool = True) -> LLMCalled:
    return LLMCalled(
        call_id=new_id(), purpose=purpose, model="m", ok=ok, error=None if ok else "unscripted"
    )


@dataclass
class ScriptedLLM:
    """Answers by purpose ("step:explore:reply", "judgement:ready"). A scripted answer holds
    until it is replaced; free text may be a list, used in turn (the last one then holds)."""

    texts: dict[str, Any] = field(default_factory=dict)
    results: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def says(self, purpose: str, *texts: str) -> None:
        self.texts[purpose] = list(texts)

    def judges(self, judgement: str, **result: Any) -> None:
        self.results[f"judgement:{judgement}"] = result

    def answers(self, purpose: str, value: Any) -> None:
        self.results[purpose] = {"value": value}

    def converse(self, messages, tools, purpose, *, model=None) -> LoopResult:  # noqa: ANN001
        self.calls.append(
            {"purpose": purpose, "messages": messages, "tools": list(tools), "model": model}
        )
        queue = self.texts.get(purpose) or ["(unscripted)"]
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return LoopResult(text=text, events=[_called(purpose)])

    def structured(self, messages, model_cls, purpose, *, model=None):  # noqa: ANN001
        self.calls.append({"purpose": purpose, "messages": messages, "model": model})
        result = self.results.get(purpose)
        if result is None:
            return None, [_called(purpose, ok=False)]
        return model_cls.model_validate(result), [_called(purpose)]

    def purposes(self) -> list[str]:
        return [call["purpose"] for call in self.calls]

    def call(self, purpose: str) -> dict[str, Any]:
        return [c for c in self.calls if c["purpose"] == purpose][-1]


class Run:
    """One participant in one intervention folder; each turn appends what the flow would."""

    def __init__(
        self,
        folder: str | Path = "good",
        llm: ScriptedLLM | None = None,
        **participant: Any,
    ) -> None:
        folder = FIXTURES / folder if isinstance(folder, str) else folder
        self.module = StepModule(root=folder.parent)
        self.llm = llm or ScriptedLLM()
        self.now = NOW
        self.events: list[Event] = []
        self.replies: list[ModuleReply] = []
        self.embed: Any = None  # model, texts -> vectors, for libraries ranked by embeddings
        # Whether queued messages are sent at once (False: held, as WhatsApp's closed window
        # holds them); `send()` sends what is held.
        self.sending = True
        values = {
            "participant_id": "p1",
            "phone": PHONE,
            "timezone": "Europe/London",
            "intervention": folder.name,
            "conversation_state": "step",
            "name": "Ana",
            **participant,
        }
        self.record([ParticipantEnrolled(**values)])

    @property
    def row(self) -> dict[str, Any]:
        row = fold(self.events)
        assert row is not None
        return row

    def record(self, decided: Sequence[EventData]) -> list[Event]:
        recorded = self._append(decided)
        if self.sending:
            self.send()
        return recorded

    def _append(self, decided: Sequence[EventData]) -> list[Event]:
        recorded = []
        for data in decided:
            version = len(self.events) + 1
            recorded.append(
                Event(
                    seq=version,
                    event_id=new_id(),
                    stream_id=participant_stream("p1"),
                    stream_version=version,
                    data=data,
                    meta={},
                    idempotency_key=None,
                    occurred_at=self.now,
                    recorded_at=self.now,
                )
            )
            self.events.append(recorded[-1])
        return recorded

    def send(self) -> None:
        """Record every queued message not yet sent as sent, as the dispatcher would."""
        sent = {e.data.outbox_id for e in self.events if isinstance(e.data, MessageSent)}
        queued = [e.data for e in self.events if isinstance(e.data, MessageQueued)]
        unsent = [q.outbox_id for q in queued if q.outbox_id not in sent]
        self._append([MessageSent(outbox_id=o, provider_sid=f"SM{o}") for o in unsent])

    def later(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def start(self) -> str | None:
        """The enrollment turn: the root step speaks first."""
        return self._turn("enrolled", None)

    def say(self, body: str) -> str | None:
        """A message from the participant, and the reply (the fallback if the turn failed)."""
        message = MessageReceived(
            message_sid=f"SM{len(self.events):032d}",
            from_address=PHONE,
            to_address="+15005550006",
            channel="sms",
            body=body,
        )
        inbound = self.record([message])[0]
        return self._turn("inbound", inbound)

    def _turn(self, trigger: Any, inbound: Event | None) -> str | None:
        history = list(self.events)
        ctx = ModuleContext(
            participant=self.row,
            now=self.now,
            trigger=trigger,
            transcript=chat_messages(history, current=inbound),
            history=history,
            variables=prompt_variables(self.row, self.now, history, trigger),
            converse=self.llm.converse,
            structured=self.llm.structured,
            inbound=inbound,
            embed=self.embed,
        )
        reply = self.module.run(ctx)
        self.replies.append(reply)
        self.record(reply.result.events)
        text = reply.result.text if not reply.result.error else reply.fallback
        if text:
            self.record(to_participant(self.row, text, kind="reply"))
        return text

    @property
    def step(self) -> str | None:
        return self.row["current_step"]

    def data(self, *types: type[EventData]) -> list[Any]:
        return [e.data for e in self.events if isinstance(e.data, types)]

    def fire(self, kind: str) -> list[EventData]:
        """Fire the pending timer of `kind` as the scheduler would, and record its events."""
        pending = [t for t in pending_timers(self.events) if t["kind"] == kind]
        assert pending, f"no pending {kind} timer"
        timer = {**pending[0], "status": "fired"}
        decided = handle_fired(self.row, timer, self.events, self.now)
        self.record(decided)
        return decided


def in_explore(run: Run) -> Run:
    """A participant of the good fixture who said they were ready: now in `explore`, no risk."""
    run.start()
    run.llm.judges("risk", level="none")
    run.llm.judges("ready", answer="yes")
    run.llm.judges("engaged", response="no", reason="short answers")
    run.say("yes, let's go")
    assert run.step == "explore"
    return run
