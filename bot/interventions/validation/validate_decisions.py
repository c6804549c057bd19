"""Validator checks of decision points (decisions/<name>.md) within their intervention: the
types of their expressions (by the intervention's own type checker) and what they name (the
step an option starts, the question or judgement of the outcome, the step of `on:`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.problems import Problem, unknown
from bot.interventions.validation.decisions_check import (
    decision_type_problems,
    intervention_type_of,
)


def decisions_problems(i: Intervention) -> list[Problem]:
    """Every problem of the intervention's decisions beyond their own file's structure."""
    if not i.decisions:
        return []
    type_of = intervention_type_of(i)
    found: list[Problem] = []
    for name, decision in i.decisions.items():
        source = i.sources[f"decision:{name}"]
        found += decision_type_problems(decision, source, type_of)
        named: list[tuple[tuple[Any, ...], str, str | None, Collection[str]]] = [
            (("options", n, "start"), "step", option.start, i.steps)
            for n, option in enumerate(decision.options)
        ]
        named += [
            (("when", "step"), "step", decision.when.step, i.steps),
            (("outcome", "ask"), "question", decision.outcome.ask, i.questions),
            (("outcome", "judge"), "judgement", decision.outcome.judge, i.judgements),
        ]
        for path, kind, value, known in named:
            if value is not None and value not in known and value not in i.unreadable:
                message = unknown(kind, value, known)
                found.append(Problem(source.file, source.line(*path), message))
    return found
