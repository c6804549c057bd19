"""One structured extraction per participant message in a step that fills a form (pure: the
LLM comes in as the Asker, events go out).

The model reads the form (each field, its type and current value), the clock, the reasons its
previous reply was rejected, and the conversation; it answers with an analysis, values to set
or correct (several at once), fields to add (an `open` form), the domain the message was about,
domains it judges complete and, where the form allows it, whether the form is complete. Every
part is validated against the form before it is stored: what does not fit is `form.rejected`
with the reason (shown to the model next time), never a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bot.interventions.interpreter import forms, judging
from bot.interventions.interpreter.completion import Asker
from bot.interventions.interpreter.conditions import FORM_ROOTS, holds
from bot.interventions.language.format import Form, FormField
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import NAME_SLUG
from bot.interventions.language.problems import unknown
from bot.interventions.language.results import class_name, describe
from bot.interventions.language.types import of_spec, value_problem
from bot.store.event_types.forms import (
    FormCompleted,
    FormDomainCompleted,
    FormExtracted,
    FormFailed,
    FormFieldAdded,
    FormMode,
    FormRejected,
    FormValueSet,
)
from bot.store.events import Event, EventData
from bot.store.projections.participant_forms import state

Value = str | int | float | bool | list[str] | None
TYPES = ("text", "int", "number", "bool", "choice", "list", "date", "time")


class ValueUpdate(BaseModel):
    """A value for one field: its key and the value, normalised to the field's type."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="The field's key, exactly as listed.")
    value: Value = Field(
        description="int/number: a number; bool: true or false; choice: one of its options; "
        "list: a list of text; date: YYYY-MM-DD; time: HH:MM; text: text."
    )


class NewField(BaseModel):
    """A field the form lacks that this person's answers call for."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="a new key: lower case letters, digits and _")
    domain: str | None = Field(description="one of the form's domains")
    type: Literal[TYPES] = Field(description="the value's type")  # type: ignore[valid-type]  # a Literal of the TYPES tuple, read by pydantic at runtime
    options: list[str] | None = Field(description="for type choice: the options, else null")
    description: str = Field(description="what the field records")
    why: str = Field(description="why this person's answers call for it")


def extraction_model(name: str, form: Form) -> type[BaseModel]:
    """The structured reply asked for: what the form allows (new fields if `open`, domains if
    it has any, the completion mark if `model_completes`)."""
    definitions: dict[str, Any] = {
        "analysis": (
            str,
            Field(
                description="First: what the message says, how it links to what is known, "
                "which fields it updates, what is still missing."
            ),
        ),
        "values": (
            list[ValueUpdate] | None,
            Field(None, description="Fields this message sets or corrects (null: none)."),
        ),
    }
    if form.open:
        definitions["new_fields"] = (
            list[NewField] | None,
            Field(None, description="Fields to add to the form (null: none)."),
        )
    if form.domains:
        definitions["domain"] = (
            str | None,
            Field(None, description="The domain this message was about (null: none)."),
        )
        definitions["domains_complete"] = (
            list[str] | None,
            Field(None, description="Domains now covered well enough (null: none)."),
        )
    if form.model_completes:
        definitions["form_complete"] = (
            bool | None,
            Field(None, description="true when the whole form is complete enough."),
        )
    definitions["next"] = (
        str | None,
        Field(None, description="The field or domain to ask about next (null: nothing)."),
    )
    return create_model(
        class_name(name, "Extraction"),
        __config__=ConfigDict(extra="forbid"),
        __doc__=f"What the latest message tells us for the form {form.title!r}.",
        **definitions,
    )


def extract(
    intervention: Intervention,
    name: str,
    mode: FormMode,
    context: Mapping[str, Any],
    asker: Asker,
    row: Mapping[str, Any],
    inbound: Event | None,
    step: str | None,
) -> list[EventData]:
    """The events of one extraction: `form.extracted` first (or `form.failed`), then values
    set, fields added, domains completed, rejections."""
    form = intervention.forms[name]
    now = state(dict(row), name)
    message_id = inbound.event_id if inbound is not None else None
    message_seq = inbound.seq if inbound is not None and inbound.seq > 0 else None
    if asker.structured is None:
        return [FormFailed(form=name, reason="no structured output", step=step)]
    prompt = instructions(intervention, name, mode, context, now)
    model = intervention.model(form.model, "judgement")
    value, events = asker.structured(
        [{"role": "system", "content": prompt}],
        extraction_model(name, form),
        f"form:{name}",
        model=model,
    )
    if value is None:
        reason = next((err for e in reversed(events) if (err := getattr(e, "error", None))), None)
        failed = FormFailed(
            form=name, reason=reason or "no reply", step=step, message_id=message_id
        )
        return [*events, failed]
    reply = value.model_dump(mode="json")
    check = _Check(form, name, now, message_id)
    domain = check.domain(reply.get("domain"))
    extracted = FormExtracted(
        form=name,
        step=step,
        mode=mode,
        domain=domain,
        analysis=reply.get("analysis") or "",
        next=reply.get("next"),
        message_id=message_id,
        message_seq=message_seq,
    )
    for proposed in reply.get("new_fields") or ():
        check.field(proposed, message_seq)
    for update in reply.get("values") or ():
        check.value(update, step, message_seq)
    for done in reply.get("domains_complete") or ():
        check.domain_complete(done)
    if reply.get("form_complete") and not now["completed"]:
        check.out.append(FormCompleted(form=name, by="model", message_id=message_id))
    return [*events, extracted, *check.out]


def completion(intervention: Intervention, name: str, row: Mapping[str, Any]) -> list[EventData]:
    """`form.completed` (by rule) when the form's `complete_when` now holds for the first time."""
    form = intervention.forms[name]
    now = state(dict(row), name)
    if now["completed"] or form.complete_when is None:
        return []
    held, values = holds(form.complete_when, forms.rule_data(form, now), FORM_ROOTS)
    if not held:
        return []
    return [FormCompleted(form=name, by="rule", condition=form.complete_when, values=values)]


class _Check:
    """Validates each part of a reply against the form as it is (and grows with accepted
    fields); `out` collects the events."""

    def __init__(self, form: Form, name: str, now: Mapping[str, Any], message_id: str | None):
        self.form, self.name, self.now, self.message_id = form, name, now, message_id
        self.fields: dict[str, FormField] = forms.fields(form, now)
        self.out: list[EventData] = []
        self.seen: set[str] = set()

    def reject(self, item: Any, key: str | None, reason: str) -> None:
        self.out.append(
            FormRejected(
                form=self.name, item=item, key=key, reason=reason, message_id=self.message_id
            )
        )

    def domain(self, domain: str | None) -> str | None:
        if domain is None or domain in self.form.domains:
            return domain
        self.reject("domain", domain, unknown("domain", domain, self.form.domains))
        return None

    def value(self, update: Mapping[str, Any], step: str | None, seq: int | None) -> None:
        key, value = str(update.get("key")), update.get("value")
        spec = self.fields.get(key)
        if spec is None:
            self.reject("value", key, unknown("field", key, self.fields))
            return
        if key in self.seen:
            self.reject("value", key, "set twice in one reply: give each field once")
            return
        self.seen.add(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            self.reject("value", key, "no value: leave out a field the message does not fill")
            return
        if spec.type == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)  # 74.0 is the integer 74 (JSON numbers do not say which)
        if spec.type == "choice" and isinstance(value, str):
            value = _option(value, spec.choices())
        problem = value_problem(value, of_spec(spec))
        if problem:
            self.reject("value", key, f"{problem} (the field is {describe_type(spec)})")
            return
        previous = (self.now.get("values") or {}).get(key)
        if (type(previous), previous) == (type(value), value):
            return
        self.out.append(
            FormValueSet(
                form=self.name,
                key=key,
                value=value,
                previous=previous,
                type=spec.type,
                domain=spec.domain,
                critical=spec.critical,
                step=step,
                message_id=self.message_id,
                message_seq=seq,
            )
        )

    def field(self, proposed: Mapping[str, Any], seq: int | None) -> None:
        key = str(proposed.get("key") or "")
        if not NAME_SLUG.match(key):
            self.reject("field", key, "a key uses lower case letters, digits and _, from a letter")
            return
        if key in self.fields:
            self.reject("field", key, "the form already has this field")
            return
        domain = proposed.get("domain")
        if self.form.domains and domain not in self.form.domains:
            self.reject("field", key, unknown("domain", str(domain), self.form.domains))
            return
        if not self.form.domains and domain is not None:
            self.reject("field", key, "this form has no domains: give domain null")
            return
        kind, options = proposed.get("type"), list(proposed.get("options") or [])
        if kind == "choice" and len(set(options)) < 2:
            self.reject("field", key, "a choice needs at least two different options")
            return
        if kind != "choice" and options:
            self.reject("field", key, f"options only go with type choice, not {kind}")
            return
        description = str(proposed.get("description") or "").strip()
        if not description:
            self.reject("field", key, "say what the field records (description)")
            return
        self.fields[key] = FormField(
            type=kind, options=options or None, description=description, domain=domain
        )
        self.out.append(
            FormFieldAdded(
                form=self.name,
                key=key,
                type=str(kind),
                domain=domain,
                options=options,
                description=description,
                why=str(proposed.get("why") or ""),
                message_id=self.message_id,
                message_seq=seq,
            )
        )

    def domain_complete(self, domain: str) -> None:
        if domain not in self.form.domains:
            self.reject("domain", domain, unknown("domain", domain, self.form.domains))
        elif domain not in (self.now.get("domains_completed") or []):
            if not any(isinstance(e, FormDomainCompleted) and e.domain == domain for e in self.out):
                self.out.append(
                    FormDomainCompleted(form=self.name, domain=domain, message_id=self.message_id)
                )


def describe_type(spec: FormField) -> str:
    if spec.type == "choice":
        return "a choice of " + ", ".join(repr(o) for o in spec.choices())
    return {"int": "an integer", "bool": "true or false", "list": "a list of text"}.get(
        spec.type, spec.type
    )


def instructions(
    intervention: Intervention,
    name: str,
    mode: FormMode,
    context: Mapping[str, Any],
    now: Mapping[str, Any],
) -> str:
    """The extraction's system message: the author's prompt (if any), the form with its values,
    the clock, earlier rejections, and the conversation."""
    form = intervention.forms[name]
    parts = []
    if form.prompt is not None:
        parts.append(judging.render(intervention, f"form:{name}:prompt", context).text.strip())
    intro = f"You keep the form {form.title!r}"
    intro += f" ({form.description.strip()})" if form.description else ""
    intro += ". Read the participant's latest message and record what it tells you."
    if mode == "passive":
        intro += (
            " The interview is over: record only corrections and information the participant "
            "volunteers; do not plan further questions (next: null)."
        )
    parts.append(intro)
    values = now.get("values") or {}
    lines = ["Fields (key, type, domain; current value):"]
    for key, spec in forms.fields(form, now).items():
        tags = [describe_type(spec)]
        if spec.domain:
            tags.append(f"domain {spec.domain}")
        if spec.critical:
            tags.append("critical")
        about = describe(spec)
        shown = values.get(key)
        current = "unknown" if shown is None else repr(shown)
        lines.append(f"- {key} ({'; '.join(tags)}){': ' + about if about else ''} — now: {current}")
    parts.append("\n".join(lines))
    if form.domains:
        parts.append("Domains: " + ", ".join(form.domains) + ".")
    parts.append("The clock:\n" + forms.clock(form, now)["text"])
    if now.get("rejected"):
        rejected = "\n".join(f"- {reason}" for reason in now["rejected"])
        parts.append(
            f"Your previous reply had parts that were rejected and not stored:\n{rejected}\n"
            "Correct them if this message allows."
        )
    rules = (
        "Set a field only from what the participant said; correct a value when they correct "
        "it; several fields may come from one message. Give each value in the field's type."
    )
    if form.open:
        rules += " Propose a new field only when their answers call for one the form lacks."
    parts.append(rules)
    parts.append("The conversation, the latest message last:\n" + context["turns"](n=12))
    return "\n\n".join(parts)


def _option(value: str, options: Iterable[str]) -> str:
    """The option `value` names, ignoring case and surrounding spaces ("Widowed " is
    "widowed"): the option as declared, so the export has one spelling; `value` unchanged when
    it names none (or, options differing only in case, more than one), to be rejected."""
    wanted = value.strip().casefold()
    found = [option for option in options if option.casefold() == wanted]
    return found[0] if len(found) == 1 else value
