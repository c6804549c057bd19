"""Transitions and interrupts that read a judgement the step does not run: the value they
see is the one from whenever it last ran (a warning), or none for ever if nothing runs it
(an error), and a crisis interrupt (one that raises a critical alert) must see a judgement
made on this very turn (an error, or it never fires when it matters)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from bot.interventions.interpreter.conditions import condition
from bot.interventions.language.expressions import ConditionError
from bot.interventions.language.format import Step
from bot.interventions.language.intervention import Intervention

Level = Literal["error", "warning"]
Found = tuple[str, tuple[Any, ...], str, Level]


def judgement_run_problems(intervention: Intervention) -> Iterator[Found]:
    """(source key, key path, message, level) for each condition on a judgement not run."""
    every_turn = set(intervention.interrupt_judgements())
    anywhere = every_turn | {r.name for s in intervention.steps.values() for r in s.judgements}
    anywhere |= {d.outcome.judge for d in intervention.decisions.values() if d.outcome.judge}
    if intervention.unreadable or not anywhere <= set(intervention.judgements):
        return  # what a misspelt or unreadable name would run is unknown: said elsewhere
    for slug, step in intervention.steps.items():
        key, runs = f"step:{slug}", {r.name for r in step.judgements} | every_turn
        for n, transition in enumerate(step.transitions):
            for name in _judgements(transition.when, intervention) - runs:
                said = f"transition to {transition.to!r} reads `judgements.{name}`"
                if name not in anywhere:
                    message = f"{said}, but no step runs judgement {name!r}: it is always none"
                    yield key, ("transitions", n, "when"), message, "error"
                else:
                    message = (
                        f"{said}, but step {slug!r} does not run judgement {name!r}: it sees "
                        f"the result from whenever {name!r} last ran (add it to `judgements:`)"
                    )
                    yield key, ("transitions", n, "when"), message, "warning"
        if step.interrupt is not None:
            for name in _judgements(step.interrupt.when, intervention) - every_turn:
                yield key, ("interrupt", "when"), *_interrupt(name, step, anywhere)


def _interrupt(name: str, step: Step, anywhere: set[str]) -> tuple[str, Level]:
    said = f"the interrupt reads `judgements.{name}`, but {name!r} is not run every turn"
    fix = f"(add it to the interrupt's `judgements: [{name}]`)"
    if name not in anywhere:
        return f"{said} nor by any step: the interrupt never fires {fix}", "error"
    crisis = any(a.alert and a.severity == "critical" for a in step.on_enter)
    if crisis:
        return f"{said}: this crisis interrupt misses the turn that matters {fix}", "error"
    return f"{said}: it sees the result from whenever a step last ran it {fix}", "warning"


def _judgements(source: str | None, intervention: Intervention) -> set[str]:
    """The judgements a condition reads (none if it cannot be compiled: said elsewhere)."""
    if source is None:
        return set()
    try:
        names = condition(source).names()
    except ConditionError:
        return set()
    found = {name.split(".")[1] for name in names if name.startswith("judgements.")}
    return {name for name in found if name in intervention.judgements}
