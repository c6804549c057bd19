"""What is wrong with a decision file, said at file:line for its author: its shape (keys and
their types), its structure (times, windows, options, probabilities and their bounds, outcome,
moderators) and, given the intervention's type checker, the types of its expressions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.interventions.interpreter.conditions import condition
from bot.interventions.language.decisions_format import MODERATOR_KINDS, Decision
from bot.interventions.language.decisions_read import Problems, decision_from
from bot.interventions.language.expressions import ConditionError
from bot.interventions.language.intervention import Intervention, Source
from bot.interventions.language.loader import parse_file
from bot.interventions.language.problems import Problem
from bot.interventions.language.typecheck import expression_type
from bot.interventions.language.types import name_types
from bot.interventions.validation.references import name_problems

# The kind of an expression ("yes/no", "integer", "number", "text", ... or "any": unknown and
# already reported); ValueError, with the reason, for one that cannot be used.
TypeOf = Callable[[str], str]
_SAID = {"yes/no": "yes or no", "integer": "an integer", "number": "a number"}


def read_decision(path: str, text: str) -> tuple[Decision | None, Source, list[Problem]]:
    """The decision (None if its front matter cannot be read as one), where its keys are, and
    the problems of its shape and structure."""
    try:
        meta, source, _ = parse_file(text, path)
    except ValueError as exc:  # the loader's unreadable-YAML error, with its line
        return None, Source(path), [Problem(path, getattr(exc, "line", 1), str(exc))]
    source = replace(source, text=text)
    decision, problems = decision_from(path, meta, source)
    return decision, source, problems


def decision_problems(path: str, text: str, type_of: TypeOf | None = None) -> list[Problem]:
    """Every problem of one decision file, in line order; with `type_of`, its expressions'
    types too (`available` yes or no, probabilities numbers, moderators their declared type)."""
    decision, source, problems = read_decision(path, text)
    if decision is not None and type_of is not None:
        problems += decision_type_problems(decision, source, type_of)
    return sorted(set(problems), key=lambda p: (p.line or 0, p.message))


def decision_type_problems(decision: Decision, source: Source, type_of: TypeOf) -> list[Problem]:
    """What is wrong with the types of the decision's expressions."""
    problems = Problems(source)

    def check(expression: str, path: tuple[Any, ...], wanted: tuple[str, ...], what: str) -> None:
        try:
            kind = type_of(expression)
        except ValueError as exc:
            problems.add(path, f"{what}: {exc}")
            return
        if kind != "any" and kind not in wanted:
            said = _SAID[wanted[-1]]  # the widest kind wanted: an integer is a number too
            problems.add(path, f"{what} must be {said}, but `{expression}` is {kind}")

    if decision.available is not None:
        check(decision.available, ("available",), ("yes/no",), "`available`")
    for i, option in enumerate(decision.options):
        if isinstance(option.probability, str):
            path, what = ("options", i, "probability"), f"the probability of `{option.name}`"
            check(option.probability, path, ("integer", "number"), what)
    for name, moderator in decision.moderators.items():
        wanted = MODERATOR_KINDS[moderator.type]
        what = f"moderator `{name}` ({moderator.type})"
        check(moderator.value, ("moderators", name, "value"), wanted, what)
    return problems.problems


def intervention_type_of(intervention: Intervention) -> TypeOf:
    """The intervention's own type checker as a `TypeOf`: an expression's kind, or ValueError
    with the checker's words (a construct not allowed, an unknown name, a misused type)."""
    types = name_types(intervention)

    def type_of(expression: str) -> str:
        try:
            compiled = condition(expression)
        except ConditionError as exc:
            raise ValueError(str(exc)) from None
        problems = name_problems(compiled.names(), intervention)
        found = None
        if not problems:
            found, problems = expression_type(compiled, types)
        if problems or found is None:
            raise ValueError("; ".join(problems))
        return found.kind

    return type_of
