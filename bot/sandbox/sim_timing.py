"""The slowest turns of a simulation: the wall time the engine took for each work item (a
message, a timer, an enrollment) from reading the participant to appending the turn, measured
in the run around each worker turn, and the LLM calls' latency.

Wall time varies from run to run, so none of it goes in report.json (which a seed repeats
byte for byte): it is `timings.json` beside it, and the report page's last section.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from typing import TYPE_CHECKING, Any

from bot.runtime.worker import Next, Worker

if TYPE_CHECKING:
    from bot.sandbox.cohort import Cohort
    from bot.sandbox.sim_report import Facts

SLOWEST = 10  # turns listed


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


def timings(facts: Facts, turns: list[TurnTime]) -> dict[str, Any]:
    """timings.json: the turns' wall time (count, total, median, p90, max), the SLOWEST of
    them with who, what and when (simulated), and the LLM calls' latency."""
    index = {pid: n for n, pid in enumerate(facts.run.cohort.participant_ids)}
    ms = sorted(t.seconds * 1000 for t in turns)
    slow = sorted(turns, key=lambda t: -t.seconds)[:SLOWEST]
    latency = sorted(
        float(e.data.latency_ms)  # type: ignore[attr-defined]
        for events in facts.events
        for e in events
        if e.event_type == "llm.called" and e.data.latency_ms is not None  # type: ignore[attr-defined]
    )
    return {
        "note": "wall-clock time of this run on this machine: varies run to run",
        "turns": {
            "count": len(ms),
            "total_seconds": round(sum(ms) / 1000, 3),
            "median_ms": _rank(ms, 0.5),
            "p90_ms": _rank(ms, 0.9),
            "max_ms": round(ms[-1], 1) if ms else None,
        },
        "slowest": [_row(facts, index.get(t.participant_id), t) for t in slow],
        "llm_latency_ms": {
            "calls": len(latency),
            "median": _rank(latency, 0.5),
            "p90": _rank(latency, 0.9),
            "max": round(latency[-1], 1) if latency else None,
        },
    }


def _row(facts: Facts, n: int | None, turn: TurnTime) -> dict[str, Any]:
    """A slow turn: the participant's number and persona, what it was (a timer's kind), the
    step they were in when it ended, the simulated moment and its milliseconds."""
    what, step = turn.kind, None
    for e in facts.events[n] if n is not None else []:
        if e.occurred_at > turn.at:
            break
        data = e.data.model_dump()
        if e.event_type == "timer.scheduled" and data["timer_id"] == turn.ref:
            what = f"timer {data['kind']}"
        elif e.event_type == "step.entered":
            step = data["step"]
    return {
        "participant": n,
        "persona": facts.run.names[n] if n is not None else None,
        "turn": what,
        "step": step,
        "at": turn.at.isoformat(),
        "ms": round(turn.seconds * 1000, 1),
    }


def _rank(ordered: list[float], share: float) -> float | None:
    """The value at `share` of the ordered list (nearest rank), rounded; None when empty."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)
