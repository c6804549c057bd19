"""The slowest turns of a simulation (timed by bot.sandbox.sim_timing) and the LLM calls'
latency, for timings.json.

Wall time varies from run to run, so none of it goes in report.json (which a seed repeats
byte for byte): it is `timings.json` beside it, and the report page's last section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.sandbox.sim_timing import TurnTime

if TYPE_CHECKING:
    from bot.sandbox.sim_facts import Facts

SLOWEST = 10  # turns listed


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
