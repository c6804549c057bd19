"""Review items (pure): what a learned-line score in the review band raises, and what its
escalation to a crisis alert produces, by a person or by the durable timer.

A review item is an `alert.raised` of kind and severity `review`, quoting the message like a
crisis alert (sealed, erased with it). It texts nobody and the participant is sent nothing for
it: they get the normal reply. A person clears it in the console's review queue as not a crisis
(`review.dismissed`) or escalates it (`review.escalated`); one nobody cleared within
REVIEW_ESCALATE_MINUTES is escalated by its `review_escalation` timer, a durable timer like an
alert's escalation, so a restart does not lose it. Escalation raises a crisis alert quoting the
same message and texts the supervisors exactly as a crisis alert raised by a turn does (the
texting limit, the alert's own escalation timer); it still sends the participant nothing: a
supervisor can write to them from the alert's page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.conversation.escalation import escalation_timers
from bot.conversation.memory import Memory
from bot.conversation.supervisors import alert_texts
from bot.conversation.timer_turns import FiredTimer, Handler
from bot.store.event_types.alerts import AlertRaised, ReviewEscalated
from bot.store.event_types.safety import SafetyScored
from bot.store.events import EventData, new_id
from bot.timers import one_shot

KIND = "review_escalation"
TIMER_ACTOR = "system:review_escalation"
RULE = "review"


@dataclass(frozen=True)
class Routing:
    """Who hears about a crisis alert: the participant's supervisors (SUPERVISOR_PHONES and
    their intervention's), ESCALATION_PHONES, the texting limit's window, when an unacknowledged
    alert escalates, and the base URL the text names."""

    supervisors_of: Callable[[Mapping[str, Any]], Sequence[str]]
    escalation_phones: Sequence[str]
    window: timedelta
    alert_escalate_after: timedelta
    base_url: str | None


def review_events(
    participant: Mapping[str, Any], scored: SafetyScored, escalate_after: timedelta, now: datetime
) -> list[EventData]:
    """The review item for a message scored in the review band, and its escalation timer. The
    turn adds the message as the item's `quote` (bot.conversation.flow)."""
    summary = (
        f"The learned line scored a message {scored.score:.2f} (review band "
        f"{scored.review_threshold:g} to {scored.alert_threshold:g}; most likely "
        f"{scored.category})."
    )
    if scored.unconfirmed_rule is not None:
        summary = (
            f"The phrase screen matched a message ({scored.unconfirmed_rule}), but the learned "
            f"line scored it {scored.score:.2f}, under its confirm threshold "
            f"{scored.confirm_threshold:g} (most likely {scored.category})."
        )
    item = AlertRaised(
        alert_id=new_id(),
        kind="review",
        severity="review",
        rule=scored.unconfirmed_rule or scored.line,
        summary=summary + " The participant got the normal reply and nothing else.",
    )
    timer = one_shot.scheduled(
        participant, KIND, now + escalate_after, scope=RULE, payload={"alert_id": item.alert_id}
    )
    return [item, timer]


def escalated(
    review: AlertRaised,
    *,
    by: str,
    via: Literal["api", "console", "timer"],
    minutes: float | None = None,
) -> tuple[ReviewEscalated, AlertRaised]:
    """The escalation of a review item and the crisis alert it raises, quoting its message."""
    why = (
        f"nobody reviewed it within {minutes:g} minutes"
        if minutes is not None
        else f"escalated by {by}"
    )
    crisis = AlertRaised(
        alert_id=new_id(),
        kind="crisis",
        severity="critical",
        rule=RULE,
        notify_supervisors=True,
        quote=review.quote,
        summary=(
            f"A review item became a crisis alert ({why}). The participant was not sent the "
            "safety message; write to them from the alert's page."
        ),
    )
    record = ReviewEscalated(
        alert_id=review.alert_id,
        by=by,
        via=via,
        crisis_alert_id=crisis.alert_id,
        minutes=minutes,
    )
    return record, crisis


def supervisor_events(
    participant: Mapping[str, Any],
    alerts: Sequence[AlertRaised],
    routing: Routing,
    memory: Memory,
    now: datetime,
) -> list[EventData]:
    """The texts to supervisors that alerts asking for them call for (within the texting
    limit), and each one's escalation timer when anyone could hear of it."""
    wanted = [a for a in alerts if a.notify_supervisors]
    if not wanted:
        return []
    supervisors = routing.supervisors_of(participant)
    events: list[EventData] = list(
        alert_texts(
            wanted,
            str(participant["participant_id"]),
            supervisors,
            (),
            now,
            memory=memory,
            window=routing.window,
            base_url=routing.base_url,
        )
    )
    if supervisors or routing.escalation_phones:
        events += escalation_timers(participant, wanted, routing.alert_escalate_after, now)
    return events


ReadReview = Callable[[str], tuple[Mapping[str, Any], AlertRaised] | None]


def review_escalation_handler(read_review: ReadReview, minutes: float) -> Handler:
    """The handler of fired `review_escalation` timers, wired by the composition root:
    `read_review(alert_id)` gives the item's alerts row and its opened `alert.raised`. The
    flow's turn adds the supervisor texts of the crisis alert it returns."""

    def escalate(fired: FiredTimer) -> list[EventData]:
        found = read_review(str(fired.payload.get("alert_id") or ""))
        if found is None:
            return [fired.skipped("no such review item")]
        row, raised = found
        if row["status"] == "resolved":
            return [fired.skipped("reviewed")]
        record, crisis = escalated(raised, by=TIMER_ACTOR, via="timer", minutes=minutes)
        return [record, crisis]

    return escalate
