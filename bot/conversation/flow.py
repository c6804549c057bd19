"""ConversationFlow: the worker's handler. One work item of one participant in, the turn's events
out; the worker appends them with `work.completed` in one transaction.

- inbound: crisis screen (the participant's intervention's, before any LLM call), the learned
  line (SAFETY_LEARNED) and, when an LLM is configured, the LLM classifier
  (bot.conversation.safety_lines; any firing raises the alert) → reply cancels pending
  reminders → answers to habit questions (the reply parser) → the module of
  `conversation_state` (unknown → intake, recorded) → the reply, or the module's fallback
  with `turn.failed` and a retry timer (bot.conversation.turn_retry)
  → supervisor texts (SUPERVISOR_PHONES and the intervention's) → debug trace.
- enrolled: the module greets from an explicit "participant enrolled" trigger (kind greeting);
  enrolled in their quiet hours, the `greeting` timer's firing greets instead, at their end.
- timer: the kind's handler (bot.conversation.timer_turns); `transition.requested` becomes
  `state.transitioned` (source timer) if the conversation is not there already; an
  administration abandoned on silence lets the step module go on (trigger "abandoned": its
  `abandoned.*` transitions, the new step's message, or nothing); a debug trace
  if the timer sent the participant something or moved the conversation; `turn.retry_due`
  runs the failed turn again.
- broadcast: a broadcast's `broadcast.step_requested` moves the conversation into the step
  module if it is elsewhere (`state.transitioned`, source broadcast) and the step module hops to
  the step and answers; its message is queued with the broadcast's id. A turn that cannot do so
  (opted out since, no such step, the message failed) records `broadcast.held` with why and
  sends nothing: no fallback, no retry, since nobody wrote to be answered.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from bot.channel.outbound import to_participant
from bot.conversation import turn_retry
from bot.conversation.applied import AppliedLookup, ServerOnly, server_default
from bot.conversation.classifier import SafetyClassifier
from bot.conversation.context import prompt_variables
from bot.conversation.crisis import continue_note, crisis_events, honest_messages
from bot.conversation.debug_trace import TurnReport, trace_messages, wanted
from bot.conversation.embeddings import EmbeddingCache
from bot.conversation.learned import LearnedLine
from bot.conversation.llm import ChatClient
from bot.conversation.memory import remembered
from bot.conversation.module import Converse, Module, ModuleContext, ModuleReply, Trigger
from bot.conversation.prompts import PromptError
from bot.conversation.redaction import RedactingClient, Redactor
from bot.conversation.reviews import Routing, review_events, supervisor_events
from bot.conversation.safety import CrisisScreen
from bot.conversation.safety_lines import LearnedSetup, three_lines
from bot.conversation.timer_turns import handle_fired
from bot.conversation.tool_loop import EMPTY_REPLY, LoopResult, run_tool_loop
from bot.conversation.tooling import ToolContext, ToolSpec, resolve
from bot.conversation.transcript_llm import chat_messages
from bot.conversation.turns import Turn
from bot.conversation.whatsapp_start import greeting_as_template
from bot.conversation.working import Working
from bot.core.config import Settings
from bot.core.model_choice import ModelChoice
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.broadcasts import BroadcastHeld, BroadcastStepRequested
from bot.store.event_types.conversation import StateTransitioned, TurnFailed
from bot.store.event_types.instruments import InstrumentAbandoned
from bot.store.event_types.messages import MessageKind, MessageQueued, MessageReceived
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.event_types.retries import TurnRetryDue
from bot.store.event_types.safety import SafetyScored
from bot.store.event_types.timers import TransitionRequested
from bot.store.events import Event, EventData
from bot.timers.reactions import on_inbound

log = logging.getLogger(__name__)

DEFAULT_STATE = "intake"
STEP_STATE = "step"  # the state the step module serves: where a broadcast's step runs
GREETING = "greeting"  # the timer of a welcome held past quiet hours (bot.services.welcome)
# Answers to the daily cycle's questions ("Done", "3"): bot.conversation.daily_cycle.on_reply.
ReplyParser = Callable[..., Sequence[EventData]]


class ConversationFlow:
    """Runs turns for every participant; thread-safe (it keeps no per-turn state)."""

    def __init__(
        self,
        client: ChatClient,
        screen: CrisisScreen,
        settings: Settings,
        modules: Mapping[str, Module],
        *,
        tools: Mapping[str, ToolSpec],
        reply_parser: ReplyParser | None = None,
        safety_message: str | None = None,
        max_rounds: int = 10,
        interventions: AppliedLookup | None = None,
        learned_line: Callable[[], LearnedLine] | None = None,
    ) -> None:
        if DEFAULT_STATE not in modules:
            raise ValueError(f"the modules must include {DEFAULT_STATE!r}")
        self.tools = dict(tools)
        for module in modules.values():
            resolve(module.tools, self.tools)  # an unknown tool name fails here, at start
        self.client, self.settings = client, settings
        self.embed = EmbeddingCache(client.embed, settings.embeddings_cache_dir)
        self.modules = dict(modules)
        self.reply_parser = reply_parser
        # Per participant: their intervention's screen, safety message and supervisors.
        self.interventions = interventions or ServerOnly(
            server_default(settings, screen, safety_message)
        )
        self.max_rounds = max_rounds
        self.classifier = SafetyClassifier.configured(client, settings)
        # loaded on first use (workers: at start, build_handler); `learned_line`: a test double
        self.learned = LearnedSetup.configured(settings, learned_line)
        self.review_after = timedelta(minutes=settings.review_escalate_minutes)
        self.retry_delays = tuple(settings.turn_retry_minutes)
        self.debug_phones = set(settings.debuggers())
        self.alert_window = timedelta(minutes=settings.supervisor_alert_window_minutes)
        self.escalate_after = timedelta(minutes=settings.alert_escalate_minutes)
        self.escalation_phones = tuple(settings.escalation())
        self.routing = Routing(
            lambda participant: self.interventions.of(participant).supervisors,
            self.escalation_phones,
            self.alert_window,
            self.escalate_after,
            settings.public_base_url,
        )
        self.options: dict[str, Any] = {
            "alert_window_minutes": settings.supervisor_alert_window_minutes,
            "prep_minutes": settings.prep_minutes,
        }
        if settings.quiet_hours:
            self.options["quiet_hours"] = settings.quiet_hours

    def handle(self, turn: Turn) -> list[EventData]:
        """All of the turn's events, in the order they are to be recorded."""
        if turn.kind == "inbound":
            return self._inbound(turn)
        if turn.kind == "enrolled":
            return self._enrolled(turn)
        if turn.kind == "timer":
            return self._timer(turn)
        if turn.kind == "broadcast":
            return self._broadcast(turn)
        log.info("work item %s: nothing to do for kind %s", turn.item["work_id"], turn.kind)
        return []

    def _inbound(self, turn: Turn) -> list[EventData]:
        message = turn.trigger.data if turn.trigger is not None else None
        if not isinstance(message, MessageReceived):
            log.warning("work item %s: its message is missing", turn.item["work_id"])
            return []
        assert turn.trigger is not None  # its payload is the message
        history = turn.history()
        working = Working(turn.participant, history, turn.now, turn.pending)
        events: list[EventData] = []
        notes: list[str] = []
        applied = self.interventions.of(turn.participant)
        screened, lines = three_lines(
            self.learned,
            self.classifier,
            applied.screen.check(message.body),
            message.body,
            self._for_llm(turn.participant, message.body),
            turn.trigger.event_id,
        )
        events += lines
        if not screened.crisis:  # a review item only where no line raised the alert
            for scored in (e for e in lines if isinstance(e, SafetyScored)):
                if scored.band == "review":
                    events += review_events(turn.participant, scored, self.review_after, turn.now)
        if screened.crisis:
            log.warning(
                "participant %s: crisis rule %s", working.row["participant_id"], screened.rule
            )
            events += crisis_events(turn.participant, screened, applied.safety_message)
            notes.append(continue_note(applied.safety_message, bool(applied.supervisors)))
        events += on_inbound(turn.participant, working.pending_timers(), turn.now, turn.trigger)
        if self.reply_parser is not None:
            events += self.reply_parser(
                turn.participant, message.body, history, turn.now, inbound=turn.trigger
            )
        working.add(events)
        if screened.crisis and not self.settings.safety_continue_turn:
            note = f"safety: crisis rule {screened.rule}; safety message sent, no LLM turn"
            report = TurnReport(working.state, working.state, "safety", notes=[note])
            return self._finish(turn, events, report)
        if turn.participant.get("opted_out"):
            return self._finish(turn, events, None)  # nothing could reach them
        return self._converse(turn, working, events, "inbound", turn.trigger, notes)

    def _enrolled(self, turn: Turn) -> list[EventData]:
        enrolled = turn.trigger.data if turn.trigger is not None else None
        if isinstance(enrolled, ParticipantEnrolled) and enrolled.source == "auto":
            return []  # enrolled by their own message, which is answered instead
        working = Working(turn.participant, turn.history(), turn.now, turn.pending)
        if any(t.get("kind") == GREETING for t in working.pending_timers()):
            return []  # enrolled in their quiet hours: the `greeting` timer greets at their end
        return self._converse(turn, working, [], "enrolled", None, [])

    def _broadcast(self, turn: Turn) -> list[EventData]:
        request = turn.trigger.data if turn.trigger is not None else None
        if not isinstance(request, BroadcastStepRequested):
            log.warning("work item %s: its broadcast request is missing", turn.item["work_id"])
            return []
        why = None
        if turn.participant.get("opted_out"):
            why = "opted out"
        elif STEP_STATE not in self.modules:
            why = "this server runs no step module"
        if why is not None:
            return [BroadcastHeld(broadcast_id=request.broadcast_id, reason=why)]
        working = Working(turn.participant, turn.history(), turn.now, turn.pending)
        return self._converse(turn, working, [], "broadcast", None, [], start=request)

    def _timer(self, turn: Turn) -> list[EventData]:
        history = turn.history()
        if turn.timer is not None and turn.timer["kind"] == GREETING:
            working = Working(turn.participant, history, turn.now, turn.pending)
            return self._converse(turn, working, [], "enrolled", None, [])
        events = list(
            handle_fired(turn.participant, turn.timer, history, turn.now, pending=turn.pending)
        )
        working = Working(turn.participant, history, turn.now, turn.pending)
        state_before = working.state
        working.add(events)
        for request in [e for e in events if isinstance(e, TransitionRequested)]:
            to_state = request.to_state.lower()
            if to_state not in self.modules or to_state == working.state:
                log.info("transition %s to %s: not applicable", request.timer_id, to_state)
                continue
            moved = StateTransitioned(
                from_state=working.state, to_state=to_state, reason=request.reason, source="timer"
            )
            events.append(moved)
            working.add([moved])
        due = next((e for e in events if isinstance(e, TurnRetryDue)), None)
        if due is not None:
            return self._retry(turn, working, events, due)
        if self._continues_after(working, events):
            return self._converse(turn, working, events, "abandoned", None, [])
        report = None
        if working.state != state_before or any(
            isinstance(e, MessageQueued) and e.to_participant for e in events
        ):
            kind = turn.timer["kind"] if turn.timer else "?"
            report = TurnReport(state_before, working.state, f"timer {kind}", (), events)
        return self._finish(turn, events, report)

    def _continues_after(self, working: Working, events: Sequence[EventData]) -> bool:
        """Whether a timer abandoned an administration on silence in a conversation whose
        module goes on by itself (the step module: its `abandoned.*` transitions)."""
        module = self.modules.get(working.state or "")
        return getattr(module, "continues_after_abandon", False) and any(
            isinstance(e, InstrumentAbandoned) and e.reason == "silence" for e in events
        )

    def _retry(
        self, turn: Turn, working: Working, events: list[EventData], due: TurnRetryDue
    ) -> list[EventData]:
        """Run a failed turn again, with the transcript as it was when it first failed."""
        current = turn_retry.retried_message(turn.history(), due)
        recorded = turn_retry.before(turn.history(), current)
        notes = []
        if turn_retry.flagged_after(working.memory, current):  # SAFETY_CONTINUE_TURN=true
            applied = self.interventions.of(turn.participant)
            notes.append(continue_note(applied.safety_message, bool(applied.supervisors)))
        return self._converse(turn, working, events, due.trigger, current, notes, due, recorded)

    def _converse(
        self,
        turn: Turn,
        working: Working,
        events: list[EventData],
        trigger: Trigger,
        current: Event | None,
        notes: Sequence[str],
        retry: TurnRetryDue | None = None,
        recorded: list[Event] | None = None,
        start: BroadcastStepRequested | None = None,
    ) -> list[EventData]:
        """Route to the module, run it, and queue its reply, or on failure its fallback (none
        for a failed retry, which sent one already) and the next retry. With `start` (a
        broadcast's step), the step module answers and a failure is the broadcast's hold."""
        state_before = working.state
        events += self._opening(working, trigger)
        if start is not None and working.state != STEP_STATE:
            moved = StateTransitioned(
                from_state=working.state,
                to_state=STEP_STATE,
                reason=f"broadcast {start.broadcast_id} starts step {start.step!r}",
                source="broadcast",
            )
            events.append(moved)
            working.add([moved])
        module = self.modules.get(working.state or "")
        if module is None:
            moved = StateTransitioned(
                from_state=working.state,
                to_state=DEFAULT_STATE,
                reason=_unroutable(working.state),
                source="flow",
            )
            events.append(moved)
            working.add([moved])
            module = self.modules[DEFAULT_STATE]
        recorded = turn.history() if recorded is None else recorded
        context = ModuleContext(
            participant=dict(working.row),
            now=turn.now,
            trigger=trigger,
            transcript=chat_messages(
                recorded, current=current, limit=self.settings.chat_history_limit
            ),
            history=list(working.history),
            variables=prompt_variables(
                working.row,
                turn.now,
                recorded,
                trigger,
                contacted=remembered(turn.participant, recorded).contacted,
            ),
            converse=self._converser(working, turn.now),
            notes=notes,
            structured=functools.partial(self._structured, client=self._llm(working.row)),
            inbound=current,
            embed=self.embed,
            pending=working.pending_timers(),
            start=start.step if start is not None else None,
        )
        try:
            reply = module.run(context)
        except PromptError as exc:  # a prompt edited with a mistake: say so, answer anyway
            log.error("participant %s: %s", working.row["participant_id"], exc)
            greeting = getattr(getattr(module, "prompt", None), "greeting_fallback", None)
            reply = ModuleReply(LoopResult(error=str(exc)), module.fallback, greeting)
        result = reply.result
        events += result.events
        working.add(result.events)
        text = (result.text or "").strip()
        failure = (
            None if (text or result.silent) and not result.error else (result.error or EMPTY_REPLY)
        )
        kind: MessageKind = "greeting" if trigger == "enrolled" else "reply"
        if start is not None:
            return self._finish(turn, events + _started(working.row, start, text, failure), None)
        delays: tuple[float, ...] = self.retry_delays
        if trigger == "abandoned":  # nothing to say is fine; a failure is not tried again
            kind, delays = "notice", ()
            failure = result.error
        if failure:
            log.warning("participant %s: turn failed (%s)", working.row["participant_id"], failure)
            failed, text = turn_retry.failed_turn(
                working.row, failure, reply, trigger, current, retry, delays, turn.now
            )
            events += failed
        if text:
            events += to_participant(working.row, text, kind=kind)
        report = TurnReport(
            state_before,
            working.state,
            module.name,
            result.tools_called,
            result.events,
            [f"turn failed: {failure}; {'fallback sent' if text else 'nothing sent'}"]
            if failure
            else [],
        )
        return self._finish(turn, events, report)

    def _opening(self, working: Working, trigger: Trigger) -> list[EventData]:
        """What modules with an `opening` decide before routing (the step module moves a new
        participant into their intervention's root step)."""
        decided: list[EventData] = []
        for module in self.modules.values():
            opening = getattr(module, "opening", None)
            if opening is not None:
                moved = list(opening(working.row, working.history, trigger))
                working.add(moved)
                decided += moved
        return decided

    def _converser(self, working: Working, now: datetime) -> Converse:
        """The tool loop bound to the client and to this participant's tool context."""
        options = dict(self.options)
        applied = self.interventions.of(working.row)
        own_quiet_hours = applied.quiet_hours
        if own_quiet_hours:
            options["quiet_hours"] = own_quiet_hours
        ctx = ToolContext(
            participant=dict(working.row),
            now=now,
            history=list(working.history),
            pending_timers=working.pending_timers(),
            options=options,
        )

        def converse(
            messages: list[dict[str, Any]],
            tools: Sequence[str],
            purpose: str,
            *,
            model: str | ModelChoice | None = None,
        ) -> LoopResult:
            specs = resolve(tools, self.tools)
            return run_tool_loop(
                self._llm(working.row),
                messages,
                specs,
                ctx,
                purpose=purpose,
                model=ModelChoice.of(model).over(applied.model),
                max_rounds=self.max_rounds,
            )

        return converse

    def _structured(
        self,
        messages: list[dict[str, Any]],
        model_cls: type[BaseModel],
        purpose: str,
        *,
        model: str | ModelChoice | None = None,
        client: Any = None,
    ) -> tuple[BaseModel | None, list[EventData]]:
        client = client or self.client
        return client.structured(messages, model_cls, purpose=purpose, model=model)

    def _for_llm(self, participant: Mapping[str, Any], text: str) -> str:
        """`text` as the LLM may see it: redacted if the participant's intervention says so
        (the second-line classifier's request, which does not go through `_llm`)."""
        if not self.interventions.of(participant).redact_for_llm:
            return text
        return Redactor(participant.get("name"), self.settings.default_region).text(text)

    def _llm(self, participant: Mapping[str, Any]) -> Any:
        """The LLM client for this participant: redacting, if their intervention says so."""
        if not self.interventions.of(participant).redact_for_llm:
            return self.client
        redactor = Redactor(participant.get("name"), self.settings.default_region)
        return RedactingClient(self.client, redactor)

    def _finish(
        self, turn: Turn, events: list[EventData], report: TurnReport | None
    ) -> list[EventData]:
        """Add the supervisor texts the turn's alerts call for, then the debug trace."""
        participant_id = str(turn.participant["participant_id"])
        supervised = bool(self.interventions.of(turn.participant).supervisors)
        events = honest_messages(events, supervised)
        events = greeting_as_template(
            events, turn.participant, self.interventions.of(turn.participant).whatsapp_template
        )
        events = _quoted(events, turn.trigger.data if turn.trigger is not None else None)
        alerts = [e for e in events if isinstance(e, AlertRaised) and e.notify_supervisors]
        if alerts:
            supervisors = self.interventions.of(turn.participant).supervisors
            memory = remembered(turn.participant, turn.history())
            texts = supervisor_events(turn.participant, alerts, self.routing, memory, turn.now)
            events += texts
            log.info(
                "participant %s: %d alert(s) for supervisors, %d text(s) queued%s",
                participant_id,
                len(alerts),
                sum(isinstance(e, MessageQueued) for e in texts),
                "" if supervisors else " (no SUPERVISOR_PHONES, none of its intervention)",
            )
        if report is not None and wanted(turn.participant, self.debug_phones):
            events += trace_messages(turn.participant, report)
        return events


def _started(
    row: Mapping[str, Any], start: BroadcastStepRequested, text: str, failure: str | None
) -> list[EventData]:
    """A broadcast's step turn: its message, carrying the broadcast's id, or the hold (and the
    failed turn) saying why there is none."""
    bid = start.broadcast_id
    if failure:
        why = f"step {start.step!r} did not write its message: {failure}"
        return [
            TurnFailed(reason=failure, fallback=None),
            BroadcastHeld(broadcast_id=bid, reason=why[:500]),
        ]
    return [
        message.model_copy(update={"broadcast_id": bid})
        for message in to_participant(row, text, kind="broadcast")
    ]


def _unroutable(state: str | None) -> str:
    if not state:
        return f"no conversation state; routed to {DEFAULT_STATE}"
    return f"unknown conversation state {state!r}; routed to {DEFAULT_STATE}"


def _quoted(events: list[EventData], trigger: object) -> list[EventData]:
    """The turn's alerts quoting the message that started the turn, when one did."""
    if not isinstance(trigger, MessageReceived):
        return events
    return [
        e.model_copy(update={"quote": trigger.body})
        if isinstance(e, AlertRaised) and e.quote is None
        else e
        for e in events
    ]
