"""A participant's baseline values (given at enrollment) checked against the study's declared
baseline fields, before anything is allocated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.interventions.language.types import value_problem
from bot.studies.format import Study
from bot.studies.stage2 import field_type


def baseline_problems(study: Study, values: Mapping[str, Any]) -> list[str]:
    """What is wrong with `values` (none missing unless optional, none undeclared, each of its
    field's type); [] when they can be allocated with."""
    unknown = [name for name in values if name not in study.baseline]
    problems = [f"`{name}` is not a baseline field of the study" for name in unknown]
    for name, spec in study.baseline.items():
        if values.get(name) is None and not spec.optional:
            problems.append(f"`{name}` is required")
        elif (wrong := value_problem(values.get(name), field_type(spec))) is not None:
            problems.append(f"`{name}`: {wrong}")
    return problems
