"""Recording a simulation's report in the run's own database (`simulation.reported` on the
system stream), so that the console opened on that database shows it (/console/simulation)."""

from __future__ import annotations

from typing import Any

from bot.store.event_store import EventStore
from bot.store.event_types.simulations import SimulationReported
from bot.store.events import SYSTEM_STREAM, NewEvent


def record(
    store: EventStore, report: dict[str, Any], timings: dict[str, Any], page: str, actor: str
) -> SimulationReported:
    """Append the report (report.json), its timings (timings.json) and its HTML sections."""
    reported = SimulationReported(report=report, timings=timings, page=page)
    store.append(SYSTEM_STREAM, [NewEvent(reported, meta={"actor": actor})])
    return reported
