"""A participant's baseline values (given at enrollment) checked against the study's declared
baseline fields, before anything is allocated: as JSON gives them (typed), or as a form, a CSV
cell or the command line gives them (text, read by the field's type)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.interventions.language.format import FieldSpec
from bot.interventions.language.types import value_problem
from bot.studies.format import Study
from bot.studies.stage2 import field_type

TRUE = ("true", "yes", "y", "1", "on")
FALSE = ("false", "no", "n", "0", "off")


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


def field_problems(study: Study, values: Mapping[str, Any]) -> dict[str, str]:
    """Each baseline field that is wrong, with why, for a person to correct (in the study's
    order, undeclared names last)."""
    problems: dict[str, str] = {}
    for name, spec in study.baseline.items():
        if values.get(name) is None and not spec.optional:
            problems[name] = "required by the study (a baseline field)"
        elif (wrong := value_problem(values.get(name), field_type(spec))) is not None:
            problems[name] = wrong
    for name in values:
        if name not in study.baseline:
            known = ", ".join(study.baseline) or "none"
            problems[name] = f"not a baseline field of the study (known: {known})"
    return problems


def read_text(study: Study, given: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Text values (a form, a CSV row, `--baseline field=value`) read by each declared field's
    type; a blank is not given. Returns the values and the problems of those not readable
    (an undeclared name is kept as text, for `field_problems` to name)."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, raw in given.items():
        text = (raw or "").strip()
        if not text:
            continue
        spec = study.baseline.get(name)
        try:
            values[name] = text if spec is None else _read(text, spec)
        except ValueError as exc:
            problems[name] = str(exc)
    return values, problems


def _read(text: str, spec: FieldSpec) -> Any:
    if spec.type == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
    if spec.type == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
    if spec.type == "bool":
        if text.lower() in TRUE:
            return True
        if text.lower() in FALSE:
            return False
        raise ValueError(f"{text!r} is not yes or no (true/false, yes/no, 1/0)")
    if spec.type == "list":
        return [item.strip() for item in text.split(";") if item.strip()]
    return text
