"""Report sections on how far participants got (bot.sandbox.sim_report's SECTIONS): time to
completion (an end step reached), forms started and completed, and measurement adherence
(questions and questionnaires answered of those sent). Each reads the run's events only."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.sandbox.sim_report import Facts

DAY = 86400.0


def nearest_rank(ordered: list[float], share: float, digits: int = 2) -> float | None:
    """The value at `share` of an ordered list (nearest rank), rounded; None when empty."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], digits)


def spread(values: list[float], digits: int = 2) -> dict[str, float | None]:
    """Median, 90th percentile and maximum (nearest rank)."""
    ordered = sorted(values)
    return {
        "median": nearest_rank(ordered, 0.5, digits),
        "p90": nearest_rank(ordered, 0.9, digits),
        "max": round(ordered[-1], digits) if ordered else None,
    }


def completion(facts: Facts) -> dict[str, Any]:
    """Per persona and overall: participants who reached an end step (`end: true`), the days
    from their enrollment to it (median, p90, max), and how many did not finish."""
    ends = {slug for slug, step in facts.intervention.steps.items() if step.end}
    days: dict[str, list[float]] = defaultdict(list)
    unfinished: Counter[str] = Counter()
    for n, events in enumerate(facts.events):
        persona = facts.run.names[n]
        enrolled: datetime | None = None
        finished = None
        for e in events:
            if e.event_type == "participant.enrolled" and enrolled is None:
                enrolled = e.occurred_at
            elif e.event_type == "step.entered" and e.data.model_dump()["step"] in ends:
                finished = e.occurred_at
                break
        if finished is None or enrolled is None:
            unfinished[persona] += 1
        else:
            days[persona].append((finished - enrolled).total_seconds() / DAY)
    personas = sorted(set(facts.run.names))
    return {
        "end_steps": sorted(ends),
        "overall": _finished(
            [d for name in personas for d in days[name]], sum(unfinished.values())
        ),
        "by_persona": {name: _finished(days[name], unfinished[name]) for name in personas},
    }


def _finished(days: list[float], unfinished: int) -> dict[str, Any]:
    return {"completed": len(days), "not_finished": unfinished, "days": spread(days)}


def forms(facts: Facts) -> dict[str, Any] | None:
    """For each form the intervention declares: participants who started it (a message was
    read for it), completed it, or left it unfinished at the end of the run (abandoned); the
    extractions made, failed and rejected; minutes from start to completion."""
    declared = sorted(facts.intervention.forms)
    if not declared:
        return None
    found: dict[str, Any] = {}
    for name in declared:
        started: dict[int, datetime] = {}
        done: dict[int, datetime] = {}
        counts: Counter[str] = Counter()
        for n, events in enumerate(facts.events):
            for e in events:
                if not e.event_type.startswith("form.") or e.data.model_dump()["form"] != name:
                    continue
                counts[e.event_type.removeprefix("form.")] += 1
                started.setdefault(n, e.occurred_at)
                if e.event_type == "form.completed":
                    done.setdefault(n, e.occurred_at)
        minutes = [(done[n] - started[n]).total_seconds() / 60 for n in done]
        found[name] = {
            "started": len(started),
            "completed": len(done),
            "abandoned": len(started) - len(done),
            "extractions": counts["extracted"],
            "failed_extractions": counts["failed"],
            "rejected": counts["rejected"],
            "minutes_to_complete": spread(minutes, 1),
        }
    return found


def adherence(facts: Facts) -> dict[str, Any] | None:
    """Measurement adherence: for each question, the times it was asked, answered, missed
    (no answer in its window) and answers rejected; for each questionnaire, administrations
    sent, completed and abandoned; answered of sent overall and per persona."""
    questions: dict[str, Counter[str]] = defaultdict(Counter)
    instruments: dict[str, Counter[str]] = defaultdict(Counter)
    personas: dict[str, Counter[str]] = defaultdict(Counter)
    for n, events in enumerate(facts.events):
        mine = personas[facts.run.names[n]]
        for e in events:
            kind = e.event_type
            if kind.startswith("measurement."):
                what = {"asked": "sent", "recorded": "answered"}.get(kind[12:], kind[12:])
                questions[e.data.model_dump()["measurement"]][what] += 1
                mine.update([what] if what in ("sent", "answered") else [])
            elif kind in ("instrument.started", "instrument.completed", "instrument.abandoned"):
                what = {"started": "sent", "completed": "answered"}.get(kind[11:], kind[11:])
                instruments[e.data.model_dump()["instrument"]][what] += 1
                mine.update([what] if what in ("sent", "answered") else [])
    if not questions and not instruments:
        return None
    return {
        "questions": {k: _rate(v, ("missed", "rejected")) for k, v in sorted(questions.items())},
        "instruments": {k: _rate(v, ("abandoned",)) for k, v in sorted(instruments.items())},
        "by_persona": {k: _rate(v, ()) for k, v in sorted(personas.items())},
    }


def _rate(counts: Counter[str], also: tuple[str, ...]) -> dict[str, Any]:
    sent, answered = counts["sent"], counts["answered"]
    row: dict[str, Any] = {"sent": sent, "answered": answered}
    row.update({k: counts[k] for k in also})
    row["adherence"] = round(answered / sent, 3) if sent else None
    return row
