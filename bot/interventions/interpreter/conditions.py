"""Conditions in an intervention (transitions, returns, interrupts, actions): compiled against
the intervention's names once, and evaluated with the values they read, for the record."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from bot.interventions.interpreter.context import ROOTS
from bot.interventions.interpreter.failures import ConditionFailure
from bot.interventions.language.expressions import Condition, compile_condition

FORM_ROOTS = ("form",)  # a form's `complete_when` reads only its own figures


@lru_cache(maxsize=1024)
def condition(source: str, roots: tuple[str, ...] = ROOTS) -> Condition:
    """Raises expressions.ConditionError for a condition authors may not write."""
    return compile_condition(source, roots)


def holds(
    source: str | None, data: Mapping[str, Any], roots: tuple[str, ...] = ROOTS
) -> tuple[bool, dict[str, Any]]:
    """Whether `source` holds (no condition always does) and the values of the names it read.
    A condition that cannot be evaluated (a value missing that the types allowed, an item
    past the end of a list) raises ConditionFailure: it is never silently false."""
    if source is None:
        return True, {}
    compiled = condition(source, roots)
    found = compiled.check(data)
    if found.error is not None:
        raise ConditionFailure(compiled.source, found.error)
    return found.value, {name: lookup(data, name) for name in compiled.names()}


def lookup(data: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted name ("judgements.engaged.response"), None where missing."""
    value: Any = data
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value
