"""Validator checks of forms (bot.interventions.language.format.Form): field keys and domains, the
completion rule (a condition over `form.*`), the model alias, the extraction's structured
reply, and the steps that name a form."""

from __future__ import annotations

from typing import Any

from bot.conversation.llm import StrictSchemaError, check_strict
from bot.interventions.interpreter.conditions import FORM_ROOTS, condition
from bot.interventions.interpreter.extraction import extraction_model
from bot.interventions.language.expressions import ConditionError
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG, NAME_SLUG
from bot.interventions.language.problems import unknown
from bot.interventions.language.typecheck import condition_type_problems
from bot.interventions.language.types import rule_types

Found = list[tuple[str, tuple[Any, ...], str]]


def form_problems(i: Intervention) -> Found:
    """(source key, key path, message) for each problem of each form and each step's `form:`."""
    found: Found = []
    for name, form in i.forms.items():
        key, at = i.form_source(name)
        if not NAME_SLUG.match(name):
            found.append((key, at, f"form name {name!r}: use a-z, 0-9 and _ (it is a name)"))
        for field, spec in form.fields.items():
            where = (*at, "fields", field)
            if not NAME_SLUG.match(field):
                found.append((key, where, f"field {field!r}: use a-z, 0-9 and _, from a letter"))
            if spec.domain is not None and spec.domain not in form.domains:
                message = unknown("domain", spec.domain, form.domains)
                found.append((key, (*where, "domain"), f"{message} (declare it under `domains:`)"))
        if form.complete_when is not None:
            for message in _rule_problems(form.complete_when, rule_types(form)):
                found.append((key, (*at, "complete_when"), message))
        if form.model and CONFIG not in i.unreadable and form.model not in i.config.models:
            found.append((key, (*at, "model"), unknown("model alias", form.model, i.config.models)))
        if not form.fields and not form.open:
            found.append((key, (*at, "fields"), "a form needs `fields:` (or `open: true`)"))
        try:
            check_strict(extraction_model(name, form))
        except StrictSchemaError as exc:
            found.append((key, at, f"the extraction cannot be asked for: {exc}"))
    for slug, step in i.steps.items():
        if step.form is not None and step.form.name not in i.forms:
            if step.form.name not in i.unreadable:
                message = unknown("form", step.form.name, i.forms)
                found.append((f"step:{slug}", ("form",), message))
    return found


def _rule_problems(source: str, types: dict[str, Any]) -> list[str]:
    try:
        compiled = condition(source, FORM_ROOTS)
    except ConditionError as exc:
        return [f"complete_when `{source}`: {exc}"]
    missing = sorted(name for name in compiled.names() if name not in types)
    if missing:
        return [f"complete_when `{source}`: {unknown('form value', n, types)}" for n in missing]
    return [f"complete_when `{source}`: {p}" for p in condition_type_problems(compiled, types)]
