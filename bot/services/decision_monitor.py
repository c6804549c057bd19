"""The decision points of a study as the console's Decisions page shows them: every decision
point and outcome recorded, summarised per decision (bot.analysis.monitor)."""

from __future__ import annotations

from bot.analysis.monitor import DecisionSummary, summarise
from bot.reporting.decision_rows import decision_rows
from bot.store.event_store import EventStore
from bot.store.event_types.decisions import DecisionMade, DecisionOutcome


def decision_summaries(store: EventStore) -> list[DecisionSummary]:
    """A summary of each decision's points so far: availability, choices against the logged
    probabilities (with the drift test), outcomes by option."""
    types = [DecisionMade.event_type, DecisionOutcome.event_type]
    return summarise(decision_rows(store.read_all(event_types=types)))
