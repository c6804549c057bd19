"""Simulation events: the report of a `tandem simulate` run, kept in the run's own database."""

from __future__ import annotations

from typing import Any

from bot.store.events import EventData, event, fields


@event("simulation.reported")
class SimulationReported(EventData):
    """A simulation's report (on the system stream of the run's database), so the console
    shows it: `report` is report.json, `timings` timings.json (wall-clock, varies run to run)
    and `page` the report's HTML sections as report.html has them. Synthetic participants
    only: nothing in it is personal."""

    personal = fields()
    plain = fields("report", "timings", "page")

    report: dict[str, Any]
    timings: dict[str, Any] = {}
    page: str = ""
