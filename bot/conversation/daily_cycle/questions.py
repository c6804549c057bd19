"""The questions after a habit prompt: their texts and options, asking, and which are open.

A question is a `message.queued` of kind "question" whose body lists numbered options, plus a
`question.asked` recording its kind, options and the prompt it follows. Questions belong to
their prompt: a newer habit prompt closes the older prompt's questions unanswered, and an
answer (`habit.reported`, `habit.intensity_answered`) closes its question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from bot.channel import outbound
from bot.conversation.daily_cycle.answers import DECREASE, DONE, INCREASE, KEEP, LEVELS, NEXT_TIME
from bot.store import delivery
from bot.store.event_types.habits import (
    HabitReported,
    IntensityAnswered,
    QuestionAsked,
    QuestionKind,
)
from bot.store.events import Event, EventData, new_id

TEXTS: dict[QuestionKind, str] = {
    "did_you_do_it": "Did you do it?",
    "intensity": "How's the intensity?",
}
DID_YOU_DO_IT_OPTIONS = (DONE, NEXT_TIME)
# What each option can be answered with as a word, whichever options were shown.
VOCABULARY: dict[QuestionKind, tuple[str, ...]] = {
    "did_you_do_it": DID_YOU_DO_IT_OPTIONS,
    "intensity": (DECREASE, KEEP, INCREASE, *LEVELS),
}


def intensity_options(level: str) -> tuple[str, ...]:
    """PromptPipe's options by level: no "Decrease" at low, no "Increase" at high."""
    if level == "low":
        return (KEEP, INCREASE)
    if level == "high":
        return (DECREASE, KEEP)
    return (DECREASE, KEEP, INCREASE)


def body(kind: QuestionKind, options: Sequence[str]) -> str:
    """The question and its options numbered from 1, one per line (SMS and WhatsApp alike)."""
    return "\n".join([TEXTS[kind], *(f"{n}. {o}" for n, o in enumerate(options, start=1))])


def ask(
    participant: Mapping[str, Any],
    kind: QuestionKind,
    options: Sequence[str],
    prompt_outbox_id: str,
    day: date,
) -> list[EventData]:
    """Queue the question and record it as asked after the prompt `prompt_outbox_id`."""
    queued = outbound.to_participant(participant, body(kind, options), kind="question")
    asked = QuestionAsked(
        question_id=new_id(),
        kind=kind,
        options=list(options),
        outbox_id=queued[-1].outbox_id,
        prompt_outbox_id=prompt_outbox_id,
        local_date=day,
    )
    return [*queued, asked]


def asked_on(events: Sequence[Event], kind: QuestionKind, day: date) -> bool:
    """Whether a question of `kind` was asked on the participant-local date `day`."""
    return any(
        isinstance(e.data, QuestionAsked) and e.data.kind == kind and e.data.local_date == day
        for e in events
    )


def open_questions(events: Sequence[Event], before: int | None = None) -> list[QuestionAsked]:
    """The unanswered questions of the latest prompt that had reached the participant, in the
    order asked. With `before` (a stream version), questions recorded at or after it are not
    considered, and a question counts only if it was sent before it: a message that waited in
    the queue while a prompt went out, or arrived while the question was held (WhatsApp's
    window closed) or undelivered, does not answer it."""
    latest: list[QuestionAsked] = []
    answered: set[str] = set()
    for ev in events:
        data = ev.data
        if isinstance(data, QuestionAsked) and (before is None or ev.stream_version < before):
            if latest and latest[-1].prompt_outbox_id != data.prompt_outbox_id:
                latest = []
            latest.append(data)
        elif isinstance(data, HabitReported | IntensityAnswered):
            answered.add(data.question_id)
    return [
        q
        for q in latest
        if q.question_id not in answered and delivery.sent_before(events, q.outbox_id, before)
    ]
