"""Intervention events: steps entered and taken, judgements, notes, replies and measurements.

Every decision the step module makes is one of these, so a transcript can be replayed and
explained: why the participant moved (`step.entered` carries the condition and the values it
read), what each judgement returned, what every completion slot said.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from bot.store.events import EventData, event, fields

Via = Literal[
    "root", "transition", "budget", "interrupt", "return", "session", "operator", "broadcast"
]
JudgementWhen = Literal["turn", "enter", "exit", "interrupt"]


@event("step.entered")
class StepEntered(EventData):
    """The participant moved to `step` of `intervention` (from `from_step`, None at the root).

    `via` says how: the root at the start, a `transition` whose `condition` held (None: it had
    none), a `budget` (max_turns/max_minutes ran out), an `interrupt`, a `return` from a
    digression or interrupt, a `session` start after a long silence, or a `broadcast` that
    starts the step. `values` are the data
    the condition read. `stack` is where the participant returns to afterwards, innermost last
    ({step, turns, entered_at}); `turns`/`entered_at` are the step's counters after entering
    (0 and now, or restored on a return).
    """

    personal = fields("values")
    plain = fields("condition", "from_step", "intervention", "revision", "stack", "step")

    intervention: str
    step: str
    from_step: str | None = None
    via: Via = "transition"
    condition: str | None = None
    values: dict[str, Any] = {}
    stack: list[dict[str, Any]] = []
    turns: int = 0
    entered_at: datetime | None = None
    revision: str = ""


@event("step.turn_taken")
class StepTurnTaken(EventData):
    """The step answers a message from the participant: turn `turn` of this visit."""

    personal = fields()
    plain = fields("step")

    step: str
    turn: int


@event("step.replied")
class StepReplied(EventData):
    """What the step produced: every completion slot (`slots`), the one sent (`sent`), or the
    index of the fixed `say` text sent."""

    personal = fields("slots", "sent")
    plain = fields("revision", "step")

    step: str
    slots: dict[str, Any] = {}
    sent: str | None = None
    say: int | None = None
    revision: str = ""


@event("judgement.recorded")
class JudgementRecorded(EventData):
    """A judgement's typed result, available as `judgements.<judgement>.<field>`."""

    personal = fields("result")
    plain = fields("judgement", "step")

    judgement: str
    result: dict[str, Any]
    step: str | None = None
    when: JudgementWhen = "turn"


@event("judgement.failed")
class JudgementFailed(EventData):
    """A judgement produced no valid result; conditions on it keep their earlier value."""

    personal = fields("reason")
    plain = fields("judgement", "step")

    judgement: str
    reason: str
    step: str | None = None


@event("note.taken")
class NoteTaken(EventData):
    """A note's completions, each available as `notes.<NAME>`."""

    personal = fields("values")
    plain = fields("note", "step")

    note: str
    values: dict[str, Any]
    step: str | None = None


@event("note.failed")
class NoteFailed(EventData):
    """A note could not be taken (the LLM failed, or its template did); nothing was stored."""

    personal = fields("reason")
    plain = fields("note", "step")

    note: str
    reason: str
    step: str | None = None


@event("condition.failed")
class ConditionFailed(EventData):
    """A condition could not be evaluated at run time (a value the types allowed was missing, an
    item past the end of a list): never taken as false. The turn stopped, an alert was raised
    and the participant was sent the intervention's fallback. `file`/`line` say where it is."""

    personal = fields("error")
    plain = fields("condition", "file", "step")

    condition: str
    error: str
    file: str
    line: int | None = None
    step: str | None = None


@event("template.failed")
class TemplateFailed(EventData):
    """A template could not be rendered at run time (a computed include, a value of an odd
    shape): the turn stopped, an alert was raised and the fallback was sent. `template` is the
    template's key (e.g. "step:welcome:say:0", "judgement:risk"); `file`/`line` say where."""

    personal = fields("error")
    plain = fields("file", "step", "template")

    template: str
    error: str
    file: str
    line: int | None = None
    step: str | None = None


@event("measurement.recorded")
class MeasurementRecorded(EventData):
    """The answer to question `measurement`: `value` as validated, and how it was read
    (`parsed` without the LLM, `llm` by extraction, `text` taken as written)."""

    personal = fields("value")
    plain = fields("measurement")

    measurement: str
    value: Any
    method: Literal["parsed", "llm", "text"] = "parsed"
    outbox_id: str | None = None


@event("measurement.rejected")
class MeasurementRejected(EventData):
    """A reply that did not answer the question; `final` means no more clarifications."""

    personal = fields("reason")
    plain = fields("measurement")

    measurement: str
    reason: str
    attempt: int = 1
    final: bool = False
