"""Forms as templates and conditions see them (pure): each field's value, and the clock, the
completeness figures the engine computes from the form's state (bot.store.projections.
participant_forms) so that a prompt, a condition, the API and an export all read the same.

`forms.<name>.answers.<key>` (each field's value: `values` would be a dict's method in Jinja),
`forms.<name>.fields`, `forms.<name>.complete`, `forms.<name>.clock.<figure>` (typed in
types.CLOCK_TYPES) and `forms.<name>.clock.text`, a rendering for prompts. A form's
`complete_when` reads the same figures as `form.<figure>` (and `form.answers.<key>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.interventions.language.format import FieldSpec, Form, FormField
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.results import sample
from bot.store.projections.participant_forms import state


def fields(form: Form, form_state: Mapping[str, Any]) -> dict[str, FormField]:
    """The declared fields in their order, then those the model added (validated when they
    were) by key: the state's `added` keeps no order that survives storage (PostgreSQL's
    jsonb orders an object's keys its own way), and a prompt, the clock, the API and an export
    show the same list whether the row was just folded or read back."""
    found = dict(form.fields)
    added = form_state.get("added") or {}
    for key in sorted(added):
        if key not in found:
            found[key] = added_field(added[key])
    return found


def added_field(spec: Mapping[str, Any]) -> FormField:
    options = list(spec.get("options") or []) or None
    return FormField(
        type=spec["type"],
        options=options,
        description=spec.get("description") or None,
        domain=spec.get("domain"),
    )


def clock(form: Form, form_state: Mapping[str, Any]) -> dict[str, Any]:
    """Fields known/wanted, critical known/total, what is missing, turns spent and left, and
    each domain's turns against its target and whether it is complete; `text` renders it."""
    found = fields(form, form_state)
    values = form_state.get("values") or {}
    known = [key for key in found if values.get(key) is not None]
    critical = [key for key, spec in found.items() if spec.critical]
    done = list(form_state.get("domains_completed") or [])
    domain_turns = form_state.get("domain_turns") or {}
    turns = int(form_state.get("turns") or 0)
    target = form.target_turns
    domains = {}
    for name, domain in form.domains.items():
        keys = [key for key, spec in found.items() if spec.domain == name]
        domains[name] = {
            "title": domain.title or name.replace("_", " ").capitalize(),
            "turns": int(domain_turns.get(name) or 0),
            "target": domain.target,
            "complete": name in done,
            "known": sum(values.get(key) is not None for key in keys),
            "wanted": len(keys),
        }
    figures: dict[str, Any] = {
        "known": len(known),
        "wanted": len(found),
        "critical_known": sum(key in known for key in critical),
        "critical_total": len(critical),
        "others_known": sum(key not in critical for key in known),
        "missing": [key for key in found if key not in known],
        "missing_critical": [key for key in critical if key not in known],
        "turns": turns,
        "target": target,
        "left": None if target is None else max(target - turns, 0),
        "domains_completed": [name for name in form.domains if name in done],
        "domains_open": [name for name in form.domains if name not in done],
        "complete": bool(form_state.get("completed")),
        "domains": domains,
    }
    figures["text"] = render_clock(figures)
    return figures


def render_clock(figures: Mapping[str, Any]) -> str:
    """The clock as a prompt shows it, a few plain lines."""
    target = figures["target"]
    turns = f"Turns: {figures['turns']}"
    turns += f" of a target of {target} ({figures['left']} left)." if target else " so far."
    lines = [
        turns,
        f"Fields known: {figures['known']} of {figures['wanted']}"
        + (
            f" (critical: {figures['critical_known']} of {figures['critical_total']})."
            if figures["critical_total"]
            else "."
        ),
    ]
    if figures["missing_critical"]:
        lines.append("Critical fields missing: " + ", ".join(figures["missing_critical"]) + ".")
    if figures["missing"]:
        lines.append("Missing: " + ", ".join(figures["missing"]) + ".")
    for domain in figures["domains"].values():
        count = (
            f"{domain['turns']} of ~{domain['target']} turns"
            if domain["target"]
            else (f"{domain['turns']} turns")
        )
        mark = "complete" if domain["complete"] else "open"
        known = f"{domain['known']}/{domain['wanted']} fields"
        lines.append(f"- {domain['title']}: {count}, {known}, {mark}")
    if figures["complete"]:
        lines.append("The form is complete.")
    return "\n".join(lines)


def form_view(form: Form, form_state: Mapping[str, Any]) -> dict[str, Any]:
    """What templates and conditions see as `forms.<name>`."""
    found = fields(form, form_state)
    values = form_state.get("values") or {}
    return {
        "title": form.title,
        "answers": {key: values.get(key) for key in found},
        "fields": {
            key: {
                "type": spec.type,
                "domain": spec.domain,
                "description": spec.description or "",
                "critical": spec.critical,
                "options": list(spec.choices()),
                "added": key not in form.fields,
            }
            for key, spec in found.items()
        },
        "complete": bool(form_state.get("completed")),
        "clock": clock(form, form_state),
        "rejected": list(form_state.get("rejected") or []),
        "next": form_state.get("next"),
    }


def forms_data(intervention: Intervention, row: Mapping[str, Any]) -> dict[str, Any]:
    """`forms` for every form the intervention declares."""
    return {
        name: form_view(form, state(dict(row), name)) for name, form in intervention.forms.items()
    }


def rule_data(form: Form, form_state: Mapping[str, Any]) -> dict[str, Any]:
    """What a form's `complete_when` reads: `form.<figure>` and `form.answers.<key>`."""
    view = form_view(form, form_state)
    return {"form": {**view["clock"], "answers": view["answers"]}}


def sample_view(form: Form) -> dict[str, Any]:
    """A representative `forms.<name>` for the validator's rendering of templates."""
    values = {key: sample(spec) for key, spec in form.fields.items()}
    first = next(iter(form.domains), None)
    example = {
        "values": values,
        "domain_turns": {first: 1} if first else {},
        "turns": 1,
        "rejected": ["value example: an example rejection"],
        "next": "example",
    }
    return form_view(form, example)


def spec_of(form: Form, form_state: Mapping[str, Any], key: str) -> FieldSpec | None:
    return fields(form, form_state).get(key)
