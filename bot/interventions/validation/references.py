"""Checking what an intervention refers to: the names in conditions (judgement fields, notes,
questions, step and participant values) and the targets of actions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot.interventions.interpreter.conditions import condition
from bot.interventions.interpreter.context import PARTICIPANT_KEYS, STEP_KEYS
from bot.interventions.language.expressions import ConditionError, is_expression
from bot.interventions.language.format import Action
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.problems import unknown
from bot.interventions.language.series_start import start_problems
from bot.interventions.language.typecheck import (
    assignable,
    condition_type_problems,
    expression_type,
    literal_type,
)
from bot.interventions.language.types import name_types
from bot.store.event_types.schedules import parse_when
from bot.timers.recurrence_format import recurrence_problems, window_quiet_problems


def condition_problems(source: str, intervention: Intervention) -> list[str]:
    """What is wrong with a condition: not allowed, or naming something that does not exist."""
    try:
        compiled = condition(source)
    except ConditionError as exc:
        return [f"condition `{source}`: {exc}"]
    problems = name_problems(compiled.names(), intervention)
    if not problems:
        problems = condition_type_problems(compiled, name_types(intervention))
    return [f"condition `{source}`: {p}" for p in problems]


def name_problems(names: Iterable[str], intervention: Intervention) -> list[str]:
    problems = []
    for dotted in sorted(names):
        root, *rest = dotted.split(".")
        if not rest:
            problems.append(f"'{root}' on its own is not a value; write {root}.<name>")
        elif root in ("judgements", "measurements") and rest[0] in intervention.unreadable:
            continue  # its own file's problem is reported
        elif root == "judgements":
            problems += _judgement(rest, intervention)
        elif root == "notes" and rest[0] not in intervention.note_names():
            problems.append(unknown("note", rest[0], intervention.note_names()))
        elif root == "measurements" and rest[0] not in intervention.questions:
            problems.append(unknown("question", rest[0], intervention.questions))
        elif root == "step" and rest[0] not in STEP_KEYS:
            problems.append(unknown("step value", rest[0], STEP_KEYS))
        elif root == "participant" and rest[0] not in PARTICIPANT_KEYS:
            problems.append(unknown("participant value", rest[0], PARTICIPANT_KEYS))
        elif root == "profile" and not intervention.declares_profile(rest[0]):
            problems.append(_undeclared(rest[0], intervention))
        elif root == "forms" and rest[0] not in intervention.unreadable:
            problems += _form(dotted, intervention)
        elif root == "arm":
            problems += _arm(rest[0], intervention)
        elif root in ("instruments", "answered", "abandoned"):
            problems += _answered(dotted, intervention)
    return problems


def _arm(name: str, intervention: Intervention) -> list[str]:
    """`arm.<name>` must be `name` or a variable declared by a study whose arm runs it."""
    if not intervention.arms.names:
        return [
            f"`arm.{name}`: no study's arm runs this intervention (arm values come from "
            "studies/<slug>/study.yaml)"
        ]
    if name == "name" or name in intervention.arms.specs:
        return []
    message = unknown("arm variable", name, ["name", *intervention.arms.specs])
    return [f"{message} (declared under `variables:` of the studies running it)"]


def _answered(dotted: str, intervention: Intervention) -> list[str]:
    """`instruments.<name>.last.…`, `answered.<name>` and `abandoned.<name>` must be names
    the intervention has."""
    root, name = dotted.split(".")[:2]
    declared = intervention.config.instruments
    if root == "instruments" and name not in declared:
        return [unknown("instrument", name, declared)]
    known = [key for key in name_types(intervention) if key.startswith(f"{root}.")]
    if root == "instruments" and intervention.instruments is None:
        return [f"{dotted}: the instruments of this intervention were not loaded"]
    return [] if dotted in known else [unknown("value", dotted, known)]


def _form(dotted: str, intervention: Intervention) -> list[str]:
    """`forms.<name>.…` must be a value the form has (the interpreter's forms names them)."""
    name = dotted.split(".")[1]
    if name not in intervention.forms:
        return [unknown("form", name, intervention.forms)]
    known = [key for key in name_types(intervention) if key.startswith(f"forms.{name}.")]
    if dotted in known:
        return []
    return [unknown("form value", dotted, known)]


def _undeclared(name: str, intervention: Intervention) -> str:
    message = unknown("profile field", name, intervention.profile_fields())
    return f"{message} (declare profile fields under `profile:` in intervention.yaml)"


def _judgement(rest: list[str], intervention: Intervention) -> list[str]:
    judgement = intervention.judgements.get(rest[0])
    if judgement is None:
        return [unknown("judgement", rest[0], intervention.judgements)]
    fields = judgement.result or {}
    if len(rest) == 1:
        return [f"judgements.{rest[0]} is a whole result; name a field: {', '.join(fields)}"]
    if rest[1] not in fields:
        known = [f"judgements.{rest[0]}.{name}" for name in fields]
        return [unknown("result field", f"judgements.{rest[0]}.{rest[1]}", known)]
    return []


def action_problems(action: Action, intervention: Intervention) -> list[str]:
    """Unknown notes or questions, schedules without a time, and bad conditions."""
    problems = condition_problems(action.when, intervention) if action.when else []
    known = {*intervention.notes, *intervention.questions, *intervention.unreadable}
    if action.note is not None and action.note not in known:
        problems.append(unknown("note", action.note, intervention.notes))
    for slug in (action.ask, action.schedule):
        if slug is not None and slug not in known:
            problems.append(unknown("question", slug, intervention.questions))
    declared = intervention.config.instruments
    if action.administer is not None and action.administer not in declared:
        problems.append(unknown("instrument", action.administer, declared))
    if action.repeat is not None:
        problems += repeat_problems(action.repeat, intervention)
    if action.schedule in intervention.questions:
        when = action.at or intervention.questions[action.schedule].schedule
        if when is None:
            problems.append(f"schedule {action.schedule!r}: say `at:` (or the question's time)")
        else:
            try:
                parse_when(when)
            except ValueError as exc:
                problems.append(f"schedule {action.schedule!r}: {exc}")
    for key, value in (action.set or {}).items():
        if not key.isidentifier() or key.startswith("_"):
            problems.append(f"set: {key!r} is not a profile field name (letters, digits, _)")
        elif not intervention.declares_profile(key):
            problems.append(f"set: {_undeclared(key, intervention)}")
        else:
            problems += [f"set: {key}: {p}" for p in set_problems(key, value, intervention)]
    return problems


def repeat_problems(repeat: Any, intervention: Intervention) -> list[str]:
    """A `repeat:` that is not a recurring schedule (docs/schedules.md), or whose windows or
    times fall in the intervention's quiet hours without `quiet_hours: defer`, or whose
    `from:` is no event of this intervention (bot.interventions.language.series_start)."""
    recurrence, problems = recurrence_problems(repeat)
    if recurrence is None:
        return [
            f"repeat: {'.'.join(map(str, path)) + ': ' if path else ''}{m}" for path, m in problems
        ]
    found = start_problems(recurrence.start_from, intervention)
    found += window_quiet_problems(recurrence, intervention.quiet_hours())
    return [f"repeat: {p}" for p in found]


def set_problems(key: str, value: Any, intervention: Intervention) -> list[str]:
    """What is wrong with `set: {key: value}`: an expression (checked like a condition) or a
    value stored as it is (is_expression); either must fit the field's type."""
    types = name_types(intervention)
    target = types.get(f"profile.{key}")
    if is_expression(value):
        try:
            compiled = condition(value)
        except ConditionError as exc:
            return [f"{exc} (to store text, quote it inside the YAML: \"'{value}'\")"]
        problems = name_problems(compiled.names(), intervention)
        if problems:
            return problems
        found, problems = expression_type(compiled, types)
        if problems:
            return problems
    else:
        found = literal_type(value.strip() if isinstance(value, str) else value)
    why = assignable(found, target) if target is not None else None
    return [f"`{value}` ({found}) cannot be stored in profile.{key}: {why}"] if why else []
