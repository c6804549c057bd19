"""The habit prompt timer: generate today's prompt, send it with its questions, arm what follows.

An occurrence of a habit schedule (`daily` timer, payload purpose "habit_prompt", created by the
`scheduler` tool) produces, in one turn: the generator's `llm.called` events; the prompt
(message kind "prompt"); "Did you do it?"; on the first prompt of the participant's local day
the intensity check; the no-reply reminder about this prompt; the move to feedback (replacing
an older one); and `profile.saved` with total_prompts + 1 and the last prompt. Other daily
timers keep the built-in handler.

If the profile lacks what the generator needs, no generator is configured, or the LLM fails,
the schedule's fixed text goes out instead (PromptPipe's fallback) and an `alert.raised` (kind
"tool", supervisors not texted) tells the research team; the rest of the cycle runs as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from bot.channel import outbound
from bot.conversation import timer_turns
from bot.conversation.daily_cycle import counters, questions
from bot.core.localtime import local_date
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import EventData, new_id
from bot.timers import one_shot

log = logging.getLogger(__name__)

Complete = Callable[[str, str, str], tuple[str | None, list[EventData]]]
LLM_PURPOSE = "daily_habit_prompt"
REMINDER_TEXT = (
    "Friendly check-in: we haven't heard back after today's habit prompt. "
    "Reply with a quick update when you're ready!"
)
AUTO_FEEDBACK_REASON = "auto_feedback"  # marks this cycle's transition timers
FEEDBACK = "feedback"


@dataclass(frozen=True)
class HabitPrompts:
    """How a habit prompt is asked for, from the tools that own it (the composition root builds
    this from `tools/scheduler.py` and `tools/generate_habit_prompt.py`): the timer purpose
    that marks a habit schedule, its fixed text, the profile fields the generator needs, its
    system and user messages, and how its answer is cleaned."""

    purpose: str
    fallback_text: str
    missing_fields: Callable[[Mapping[str, Any]], list[str]]
    messages: Callable[[Mapping[str, Any]], tuple[str, str]]
    clean: Callable[[str], str]


@dataclass(frozen=True)
class Cycle:
    """The generator and the delays (None = off) a habit prompt is followed by."""

    complete: Complete | None
    habit: HabitPrompts
    reminder_after: timedelta | None = timedelta(hours=5)
    auto_feedback_after: timedelta | None = timedelta(minutes=5)


def register(
    complete: Complete | None,
    habit: HabitPrompts,
    *,
    reminder_hours: float = 5.0,
    auto_feedback_minutes: float = 5.0,
) -> timer_turns.Handler:
    """Handle `daily` timers: habit prompts here, every other daily timer as before."""
    cycle = Cycle(
        complete,
        habit,
        timedelta(hours=reminder_hours) if reminder_hours > 0 else None,
        timedelta(minutes=auto_feedback_minutes) if auto_feedback_minutes > 0 else None,
    )

    def daily(fired: timer_turns.FiredTimer) -> list[EventData]:
        if fired.payload.get("purpose") != habit.purpose:
            return timer_turns.daily(fired)
        return habit_prompt(fired, cycle)

    return timer_turns.register("daily", daily)


def habit_prompt(fired: timer_turns.FiredTimer, cycle: Cycle) -> list[EventData]:
    """Everything one habit prompt occurrence produces (see the module docstring)."""
    gone = timer_turns.schedule_gone(fired)
    if gone is not None:
        return gone
    person, now = fired.participant, fired.now
    text, events = _generate(fired, cycle)
    sent = outbound.to_participant(person, text, kind="prompt")
    about = sent[-1].outbox_id
    today = local_date(now, one_shot.zone_of(person))
    events += sent
    events += questions.ask(person, "did_you_do_it", questions.DID_YOU_DO_IT_OPTIONS, about, today)
    if not fired.memory.asked_on("intensity", today):
        options = questions.intensity_options(counters.intensity(person))
        events += questions.ask(person, "intensity", options, about, today)
    if cycle.reminder_after is not None:
        events.append(one_shot.reminder(person, about, cycle.reminder_after, REMINDER_TEXT, now))
    events += _auto_feedback(fired, cycle.auto_feedback_after)
    counted = {
        "total_prompts": counters.count(person, "total_prompts") + 1,
        "last_prompt": text,
        "last_prompt_at": now.isoformat(),
    }
    events.append(ProfileSaved(changes=counted, source="flow"))
    return events


def _generate(fired: timer_turns.FiredTimer, cycle: Cycle) -> tuple[str, list[EventData]]:
    """Today's prompt and the events of making it; the fixed text and an alert on failure."""
    profile = fired.participant.get("profile") or {}
    habit, complete = cycle.habit, cycle.complete
    missing = habit.missing_fields(profile)
    if missing:
        return _fallback(fired, habit, [], f"profile incomplete: missing {', '.join(missing)}")
    if complete is None:
        return _fallback(fired, habit, [], "no prompt generator is configured")
    system, user = habit.messages(profile)
    try:
        text, calls = complete(system, user, LLM_PURPOSE)
    except Exception as error:  # noqa: BLE001  # the LLM is an outside system: fall back
        return _fallback(fired, habit, [], f"the generator call failed ({type(error).__name__})")
    prompt = habit.clean(text or "")
    if not prompt:
        return _fallback(fired, habit, list(calls), "the generator returned no text")
    return prompt, list(calls)


def _fallback(
    fired: timer_turns.FiredTimer, habit: HabitPrompts, events: list[EventData], reason: str
) -> tuple[str, list[EventData]]:
    log.info("habit prompt timer %s: fixed text sent (%s)", fired.timer_id, reason)
    alert = AlertRaised(
        alert_id=new_id(),
        kind="tool",
        severity="warning",
        rule="habit_prompt_fallback",
        summary=f"The daily habit prompt (schedule {fired.payload.get('schedule_id')}) sent the "
        f"fixed text instead of a generated prompt: {reason}.",
        notify_supervisors=False,
    )
    return str(fired.payload.get("text") or habit.fallback_text), [*events, alert]


def _auto_feedback(fired: timer_turns.FiredTimer, after: timedelta | None) -> list[EventData]:
    """Cancel the older prompt's pending move to feedback; arm a new one unless the
    conversation is already in feedback (or the move is off)."""
    events: list[EventData] = [
        TimerCancelled(timer_id=t.timer_id, reason="replaced by a newer habit prompt")
        for t in fired.pending_timers().values()
        if t.kind == "transition" and t.payload.get("reason") == AUTO_FEEDBACK_REASON
    ]
    state = str(fired.participant.get("conversation_state") or "").lower()
    if after is not None and state != FEEDBACK:
        events.append(
            one_shot.transition(
                fired.participant, FEEDBACK, after, fired.now, reason=AUTO_FEEDBACK_REASON
            )
        )
    return events
