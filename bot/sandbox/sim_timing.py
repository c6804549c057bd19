"""Timing a simulation's turns: the wall time the engine took for each work item (a message,
a timer, an enrollment) from reading the participant to appending the turn, measured in the
run around each worker turn (bot.sandbox.sim_slowest reports them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from typing import TYPE_CHECKING, Any

from bot.runtime.worker import Next, Worker

if TYPE_CHECKING:
    from bot.sandbox.cohort import Cohort


@dataclass(frozen=True)
class TurnTime:
    """One work item's turn: whose, of what kind (its `ref`: the event or timer behind it),
    at what simulated moment, and how many seconds of wall time it took."""

    participant_id: str
    kind: str
    ref: str
    at: datetime
    seconds: float


class TimedWorker(Worker):
    """The cohort's worker, timing each work item's turn (decision and commit, retries
    included) as it handles it."""

    turns: list[TurnTime]

    def _process(self, item: dict[str, Any], release: str | None) -> Next:
        started = perf_counter()
        try:
            return super()._process(item, release)
        finally:
            took = perf_counter() - started
            at = self.services.clock.now()
            found = TurnTime(item["participant_id"], item["kind"], item["ref"], at, took)
            self.turns.append(found)


def time_turns(cohort: Cohort) -> list[TurnTime]:
    """Put a timing worker in the cohort's place (same services, handler and name); returns
    the list its turns are added to."""
    old = cohort.worker
    timed = TimedWorker(old.services, old.handler, old.name)
    timed.turns = []
    cohort.worker = timed
    return timed.turns
