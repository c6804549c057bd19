"""A failed turn is retried, not promised (pure): the durable retry timer, what it does when it
fires, and what follows the last failed retry.

When a turn fails because the LLM call failed (or said nothing), the flow sends the module's
fallback, which promises nothing, and sets a `turn_retry` timer TURN_RETRY_MINUTES[0] later
(default 2, 10, 30 minutes: one timer per attempt, each set when the previous one fails). A
greeting that fails sends nothing while a retry is pending (a fallback would read as a reply to
nothing); only after the last retry fails is the module's `greeting_fallback`, if it has one,
sent. When a retry succeeds, its answer is sent once, as the reply to the message it answers
(the transcript the LLM sees stops at that message: the fallback is not in it).

The participant writing again supersedes a pending retry: the timer kind is cancelled by a
reply (bot.timers.kinds), and the new message's turn answers with the whole conversation, so
an old question is never answered twice or out of order. After the last retry fails, an
operator alert (`turn_failed`, not texted to supervisors) is raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from bot.conversation.llm import NO_LLM
from bot.conversation.memory import Memory
from bot.conversation.module import ModuleReply, Trigger
from bot.conversation.timer_turns import FiredTimer, handles
from bot.conversation.tool_loop import EMPTY_REPLY
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.conversation import TurnFailed
from bot.store.event_types.messages import MessageReceived
from bot.store.event_types.retries import TurnRetryDue
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import Event, EventData, new_id
from bot.timers import one_shot

KIND = "turn_retry"
LLM_FAILED = "LLM call failed"


def retryable(failure: str) -> bool:
    """Whether trying again later can help: the LLM failed or said nothing (not a broken
    prompt or intervention, and not a server with no LLM configured)."""
    if failure == f"{LLM_FAILED}: {NO_LLM}":
        return False
    return failure.startswith(LLM_FAILED) or failure == EMPTY_REPLY


def after_failure(
    participant: Mapping[str, Any],
    failure: str,
    *,
    trigger: Trigger,
    current: Event | None,
    attempt: int,
    delays: Sequence[float],
    now: datetime,
) -> list[EventData]:
    """The next retry's timer while attempts are left; after a failed retry with none left
    (or one that can no longer help), the operator alert. Nothing when retries are off."""
    if retryable(failure) and attempt < len(delays):
        due = now + timedelta(minutes=delays[attempt])
        payload = {
            "attempt": attempt + 1,
            "trigger": trigger,
            "message_event_id": current.event_id if current is not None else None,
        }
        return [one_shot.scheduled(participant, KIND, due, scope=trigger, payload=payload)]
    if attempt == 0:
        return []
    what = "the reply to a message" if trigger == "inbound" else "the greeting"
    return [
        AlertRaised(
            alert_id=new_id(),
            kind="turn_failed",
            severity="warning",
            summary=(
                f"The LLM failed {what} {attempt + 1} times (the last: {failure[:200]}); "
                "no retry is left. Answer the participant by hand or check the LLM."
            ),
        )
    ]


@handles(KIND)
def due(fired: FiredTimer) -> list[EventData]:
    """`turn.retry_due` (the flow runs the turn again), unless the participant wrote since."""
    trigger = fired.payload.get("trigger")
    message_id = fired.payload.get("message_event_id")
    if trigger not in ("inbound", "enrolled"):
        return [fired.skipped(f"unknown trigger {trigger!r}")]
    failed_at = _version_of(fired.events, message_id) if trigger == "inbound" else -1
    if failed_at is None:
        return [fired.skipped("no such message")]
    if any(
        isinstance(e.data, MessageReceived) and e.stream_version > failed_at for e in fired.events
    ):
        return [fired.skipped("superseded: the participant wrote again")]
    return [
        TurnRetryDue(
            timer_id=fired.timer_id,
            attempt=int(fired.payload.get("attempt") or 1),
            trigger=trigger,
            message_event_id=message_id,
        )
    ]


def failed_turn(
    participant: Mapping[str, Any],
    failure: str,
    reply: ModuleReply,
    trigger: Trigger,
    current: Event | None,
    retry: TurnRetryDue | None,
    delays: Sequence[float],
    now: datetime,
) -> tuple[list[EventData], str]:
    """A failed turn's events (`turn.failed`, then the next retry or the operator alert) and
    the text to send now: the fallback when a reply first fails (nothing after a failed retry,
    which sent it already); for a greeting, nothing while a retry is pending, else the
    module's greeting fallback if it has one."""
    after = after_failure(
        participant,
        failure,
        trigger=trigger,
        current=current,
        attempt=retry.attempt if retry else 0,
        delays=delays,
        now=now,
    )
    retrying = any(isinstance(e, TimerScheduled) for e in after)
    if trigger == "enrolled":
        sent = None if retrying else reply.greeting
    else:
        sent = None if retry else reply.fallback
    return [TurnFailed(reason=failure, fallback=sent), *after], sent or ""


def retried_message(history: Sequence[Event], due: TurnRetryDue) -> Event | None:
    """The message the retried turn answers (None for a greeting)."""
    return next((e for e in history if e.event_id == due.message_event_id), None)


def before(history: Sequence[Event], current: Event | None) -> list[Event]:
    """The stream as it was when `current` arrived: the retried turn's transcript leaves out
    the fallback sent after it."""
    if current is None:
        return list(history)
    return [e for e in history if e.stream_version <= current.stream_version]


def flagged_after(memory: Memory, current: Event | None) -> bool:
    """Whether a crisis alert followed the message (the safety reply was sent and the module
    still answered, SAFETY_CONTINUE_TURN=true): the retried turn is told, as the first was. The
    conversation memory knows (bot.conversation.memory): the turn's window holds only messages."""
    if current is None:
        return False
    return memory.crisis_after(current.stream_version)


def _version_of(events: Sequence[Event], event_id: object) -> int | None:
    return next((e.stream_version for e in events if e.event_id == event_id), None)
