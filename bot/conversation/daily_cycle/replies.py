"""Answers to the habit questions (pure): the flow calls `on_reply` for every inbound message.

The reply is matched against the open questions of the latest habit prompt in the order they
were asked, and answers the first one that understands it: a number answers the oldest open
question (answers come in the order the questions were asked), a word answers the question it
belongs to ("Increase" answers the intensity check even while "Did you do it?" is open). The
events it returns are recorded with the turn; the message still goes on to the module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.conversation.daily_cycle import answers, counters, questions
from bot.conversation.memory import remembered
from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.habits import HabitReported, IntensityAnswered, QuestionAsked
from bot.store.events import Event, EventData


def on_reply(
    participant: Mapping[str, Any],
    text: str,
    history: Sequence[Event],
    now: datetime,
    inbound: Event | None = None,
) -> list[EventData]:
    """The answer the reply gives to an open habit question, or nothing.

    "Did you do it?": `habit.reported`, and for "Done" `profile.saved` success_count + 1.
    Intensity: `habit.intensity_answered`, and `profile.saved` intensity when it changed.
    `inbound` (the `message.received` being handled) keeps questions asked after the message
    arrived out of it. `now` is accepted for answer windows; none is enforced yet.
    """
    before = inbound.stream_version if inbound is not None else None
    for question in remembered(participant, history).open_questions(before):
        answer = answers.choose(text, question.options, questions.VOCABULARY[question.kind])
        if answer is None:
            continue
        if question.kind == "did_you_do_it":
            return _reported(participant, question, answer)
        return _intensity(participant, question, answer)
    return []


def _reported(
    participant: Mapping[str, Any], question: QuestionAsked, answer: str
) -> list[EventData]:
    done = answer == answers.DONE
    events: list[EventData] = [
        HabitReported(question_id=question.question_id, done=done, answer=answer)
    ]
    if done:
        count = counters.count(participant, "success_count") + 1
        events.append(ProfileSaved(changes={"success_count": count}, source="flow"))
    return events


def _intensity(
    participant: Mapping[str, Any], question: QuestionAsked, answer: str
) -> list[EventData]:
    previous = counters.intensity(participant)
    level = answers.moved(previous, answer)
    events: list[EventData] = [
        IntensityAnswered(
            question_id=question.question_id,
            answer=answer,
            previous=previous,
            level=level,
        )
    ]
    if level != previous:
        events.append(ProfileSaved(changes={"intensity": level}, source="flow"))
    return events
