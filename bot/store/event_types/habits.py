"""Daily habit cycle events: a question asked after a habit prompt, and its answers."""

from __future__ import annotations

from datetime import date
from typing import Literal

from bot.store.events import EventData, event, fields

QuestionKind = Literal["did_you_do_it", "intensity"]
Intensity = Literal["low", "normal", "high"]


@event("question.asked")
class QuestionAsked(EventData):
    """A numbered question went out (`outbox_id`, its last part) after the habit prompt
    `prompt_outbox_id`; `options` are shown numbered from 1, in this order. `local_date` is the
    participant's local date when it was asked (the intensity check is once per local day)."""

    personal = fields()
    plain = fields("options")

    question_id: str
    kind: QuestionKind
    options: list[str]
    outbox_id: str
    prompt_outbox_id: str
    local_date: date


@event("habit.reported")
class HabitReported(EventData):
    """The participant answered "Did you do it?": `answer` is the option they chose."""

    personal = fields("answer")

    question_id: str
    done: bool
    answer: str


@event("habit.intensity_answered")
class IntensityAnswered(EventData):
    """The participant answered the intensity check: `answer` is the option they chose, the
    level moved from `previous` to `level` (the same when kept, or already at the limit)."""

    personal = fields("answer")

    question_id: str
    answer: str
    previous: Intensity
    level: Intensity
