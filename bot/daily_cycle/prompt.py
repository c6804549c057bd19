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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from bot import outbound
from bot.daily_cycle import counters, questions
from bot.event_types.alerts import AlertRaised
from bot.event_types.conversation import ProfileSaved
from bot.event_types.timers import TimerCancelled
from bot.events import EventData, new_id
from bot.localtime import local_date
from bot.timers import handling, history, one_shot
from tools.generate_habit_prompt import GenerateHabitPrompt, missing_fields, prompts, unquote
from tools.scheduler import FALLBACK_TEXT
from tools.scheduler import PURPOSE as HABIT_PURPOSE

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
class Cycle:
    """The generator and the delays (None = off) a habit prompt is followed by."""

    complete: Complete | None
    reminder_after: timedelta | None = timedelta(hours=5)
    auto_feedback_after: timedelta | None = timedelta(minutes=5)


def register(
    complete: Complete | None,
    *,
    reminder_hours: float = 5.0,
    auto_feedback_minutes: float = 5.0,
) -> handling.Handler:
    """Handle `daily` timers: habit prompts here, every other daily timer as before."""
    cycle = Cycle(
        complete,
        timedelta(hours=reminder_hours) if reminder_hours > 0 else None,
        timedelta(minutes=auto_feedback_minutes) if auto_feedback_minutes > 0 else None,
    )

    def daily(fired: handling.FiredTimer) -> list[EventData]:
        if fired.payload.get("purpose") != HABIT_PURPOSE:
            return handling.daily(fired)
        return habit_prompt(fired, cycle)

    return handling.register("daily", daily)


def habit_prompt(fired: handling.FiredTimer, cycle: Cycle) -> list[EventData]:
    """Everything one habit prompt occurrence produces (see the module docstring)."""
    gone = handling.schedule_gone(fired)
    if gone is not None:
        return gone
    person, now = fired.participant, fired.now
    text, events = _generate(fired, cycle.complete)
    sent = outbound.to_participant(person, text, kind="prompt")
    about = sent[-1].outbox_id
    today = local_date(now, one_shot.zone_of(person))
    events += sent
    events += questions.ask(person, "did_you_do_it", questions.DID_YOU_DO_IT_OPTIONS, about, today)
    if not questions.asked_on(fired.events, "intensity", today):
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


def _generate(fired: handling.FiredTimer, complete: Complete | None) -> tuple[str, list[EventData]]:
    """Today's prompt and the events of making it; the fixed text and an alert on failure."""
    profile = fired.participant.get("profile") or {}
    missing = missing_fields(profile)
    if missing:
        return _fallback(fired, [], f"profile incomplete: missing {', '.join(missing)}")
    if complete is None:
        return _fallback(fired, [], "no prompt generator is configured")
    system, user = prompts(profile, GenerateHabitPrompt(delivery_mode="scheduled"))
    try:
        text, calls = complete(system, user, LLM_PURPOSE)
    except Exception as error:  # noqa: BLE001  # the LLM is an outside system: fall back
        return _fallback(fired, [], f"the generator call failed ({type(error).__name__})")
    prompt = unquote(text or "")
    if not prompt:
        return _fallback(fired, list(calls), "the generator returned no text")
    return prompt, list(calls)


def _fallback(
    fired: handling.FiredTimer, events: list[EventData], reason: str
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
    return str(fired.payload.get("text") or FALLBACK_TEXT), [*events, alert]


def _auto_feedback(fired: handling.FiredTimer, after: timedelta | None) -> list[EventData]:
    """Cancel the older prompt's pending move to feedback; arm a new one unless the
    conversation is already in feedback (or the move is off)."""
    events: list[EventData] = [
        TimerCancelled(timer_id=t.timer_id, reason="replaced by a newer habit prompt")
        for t in history.pending_timers(fired.events).values()
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
