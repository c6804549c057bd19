"""Alerts for supervisors and operators: crisis language, judgements, stuck work, lost sends;
and review items (kind and severity `review`): a message the learned line scored in its review
band, for a person to clear as not a crisis or escalate to a crisis alert."""

from __future__ import annotations

from typing import Literal

from bot.store.events import EventData, event, fields


@event("alert.raised")
class AlertRaised(EventData):
    personal = fields("summary", "quote")
    plain = fields("rule")

    alert_id: str
    kind: Literal[
        "crisis",
        "judgement",
        "tool",
        "work_parked",
        "send_unknown",
        "condition",
        "template",
        "turn_failed",
        "degraded",
        "broadcast",
        "review",
    ]
    summary: str
    severity: Literal["info", "warning", "critical", "review"] = "warning"
    rule: str | None = None
    notify_supervisors: bool = False
    # The participant's message that raised it, sealed like the message and erased with it
    # (shown to staff on the alert, never put in a text to a supervisor).
    quote: str | None = None


@event("alert.acknowledged")
class AlertAcknowledged(EventData):
    """Someone took the alert on. `by` names them as the rest of Tandem's actors are named
    (`staff:<email>`, `api:<token fingerprint>`, `supervisor:<phone>`); `via` how they said so."""

    personal = fields()
    plain = fields("by")

    alert_id: str
    by: str
    via: Literal["sms", "api", "console"]


@event("alert.resolved")
class AlertResolved(EventData):
    """The alert is closed, with a note of what was done about it."""

    personal = fields("note")
    plain = fields("by")

    alert_id: str
    by: str
    via: Literal["sms", "api", "console"]
    note: str


@event("review.dismissed")
class ReviewDismissed(EventData):
    """A person read a review item and judged it not a crisis; the item is closed."""

    personal = fields()
    plain = fields("by")

    alert_id: str
    by: str
    via: Literal["api", "console"]


@event("review.escalated")
class ReviewEscalated(EventData):
    """A review item became a crisis alert (`crisis_alert_id`, raised in the same transaction):
    a person escalated it (`via` console or api), or nobody cleared it within
    REVIEW_ESCALATE_MINUTES (`via` timer, `by` "system:review_escalation", `minutes` set)."""

    personal = fields()
    plain = fields("by")

    alert_id: str
    by: str
    via: Literal["api", "console", "timer"]
    crisis_alert_id: str
    minutes: float | None = None
