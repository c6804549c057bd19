"""The `transition_state` tool: move the conversation to another state now or after a delay."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.store.event_types.conversation import StateTransitioned
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import EventData
from bot.timers.one_shot import scheduled, transition_scope, zone_of

STATES = ("intake", "feedback")
# The timers package's kind for a delayed transition: when due (and the conversation is still
# where it was), its handler records `transition.requested`.
TIMER_KIND = "transition"
SOURCE = "transition_state"  # marks the timers this tool owns, so it never cancels others'
MAX_DELAY_MINUTES = 7 * 24 * 60


class TransitionState(BaseModel):
    """Move the conversation to another state: "intake" (set up or change the habit plan) or
    "feedback" (ask how the habit went). With no delay (or 0) the move happens now; with
    delay_minutes (fractions allowed: 0.5 = 30 seconds) it happens later, unless the
    conversation has moved on by then. Each call replaces any transition you scheduled
    earlier; to cancel one, call with the current state and no delay."""

    model_config = ConfigDict(extra="forbid")

    target_state: Literal["intake", "feedback"] = Field(
        description="The state to move to: intake or feedback."
    )
    delay_minutes: float | None = Field(
        None,
        description=f"Minutes to wait, 0 to {MAX_DELAY_MINUTES} (null or 0: now).",
    )
    reason: str | None = Field(None, description="Why, in a few words (recorded, not sent).")

    @field_validator("target_state", mode="before")
    @classmethod
    def _known_state(cls, value: Any) -> Any:
        name = value.strip().lower() if isinstance(value, str) else value
        if name not in STATES:
            raise ValueError(
                f"target_state {value!r} is not a conversation state; use one of: "
                + ", ".join(STATES)
            )
        return name

    @field_validator("delay_minutes")
    @classmethod
    def _delay_in_range(cls, value: float | None) -> float | None:
        if value is None:
            return None
        if not math.isfinite(value) or not 0 <= value <= MAX_DELAY_MINUTES:
            raise ValueError(
                f"delay_minutes must be a number from 0 to {MAX_DELAY_MINUTES} (7 days), "
                f"got {value}"
            )
        return value


def run(args: TransitionState, ctx: ToolContext) -> ToolOutcome:
    """A `state.transitioned` now, or a `transition` timer; both replace a pending one."""
    current = ctx.participant.get("conversation_state")
    shown = current or "no state"
    cancelled = _cancel_pending(ctx)
    note = _cancel_note(ctx, cancelled)
    target = args.target_state
    if target == (current or "").lower():
        return ToolOutcome(True, f"Already in {target}; no change.{note}", cancelled)
    if not args.delay_minutes:
        moved = StateTransitioned(
            from_state=current, to_state=target, reason=args.reason, source="tool"
        )
        return ToolOutcome(
            True,
            f"Conversation state transitioned from {shown} to {target}.{note}",
            [moved, *cancelled],
        )
    due = ctx.now + timedelta(minutes=args.delay_minutes)
    timer = scheduled(
        ctx.participant,
        TIMER_KIND,
        due,
        scope=transition_scope(ctx.participant),
        payload={"to_state": target, "reason": args.reason, "source": SOURCE},
    )
    return ToolOutcome(
        True,
        f"Scheduled transition from {shown} to {target} in {args.delay_minutes:g} minutes, "
        f"at {_when(due, ctx)}. It will not happen if the conversation moves on first.{note}",
        [*cancelled, timer],
    )


def _pending(ctx: ToolContext) -> list[dict[str, Any]]:
    return [
        dict(t)
        for t in ctx.pending_timers
        if t.get("kind") == TIMER_KIND
        and t.get("status", "scheduled") == "scheduled"
        and (t.get("payload") or {}).get("source") == SOURCE
    ]


def _cancel_pending(ctx: ToolContext) -> list[EventData]:
    return [
        TimerCancelled(timer_id=str(t["timer_id"]), reason="replaced by a newer transition_state")
        for t in _pending(ctx)
    ]


def _cancel_note(ctx: ToolContext, cancelled: list[EventData]) -> str:
    if not cancelled:
        return ""
    parts = [
        f"to {(t.get('payload') or {}).get('to_state')} due at {_when(t['due_at'], ctx)}"
        for t in _pending(ctx)
    ]
    return " Cancelled the pending transition " + "; ".join(parts) + "."


def _when(instant: datetime, ctx: ToolContext) -> str:
    local = instant.astimezone(zone_of(ctx.participant))
    return f"{local:%Y-%m-%d %H:%M:%S %Z} ({instant.astimezone(UTC):%H:%M:%S} UTC)"


TOOL = ToolSpec(name="transition_state", arguments=TransitionState, run=run)
