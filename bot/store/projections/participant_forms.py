"""The participants row's `forms` column: each form's state as a fold of the form.* events.

Per form: `values` (key -> value), `sources` (key -> the message it came from and when),
`added` (fields the model proposed and the engine accepted), `domains_completed`,
`domain_turns` and `turns` (collecting extractions), `completed`, `rejected` (the reasons
from the latest extraction, shown to the model in the next one) and `next` (what the latest
extraction meant to ask next).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.store.event_types.forms import (
    FormCompleted,
    FormDomainCompleted,
    FormExtracted,
    FormFieldAdded,
    FormRejected,
    FormValueSet,
)
from bot.store.events import Event

Row = dict[str, Any]
EMPTY: dict[str, Any] = {
    "values": {},
    "sources": {},
    "added": {},
    "domains_completed": [],
    "domain_turns": {},
    "turns": 0,
    "completed": False,
    "rejected": [],
    "next": None,
}


def state(row: Row, form: str) -> dict[str, Any]:
    """The state of `form` in a participants row (empty if nothing happened yet)."""
    found = (row.get("forms") or {}).get(form) or {}
    return {**EMPTY, **found}


def _with(row: Row, form: str, **changes: Any) -> Row:
    forms = dict(row.get("forms") or {})
    forms[form] = {**state(row, form), **changes}
    return {**row, "forms": forms}


def _extracted(row: Row, event: Event) -> Row:
    data: FormExtracted = event.data  # type: ignore[assignment]  # the reducer of this event type only
    now = state(row, data.form)
    if data.mode != "collect":
        return _with(row, data.form, rejected=[], next=None)
    domains = dict(now["domain_turns"])
    if data.domain is not None:
        domains[data.domain] = domains.get(data.domain, 0) + 1
    counted = {"turns": now["turns"] + 1, "domain_turns": domains}
    return _with(row, data.form, **counted, rejected=[], next=data.next)


def _value_set(row: Row, event: Event) -> Row:
    data: FormValueSet = event.data  # type: ignore[assignment]  # the reducer of this event type only
    now = state(row, data.form)
    source = {
        "at": event.occurred_at.isoformat(),
        "message_id": data.message_id,
        "message_seq": data.message_seq,
        "step": data.step,
    }
    return _with(
        row,
        data.form,
        values={**now["values"], data.key: data.value},
        sources={**now["sources"], data.key: source},
    )


def _field_added(row: Row, event: Event) -> Row:
    data: FormFieldAdded = event.data  # type: ignore[assignment]  # the reducer of this event type only
    now = state(row, data.form)
    spec = {
        "type": data.type,
        "domain": data.domain,
        "options": list(data.options),
        "description": data.description,
        "why": data.why,
    }
    return _with(row, data.form, added={**now["added"], data.key: spec})


def _domain_completed(row: Row, event: Event) -> Row:
    data: FormDomainCompleted = event.data  # type: ignore[assignment]  # the reducer of this event type only
    done = list(state(row, data.form)["domains_completed"])
    if data.domain not in done:
        done.append(data.domain)
    return _with(row, data.form, domains_completed=done)


def _completed(row: Row, event: Event) -> Row:
    return _with(row, event.data.form, completed=True)  # type: ignore[attr-defined]  # the reducer of this event type only


def _rejected(row: Row, event: Event) -> Row:
    data: FormRejected = event.data  # type: ignore[assignment]  # the reducer of this event type only
    said = f"{data.item} {data.key}: {data.reason}" if data.key else f"{data.item}: {data.reason}"
    return _with(row, data.form, rejected=[*state(row, data.form)["rejected"], said])


FORM_CASES: dict[str, Callable[[Row, Event], Row]] = {
    FormExtracted.event_type: _extracted,
    FormValueSet.event_type: _value_set,
    FormFieldAdded.event_type: _field_added,
    FormDomainCompleted.event_type: _domain_completed,
    FormCompleted.event_type: _completed,
    FormRejected.event_type: _rejected,
}
