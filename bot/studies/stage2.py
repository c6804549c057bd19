"""The second stage of a SMART design: who is re-randomised (a typed condition over the
baseline, the arm and the stage-1 intervention's names) and the names and types it may read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bot.interventions.interpreter.conditions import holds
from bot.interventions.interpreter.context import ROOTS
from bot.interventions.language.format import FieldSpec
from bot.interventions.language.types import ANY, Type, of_spec
from bot.studies.format import ArmValue, Study

STUDY_ROOTS = ("baseline", "arm")
CONDITION_ROOTS = (*STUDY_ROOTS, *(root for root in ROOTS if root not in STUDY_ROOTS))


def field_type(spec: FieldSpec) -> Type:
    """A baseline field or arm variable: given at enrollment, so none only if optional."""
    return replace(of_spec(spec), optional=spec.optional)


def study_types(study: Study) -> dict[str, Type]:
    """`baseline.<field>`, `arm.<variable>` and `arm.name`, typed (the arm's intervention may
    read the same `arm.*` names)."""
    types = {f"baseline.{name}": field_type(spec) for name, spec in study.baseline.items()}
    types |= {f"arm.{name}": field_type(spec) for name, spec in study.variables.items()}
    types["arm.name"] = Type("choice", tuple(study.arms))
    return types


def first_arms(study: Study) -> list[str]:
    """The stage-1 arms whose participants stage 2 concerns."""
    if study.stage2 is None:
        return []
    return list(study.stage2.after or study.allocation.ratio)


def arm_values(study: Study, arm: str) -> dict[str, ArmValue | list[str] | None]:
    """What the arm's intervention reads as `arm.*`: each variable (None if the arm gives no
    value for an optional one) and `name`."""
    given = study.arms[arm].variables
    values: dict[str, ArmValue | list[str] | None] = {
        name: given.get(name) for name in study.variables
    }
    return {**values, "name": arm}


def stage2_applies(
    study: Study, first_arm: str, baseline: Mapping[str, Any], data: Mapping[str, Any]
) -> bool:
    """Whether a participant of stage-1 arm `first_arm` is re-randomised: the arm is one stage
    2 concerns and its condition holds over the baseline, the arm and `data` (the stage-1
    intervention's names: judgements, measurements, profile...). A condition that cannot be
    evaluated raises bot.interventions.interpreter.failures.ConditionFailure, never silently
    false."""
    if study.stage2 is None or first_arm not in first_arms(study):
        return False
    values = {**data, "baseline": dict(baseline), "arm": arm_values(study, first_arm)}
    found, _ = holds(study.stage2.when, values, CONDITION_ROOTS)
    return found


def merged(tables: list[Mapping[str, Type]]) -> dict[str, Type]:
    """Names of several interventions: a name typed differently by two of them is `any`."""
    types: dict[str, Type] = {}
    for table in tables:
        for name, kind in table.items():
            types[name] = kind if types.get(name, kind) == kind else ANY
    return types
