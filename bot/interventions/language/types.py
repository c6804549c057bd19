"""The type of every name an author can use (judgement results, answers, notes, profile, step
and participant values), as the type checker and the run-time checks of `set:` see them."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from bot.conversation.context import PROFILE_FIELDS
from bot.interventions.language.format import FieldSpec, Form, Question
from bot.interventions.language.intervention import Intervention

NUMERIC = ("integer", "number")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SPEC_KINDS = {"int": "integer", "bool": "yes/no", "list": "list"}
_SLOT_KINDS = {"bool": "yes/no", "int": "integer", "pick": "choice"}
_FORMATS = {"date": re.compile(r"^\d{4}-\d{2}-\d{2}$"), "time": re.compile(r"^\d{2}:\d{2}$")}


@dataclass(frozen=True)
class Type:
    """A value's type: `kind` is text, integer, number, yes/no, choice, list, date, time, none
    or any (unknown: already reported); `optional` values may be none (not yet judged, answered
    or set); `literal` is the value of a fixed text written in a condition."""

    kind: str
    options: tuple[str, ...] = ()
    optional: bool = False
    bounds: tuple[float | None, float | None] = (None, None)  # a declared min and max
    literal: Any = None
    item: Type | None = None  # a list's items

    def __str__(self) -> str:
        if self.kind == "choice":
            shown = "one of " + ", ".join(repr(o) for o in self.options)
        elif self.kind == "list":
            shown = f"a list of {self.item.kind if self.item else 'values'}"
        elif self.kind in ("integer", "any"):
            shown = f"an {self.kind}" if self.kind == "integer" else "a value"
        elif self.kind == "none":
            shown = "none"
        else:
            shown = self.kind
        return shown + (" (or none)" if self.optional and self.kind != "none" else "")

    def numeric(self) -> bool:
        return self.kind in NUMERIC

    def maybe(self) -> Type:
        return replace(self, optional=True)


ANY = Type("any")
TEXT, INTEGER, NUMBER, YES_NO = Type("text"), Type("integer"), Type("number"), Type("yes/no")
COUNT, DURATION = Type("integer", bounds=(0, None)), Type("number", bounds=(0, None))
STEP_TYPES = {"title": TEXT.maybe(), "turns": COUNT, "minutes": DURATION, "visits": COUNT}
PARTICIPANT_TYPES = {
    "name": TEXT.maybe(),
    "local_time": Type("time"),
    "local_date": TEXT,
    "weekday": Type("choice", WEEKDAYS),
    "hour": Type("integer", bounds=(0, 23)),
    "timezone": TEXT,
    "days_enrolled": COUNT,
    "turns": COUNT,
    "flagged": YES_NO,
    "minutes_since_prompt": COUNT,
    "arm": TEXT.maybe(),
}


def of_spec(spec: FieldSpec) -> Type:
    """A declared field's type; none until it is judged or set."""
    kind = _SPEC_KINDS.get(spec.type, spec.type)
    item = TEXT if kind == "list" else None
    bounds = (spec.min, spec.max)
    return Type(kind, tuple(spec.choices()), optional=True, item=item, bounds=bounds)


def of_question(question: Question) -> Type:
    """An answer's type by its kind; none until it is answered."""
    if question.answer == "options":
        return Type("choice", tuple(question.options), optional=True)
    if question.answer == "yesno":
        return YES_NO.maybe()
    if question.answer == "scale":
        return Type("integer", optional=True, bounds=(question.min, question.max))
    return TEXT.maybe()


def profile_specs(intervention: Intervention) -> dict[str, FieldSpec]:
    """The profile fields declared in intervention.yaml (`profile:` and `intake.fields`)."""
    config = intervention.config
    intake = config.intake.fields if config.intake else {}
    return {**intake, **config.profile}


def name_types(intervention: Intervention) -> dict[str, Type]:
    """Every dotted name a condition, template or `set:` may read, with its type."""
    types: dict[str, Type] = {}
    for slug, judgement in intervention.judgements.items():
        for field, spec in (judgement.result or {}).items():
            types[f"judgements.{slug}.{field}"] = of_spec(spec)
    for slug, question in intervention.questions.items():
        types[f"measurements.{slug}"] = of_question(question)
    for slug in intervention.notes:
        compiled = intervention.compiled.get(f"note:{slug}")
        for slot in compiled.slots if compiled else ():
            kind = _SLOT_KINDS.get(slot.kind, "text")
            # a typed note is "" until it is taken; a text note is "" too, which is text
            types.setdefault(
                f"notes.{slot.name}", Type(kind, slot.options, optional=kind != "text")
            )
    for name in PROFILE_FIELDS:
        types[f"profile.{name}"] = TEXT.maybe()
    for name, spec in profile_specs(intervention).items():
        types[f"profile.{name}"] = of_spec(spec)
    types["step.name"] = Type("choice", tuple(intervention.steps))
    types |= {f"step.{key}": value for key, value in STEP_TYPES.items()}
    types |= {f"participant.{key}": value for key, value in PARTICIPANT_TYPES.items()}
    return (
        types
        | form_name_types(intervention)
        | arm_types(intervention)
        | answered_types(intervention)
    )


def arm_types(intervention: Intervention) -> dict[str, Type]:
    """`arm.<variable>` as the studies running the intervention declare it (`any` where two
    declare it differently) and `arm.name`; none when no study runs it."""
    arms = intervention.arms
    if not arms.names:
        return {}
    types: dict[str, Type] = {"arm.name": Type("choice", arms.names)}
    for name, specs in arms.specs.items():
        kinds = {replace(of_spec(spec), optional=spec.optional) for spec in specs}
        types[f"arm.{name}"] = kinds.pop() if len(kinds) == 1 else ANY
    return types


def answered_types(intervention: Intervention) -> dict[str, Type]:
    """`instruments.<name>.last.*` (their types come from bot.instruments, through the
    intervention's port), `answered.*` and `abandoned.*`: yes/no, true only in the turn that
    answered (or abandoned)."""
    types: dict[str, Type] = {}
    if intervention.instruments is not None:
        types |= intervention.instruments.types()
    for slug in intervention.questions:
        types[f"answered.{slug}"] = YES_NO
    for name in intervention.config.instruments:
        types[f"answered.{name}"] = YES_NO
    types["answered.instrument"] = YES_NO
    for name in (*intervention.config.instruments, "instrument"):
        types[f"abandoned.{name}"] = YES_NO
    return types


# The clock of a form (the interpreter's forms computes it): `forms.<name>.clock.<figure>`.
LIST_OF_TEXT = Type("list", item=TEXT)
CLOCK_TYPES: dict[str, Type] = {
    "known": INTEGER,
    "wanted": INTEGER,
    "critical_known": INTEGER,
    "critical_total": INTEGER,
    "others_known": INTEGER,
    "missing": LIST_OF_TEXT,
    "missing_critical": LIST_OF_TEXT,
    "turns": INTEGER,
    "target": INTEGER.maybe(),
    "left": INTEGER.maybe(),
    "domains_completed": LIST_OF_TEXT,
    "domains_open": LIST_OF_TEXT,
    "complete": YES_NO,
    "text": TEXT,
}
DOMAIN_TYPES: dict[str, Type] = {
    "title": TEXT,
    "turns": INTEGER,
    "target": INTEGER.maybe(),
    "complete": YES_NO,
    "known": INTEGER,
    "wanted": INTEGER,
}


def form_name_types(intervention: Intervention) -> dict[str, Type]:
    """The dotted names of every form, typed, for conditions (bot.interventions.language.types)."""
    types: dict[str, Type] = {}
    for name, form in intervention.forms.items():
        base = f"forms.{name}"
        types[f"{base}.complete"] = YES_NO
        types[f"{base}.title"] = TEXT
        types[f"{base}.next"] = TEXT.maybe()
        for key, spec in form.fields.items():
            types[f"{base}.answers.{key}"] = of_spec(spec)
        for figure, kind in CLOCK_TYPES.items():
            types[f"{base}.clock.{figure}"] = kind
        for domain in form.domains:
            for figure, kind in DOMAIN_TYPES.items():
                types[f"{base}.clock.domains.{domain}.{figure}"] = kind
    return types


def rule_types(form: Form) -> dict[str, Type]:
    """The names a form's `complete_when` may read."""
    types = {f"form.{figure}": kind for figure, kind in CLOCK_TYPES.items()}
    types |= {f"form.answers.{key}": of_spec(spec) for key, spec in form.fields.items()}
    return types


def value_problem(value: Any, expected: Type) -> str | None:
    """Why `value` (plain data, at run time) is not of type `expected` (None: it is)."""
    if value is None:
        return None if expected.optional else f"it is {expected} and cannot be none"
    kind = expected.kind
    number = isinstance(value, int | float) and not isinstance(value, bool)
    fits = {
        "text": isinstance(value, str),
        "integer": number and float(value).is_integer(),
        "number": number,
        "yes/no": isinstance(value, bool),
        "choice": isinstance(value, str) and value in expected.options,
        "list": isinstance(value, list) and all(isinstance(item, str) for item in value),
        "any": True,
    }
    if kind in _FORMATS:
        return None if isinstance(value, str) and _FORMATS[kind].match(value) else f"not a {kind}"
    if not fits.get(kind, False):
        return f"{value!r} is not {expected}"
    low, high = expected.bounds
    if number and ((low is not None and value < low) or (high is not None and value > high)):
        return f"{value!r} is outside the declared range ({_bound(low)} to {_bound(high)})"
    return None


def _bound(value: float | None) -> str:
    return "any" if value is None else f"{value:g}"
