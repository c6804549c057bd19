"""The `alert_supervisor` tool: ask for a human by raising an alert that texts the supervisors,
at most once per window per participant so that nobody is flooded."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.conversation.memory import remembered
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import new_id

MAX_SUMMARY = 300
DEFAULT_WINDOW_MINUTES = 30


class AlertSupervisor(BaseModel):
    """Alert the study's supervisors, by text message, that this participant needs a human:
    they ask for a person, seem distressed or at risk, report a problem with the study, or
    something is beyond what you should handle. Write a short factual summary for the
    supervisor (no diagnosis). Supervisors are texted at most once per 30 minutes (by default)
    about the same participant; tell the participant that the team will be in touch only if
    the result says the alert was raised."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(
        description=f"What happened and why a human is needed (max {MAX_SUMMARY})."
    )
    severity: Literal["info", "warning", "critical"] | None = Field(
        None, description="critical: possible risk to the participant; default warning."
    )

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError("summary must not be empty: say what happened and why")
        if len(text) > MAX_SUMMARY:
            raise ValueError(
                f"summary is {len(text)} characters; keep it to {MAX_SUMMARY} (it is sent as "
                "a text message)"
            )
        return text


def run(args: AlertSupervisor, ctx: ToolContext) -> ToolOutcome:
    """An `alert.raised` (notify_supervisors) unless one was raised within the window."""
    window = _window(ctx)
    if window is None:
        return ToolOutcome(
            False,
            "Alert not sent: the study option alert_window_minutes must be a number of minutes "
            f"from 0 to 10080, got {ctx.options.get('alert_window_minutes')!r}",
        )
    last = remembered(ctx.participant, ctx.history).last_alerted()
    if last is not None and ctx.now - last < window:
        ago = (ctx.now - last) / timedelta(minutes=1)
        return ToolOutcome(
            False,
            "Alert not sent: the supervisors already got an alert about this participant at "
            f"{last.astimezone(UTC):%H:%M} UTC ({ago:.0f} minutes ago) and are texted at most "
            f"once per {window / timedelta(minutes=1):g} minutes; the next alert can go out "
            f"from {(last + window).astimezone(UTC):%H:%M} UTC.",
        )
    alert = AlertRaised(
        alert_id=new_id(),
        kind="tool",
        summary=args.summary,
        severity=args.severity or "warning",
        rule="alert_supervisor",
        notify_supervisors=True,
    )
    return ToolOutcome(True, "Alert raised: the supervisors will be texted.", [alert])


def _window(ctx: ToolContext) -> timedelta | None:
    """The rate-limit window (option alert_window_minutes, default 30); None if invalid."""
    minutes = ctx.options.get("alert_window_minutes", DEFAULT_WINDOW_MINUTES)
    if (
        isinstance(minutes, bool)
        or not isinstance(minutes, int | float)
        or not 0 <= minutes <= 10080
    ):
        return None
    return timedelta(minutes=minutes)


TOOL = ToolSpec(name="alert_supervisor", arguments=AlertSupervisor, run=run)
