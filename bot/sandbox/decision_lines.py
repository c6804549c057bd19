"""What `tandem chat` shows of decision points: a line for each as it happens (beside the
other remarks), and `/decisions`, the table of the participant's points so far with their
outcomes and the points still to come."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.events import Event

REMARKED = ("decision.made", "decision.outcome", "decision.failed")


def _local(instant: Any, zone: ZoneInfo) -> str:
    return f"{instant.astimezone(zone):%a %d %b %H:%M}"


def remark(event: Event, zone: ZoneInfo) -> str | None:
    """The one-line account of a decision event (None for any other event)."""
    d = event.data
    if isinstance(d, DecisionMade):
        head = f"{d.decision} #{d.index} at {_local(d.scheduled_for, zone)}"
        if not d.available:
            return f"{head}: unavailable ({d.unavailable_reason})"
        p = d.probabilities.get(d.option or "", 0.0)
        return f"{head}: {d.option} (p {p:g}, u {d.u:.3f})"
    if isinstance(d, DecisionOutcome):
        value = "" if d.status == "missing" else f" {d.value!r}"
        return f"{d.decision} #{d.index}: outcome {d.status}{value}"
    if isinstance(d, DecisionFailed):
        return f"{d.decision} #{d.index}: failed ({d.reason})"
    return None


def decisions_view(
    events: Sequence[Event], pending: Sequence[dict[str, Any]], zone: ZoneInfo
) -> str:
    """Every decision point of the participant so far, one line each with its outcome, and
    the decision timers pending."""
    outcomes = {
        (e.data.decision, e.data.index): e.data
        for e in events
        if isinstance(e.data, DecisionOutcome)
    }
    lines = []
    for ev in events:
        if not isinstance(ev.data, DecisionMade | DecisionFailed):
            continue
        line = remark(ev, zone) or ""
        found = outcomes.get((ev.data.decision, ev.data.index))
        if found is not None:
            value = "" if found.status == "missing" else f" {found.value!r}"
            line += f"  → outcome {found.status}{value}"
        elif isinstance(ev.data, DecisionMade) and ev.data.available:
            line += "  → outcome pending"
        lines.append(line)
    made = len(lines)
    available = sum(1 for e in events if isinstance(e.data, DecisionMade) and e.data.available)
    lines.append(f"({made} decision point(s), {available} available)")
    for timer in pending:
        if timer.get("kind") == "decision":
            payload = timer.get("payload") or {}
            name, index = payload.get("decision"), payload.get("index")
            lines.append(f"next: {name} #{index} at {_local(timer['due_at'], zone)}")
    return "\n".join(lines)
