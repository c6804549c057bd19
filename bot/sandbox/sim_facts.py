"""What a simulation report is read from: the run's events by participant, with each one's
persona and timezone, the intervention and its quiet hours (bot.sandbox.sim_report's sections
take it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.store.events import Event
from bot.timers.quiet_hours import for_participant

if TYPE_CHECKING:
    from bot.sandbox.sim_prices import PriceTable
    from bot.sandbox.simulation import Run


class Facts:
    """The run's events by participant, with the persona and timezone of each."""

    prices: PriceTable | None = None  # `--prices`: what the LLM section costs with

    def __init__(self, run: Run) -> None:
        cohort = run.cohort
        self.run = run
        self.events = [cohort.events(n) for n in range(len(run.names))]
        self.zones = [ZoneInfo(run.personas[name].timezone) for name in run.names]
        self.intervention = cohort.intervention
        self.root, self.slug = cohort.root, cohort.slug
        quiet = self.intervention.quiet_hours() or parse_quiet_hours(cohort.settings.quiet_hours)
        self.quiet: QuietHours | None = quiet
        # each participant's own (their intervention's, in a study with several)
        rules = cohort.quiet
        self.quiets = [
            for_participant({"intervention": ran(e)}, rules.default, rules.by_intervention)
            for e in self.events
        ]

    def sent(self, n: int) -> list[tuple[Event, dict[str, Any]]]:
        """Participant n's messages sent to them: (message.sent, its message.queued's data)."""
        queued = {
            e.data.outbox_id: e.data.model_dump()  # type: ignore[attr-defined]
            for e in self.events[n]
            if e.event_type == "message.queued"
        }
        return [
            (e, queued[e.data.outbox_id])  # type: ignore[attr-defined]
            for e in self.events[n]
            if e.event_type == "message.sent"
            and e.data.outbox_id in queued  # type: ignore[attr-defined]
            and queued[e.data.outbox_id].get("to_participant", True)  # type: ignore[attr-defined]
        ]


def ran(events: list[Event]) -> str | None:
    """The intervention the participant's events say they ended up in."""
    found = None
    for e in events:
        if e.event_type in ("participant.enrolled", "participant.updated"):
            data = e.data.model_dump()
            found = (data.get("changes") or data).get("intervention", found)
    return found
