"""One turn of an intervention (pure: the LLM comes in as callables, events go out).

On a message from the participant: a reply to an instrument being administered is read
deterministically (bot.instruments through the intervention's port) and answered with the
next item; on completion (or abandonment) the step's transitions are checked, as for a
`moves_on` question. An administration abandoned on silence by its timer runs a turn of its
own (trigger "abandoned") that checks the step's transitions and nothing else.
Otherwise an answer to a pending question is recorded (and thanked
or clarified, or, for a `moves_on` question, followed by the step's transition that now holds)
instead of a turn; otherwise the turn is counted, the step's form (if any) reads the message
(bot.interventions.interpreter.extraction), then at most one hop
(bot.interventions.interpreter.moves), with the due judgements before the step's transitions, exit
judgements, notes and actions of the step left, the transition's actions, and the enter
judgements and actions of the step entered; then the reply from the (possibly new) step, and
once it has answered, its `after_reply` transitions (answer-then-switch; none if the reply
failed).
On enrollment the participant enters the root step and it speaks first. A broadcast that starts
a step (trigger "broadcast", `start`) hops there as a transition would (exit judgements, notes
and actions of the step left, enter judgements and actions of the step entered, `via`
"broadcast"), and the step speaks first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.conversation.working import Working
from bot.interventions.interpreter import (
    context,
    decision_events,
    decision_schedule,
    extraction,
    judging,
    retrieval,
)
from bot.interventions.interpreter.actions import Situation, Source, run_actions
from bot.interventions.interpreter.answers import answer
from bot.interventions.interpreter.completion import Asker, complete
from bot.interventions.interpreter.failures import RunFailure, failure_events
from bot.interventions.interpreter.moves import (
    Move,
    interrupt_move,
    session_move,
    step_move,
    transition_move,
)
from bot.interventions.language.format import Action
from bot.interventions.language.instrument_port import Administered
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.interventions import (
    JudgementRecorded,
    MeasurementRecorded,
    StepEntered,
    StepReplied,
)
from bot.store.event_types.interventions import StepTurnTaken as TurnTaken
from bot.store.event_types.messages import MessageReceived
from bot.store.events import Event, EventData


@dataclass(frozen=True)
class TurnInput:
    """What a turn is decided on; `frame` is the rendered prompts/step.md."""

    intervention: Intervention
    participant: Mapping[str, Any]
    history: Sequence[Event]
    now: datetime
    trigger: str = "inbound"
    inbound: Event | None = None
    frame: str = ""
    notes: Sequence[str] = ()
    # The pending timers rows (bot.conversation.module.ModuleContext.pending; None: folded
    # from `history`).
    pending: Sequence[Mapping[str, Any]] | None = None
    start: str | None = None  # the step a broadcast starts


@dataclass
class StepResult:
    """The turn's reply (`text`) or why there is none (`error`), and its events. Shaped like
    bot.conversation.tool_loop.LoopResult, which the flow reads and modules cannot import."""

    text: str | None = None
    events: list[EventData] = field(default_factory=list)
    error: str | None = None
    rounds: int = 0
    tools_called: list[Any] = field(default_factory=list)
    # No reply on purpose: the message came before the question it would answer was sent (a
    # WhatsApp question held until the window opened); the question is on its way, not asked again.
    silent: bool = False


def run_turn(turn: TurnInput, llm: Asker) -> StepResult:
    return _Turn(turn, llm).run()


class _Turn:
    def __init__(self, turn: TurnInput, llm: Asker) -> None:
        self.turn, self.llm, self.now = turn, llm, turn.now
        self.i = turn.intervention
        self.working = Working(turn.participant, turn.history, turn.now, turn.pending)
        self.result = StepResult()
        self._retrieved: tuple[int, dict[str, Any]] | None = None

    def emit(self, events: Sequence[EventData]) -> None:
        self.working.add(events)
        self.result.events += events

    @property
    def progress(self) -> context.Progress:
        return context.Progress.of(self.working.row)

    def data(self) -> dict[str, Any]:
        return context.data(self.i, self.working.row, self.now, self.working.history)

    def template_context(self, **extra: Any) -> dict[str, Any]:
        speakers = self.i.config.speakers
        window = self.working.history
        entered = [e.data for e in window if isinstance(e.data, StepEntered)]
        said = context.transcript(
            window,
            self.turn.inbound,
            (speakers.participant, speakers.bot),
            step=entered[0].from_step if entered else self.progress.step,
            visit=self.working.memory.visits - len(entered),
        )
        return {
            **self.data(),
            "turns": context.turns_function(said, list(self.i.steps)),
            "trigger": self.turn.trigger,
            "intervention": {"title": self.i.config.title, "version": self.i.config.version},
            "retrieved": self.retrieved(),
            **extra,
        }

    def retrieved(self) -> dict[str, Any]:
        """`retrieved`, folded again only when the turn has added events since."""
        size = len(self.working.history)
        if self._retrieved is None or self._retrieved[0] != size:
            self._retrieved = (size, retrieval.retrieved(self.i, self.working.memory))
        return self._retrieved[1]

    def render_text(self, key: str, source: str) -> str:
        """A question's text (`source` is what the author wrote, for the record); a failure
        to render it stops the turn (TemplateFailure), it is never sent as written."""
        return judging.render(self.i, key, self.template_context()).text

    def run(self) -> StepResult:
        """The turn; a condition or template that fails at run time stops it loudly: its
        `condition.failed`/`template.failed` event and an alert, and the fallback is sent."""
        try:
            decided = self.decide()
            self.decision_points()
            return decided
        except RunFailure as failure:
            self.emit(failure_events(self.i, failure, self.progress.step))
            self.result.text, self.result.error = None, str(failure)
            return self.result

    def decide(self) -> StepResult:
        inbound = self.turn.trigger == "inbound"
        if self.turn.start is not None:
            return self.started(self.turn.start)
        if self.progress.step not in self.i.steps:
            if not self.i.root:
                self.result.error = f"intervention {self.i.slug!r} has no root step"
                return self.result
            was = self.progress.step
            self.enter(Move(self.i.root, "root", values={"was": was} if was else {}), None)
            history = self.working.history
            self.emit(decision_schedule.first_timers(self.i, self.working.row, self.now, history))
            if inbound:
                self.emit([TurnTaken(step=self.i.root, turn=self.progress.turns + 1)])
            return self.reply()
        if self.turn.trigger == "abandoned":
            return self.after_abandonment()
        if inbound:
            administered = self.administered()
            if administered is not None and administered.reply is not None:
                move = None
                if administered.completed or administered.abandoned:
                    step = self.i.steps[str(self.progress.step)]
                    move = transition_move(step, self.data())
                if move is None:
                    self.result.text = administered.reply
                    return self.result
                self.hop(move)
                return self.reply()
            asked = answer(self.i, self.working, self.turn.inbound, self.llm, self.render_text)
            if asked is not None and asked.waiting:
                self.result.silent = True
                return self.result
            if asked is not None:
                self.emit(asked.events)
                if asked.reply is not None:
                    move = self.answered_move(asked.events)
                    if move is None:
                        self.result.text = asked.reply
                        return self.result
                    self.hop(move)
                    return self.reply()
            self.emit([TurnTaken(step=self.progress.step, turn=self.progress.turns + 1)])
            self.extract()
            move = self.opening_move()
            if move is None:
                self.judge_step("turn")
                move = step_move(self.i, self.progress, self.data(), self.now)
            if move is not None:
                self.hop(move)
        replied = self.reply()
        if inbound and replied.error is None:
            self.switch_after_reply()
        return replied

    def started(self, step: str) -> StepResult:
        """A broadcast's step: entered through the ordinary hop (or as the first step, if the
        participant has none yet), then its reply; a step the intervention lacks is an error."""
        if step not in self.i.steps:
            self.result.error = f"no step {step!r} in intervention {self.i.slug!r}"
            return self.result
        move = Move(step, "broadcast")
        if self.progress.step in self.i.steps:
            self.hop(move)
        else:
            self.enter(move, None)
            history = self.working.history
            self.emit(decision_schedule.first_timers(self.i, self.working.row, self.now, history))
        return self.reply()

    def after_abandonment(self) -> StepResult:
        """An administration abandoned on silence by its timer: the step's transition that
        now holds (`abandoned.<instrument>`), whose step speaks; nothing to say if none does
        (the participant stays, and the abandonment is recorded)."""
        step = self.i.steps[str(self.progress.step)]
        move = transition_move(step, self.data())
        if move is None:
            return self.result
        self.hop(move)
        return self.reply()

    def decision_points(self) -> None:
        """The points of the `on:` decisions the turn's message and steps entered set off
        (bot.interventions.interpreter.decision_events), each after the turn's own events."""
        inbound = self.turn.inbound if self.turn.trigger == "inbound" else None
        for name, due in decision_events.triggered(self.i, self.result.events, inbound):
            row, history = self.working.row, self.working.history
            at = due or self.now
            self.emit(decision_events.point_events(self.i, name, at, row, history, self.now))

    def administered(self) -> Administered | None:
        """A reply to the administration in progress, read deterministically (no LLM): its
        events are emitted; None if none is in progress (or the message is not a reply)."""
        counters = self.working.row.get("step_counters") or {}
        current, inbound = counters.get("administering"), self.turn.inbound
        if not current or self.i.instruments is None or inbound is None:
            return None
        if current.get("instrument") not in self.i.instruments.names():
            return None
        if not isinstance(inbound.data, MessageReceived):
            return None
        stored = counters.get("instruments") or {}
        found = self.i.instruments.read(current, stored, inbound.data.body, self.now)
        self.emit(found.events)
        return found

    def extract(self) -> None:
        """The step's form reads this message: one structured extraction, validated; then the
        form's completion rule is checked on what it now holds."""
        slug = str(self.progress.step)
        spec = self.i.steps[slug].form
        if spec is None:
            return
        self.emit(
            extraction.extract(
                self.i,
                spec.name,
                spec.mode,
                self.template_context(),
                self.llm,
                self.working.row,
                self.turn.inbound,
                slug,
            )
        )
        self.emit(extraction.completion(self.i, spec.name, self.working.row))

    def switch_after_reply(self) -> None:
        """Answer-then-switch: a transition marked `after_reply` that holds once the step has
        answered moves the participant now; the new step handles the next message."""
        step = self.i.steps.get(str(self.progress.step))
        if step is None:
            return
        move = transition_move(step, self.data(), after_reply=True)
        if move is not None:
            self.hop(move)

    def answered_move(self, events: Sequence[EventData]) -> Move | None:
        """After a valid answer to a `moves_on` question: the step's transition that now
        holds (no turn is counted and no judgement runs), whose step replies instead."""
        recorded = [e for e in events if isinstance(e, MeasurementRecorded)]
        question = self.i.questions.get(recorded[-1].measurement) if recorded else None
        if question is None or not question.moves_on:
            return None
        return transition_move(self.i.steps[str(self.progress.step)], self.data())

    def opening_move(self) -> Move | None:
        """A new session, or an interrupt (after the judgements interrupts rely on)."""
        progress = self.progress
        move = session_move(self.i, progress, self.working.memory, self.turn.inbound)
        if move is not None:
            return move
        for slug in self.i.interrupt_judgements():
            self.judge(slug, "interrupt")
        return interrupt_move(self.i, self.progress, self.data())

    def hop(self, move: Move) -> None:
        left = str(self.progress.step)
        if move.returning or not self.i.returns(move.to):  # a digression or interrupt pauses
            self.judge_step("exit")
            for note in self.i.steps[left].notes:
                self.emit(self.take_note(note))
            self.act(self.i.steps[left].on_exit, "condition", left)
        self.act(move.actions, "condition", left)
        self.enter(move, left)

    def enter(self, move: Move, left: str | None) -> None:
        progress, target = self.progress, self.i.steps[move.to]
        stack = [dict(frame) for frame in progress.stack]
        turns, entered_at = 0, self.now
        if move.returning:
            frame = stack.pop()
            turns, entered_at = int(frame["turns"]), datetime.fromisoformat(frame["entered_at"])
        elif left is not None and target.returns:
            since = (progress.entered_at or self.now).isoformat()
            stack.append({"step": left, "turns": progress.turns, "entered_at": since})
        elif left is not None and self.i.returns(left) and stack:
            stack.pop()  # a digression that moves on elsewhere gives up its way back
        entered = StepEntered(
            intervention=self.i.slug,
            step=move.to,
            from_step=left,
            via=move.via,
            condition=move.condition,
            values=dict(move.values),
            stack=stack,
            turns=turns,
            entered_at=entered_at,
            revision=self.i.revision,
        )
        self.emit([entered])
        if not move.returning:
            self.judge_step("enter")
            self.act(target.on_enter, "condition", move.to)

    def judge_step(self, when: str) -> None:
        progress = self.progress
        for run in self.i.steps[str(progress.step)].judgements:
            due = when != "turn" or progress.turns % run.every == 0
            if run.when == when and due:
                self.judge(run.name, when)

    def judge(self, slug: str, when: Any) -> None:
        step = self.progress.step
        events = judging.judge(self.i, slug, self.template_context(), self.llm, step, when)
        self.emit(events)
        if isinstance(events[-1], JudgementRecorded):
            self.act(self.i.judgements[slug].actions, "judgement", step)

    def take_note(self, slug: str) -> list[EventData]:
        return judging.take_note(
            self.i, slug, self.template_context(), self.llm, self.progress.step
        )

    def act(self, actions: Sequence[Action], source: Source, step: str | None) -> None:
        """Each action in order, each seeing what the earlier ones did (a `send:` after a
        `set:` prints the value just set)."""
        for action in actions:
            situation = Situation(
                self.i,
                self.working.row,
                self.working.history,
                self.now,
                self.data(),
                self.render_text,
                self.take_note,
                self.retrieve_once,
                self.working.pending_timers,
            )
            self.emit(run_actions([action], situation, source, step))

    def retrieve_once(self, action: Action) -> list[EventData]:
        """A `retrieve:` action (once, where it runs)."""
        found = self.i.retrieval_of(action)
        context_now = self.template_context()
        return retrieval.retrieve(
            self.i, found, context_now, self.llm.embed, self.progress.step, "action"
        )

    def retrieve_every_turn(self, slug: str) -> None:
        """The step's `retrieve:`, before it writes its reply (each sees the one before)."""
        for found in self.i.retrievals():
            if found.key == f"step:{slug}" and found.action is None:
                events = retrieval.retrieve(
                    self.i, found, self.template_context(), self.llm.embed, slug, "turn"
                )
                self.emit(events)

    def reply(self) -> StepResult:
        slug = str(self.progress.step)
        step = self.i.steps[slug]
        self.retrieve_every_turn(slug)
        if step.say is not None:
            items = [step.say] if isinstance(step.say, str) else step.say
            said = self.working.memory.said(slug)
            index = said % len(items)
            key = f"step:{slug}:say:{index}"
            self.result.text = judging.render(self.i, key, self.template_context()).text
            self.emit([StepReplied(step=slug, say=index, revision=self.i.revision)])
            return self.result
        rendered = judging.render(self.i, f"step:{slug}", self.template_context())
        model = self.i.model(step.model, "step")
        asker = Asker(self.llm.converse, self.llm.structured, model, self.llm.embed)
        done = complete(
            rendered,
            asker,
            purpose=f"step:{slug}",
            frame=self.turn.frame,
            tools=step.tools,
            notes=self.turn.notes,
        )
        self.emit(done.events)
        self.result.tools_called += done.tools_called
        slots = dict(done.values)
        self.emit([StepReplied(step=slug, slots=slots, sent=done.sent, revision=self.i.revision)])
        self.result.text, self.result.error = done.text, done.error
        return self.result
