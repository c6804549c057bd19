"""forms.csv, folded from a participant's form events (pure but for reading): one row per
participant × form field that has a value, with the value's type and domain as declared when it
was set, when it was set and the participant message it came from. Its columns, typed and
described, are in the codebook (bot.reporting.codebook)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bot.reporting.cells import naive
from bot.reporting.results import Column
from bot.reporting.transcript import local, zone
from bot.store.event_types.forms import FormFieldAdded, FormValueSet
from bot.store.events import Event

FORM_COLUMNS = (
    Column("participant_id", "text", "the participant (a study code when pseudonymised)"),
    Column("intervention", "text", "the intervention the participant was in when exported"),
    Column("form", "text", "the form: its fields are forms.<form>.answers.<field>"),
    Column("field", "text", "the field's key"),
    Column(
        "value",
        "variable",
        "the latest value, of the column `type` (the field's type in the codebook); lists as "
        "JSON; text and list values are free text, blank in a pseudonymised export with free "
        "text dropped",
    ),
    Column("type", "text", "the field's type: text, int, number, bool, choice, list, date, time"),
    Column("domain", "text", "the field's domain (blank if none)"),
    Column("critical", "bool", "whether the field is critical"),
    Column("added", "bool", "true for a field the model proposed and the engine accepted"),
    Column("set_at_utc", "datetime", "when the latest value was set"),
    Column("set_at_local", "datetime", "the same, participant-local"),
    Column("set_at_local_naive", "naive datetime", "the same, the participant's wall clock"),
    Column("message_seq", "int", "the seq of the participant message it came from"),
    Column("message_id", "text", "the event id of that message (message.received)"),
    Column("step", "text", "the step the participant was in"),
    Column("times_set", "int", "how many times the field was set (corrections included)"),
)
FORM_TYPES = ("form.value_set", "form.field_added")


def form_rows(
    history: Iterable[Event], row: dict[str, Any], since: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per form field with a value, in the order the fields were first set; `since`
    keeps the fields last set from then on."""
    tz = zone(str(row.get("timezone") or "UTC"))
    added: set[tuple[str, str]] = set()
    fields: dict[tuple[str, str], dict[str, Any]] = {}
    for ev in history:
        data = ev.data
        if isinstance(data, FormFieldAdded):
            added.add((data.form, data.key))
        elif isinstance(data, FormValueSet):
            key = (data.form, data.key)
            times = fields[key]["times_set"] + 1 if key in fields else 1
            fields[key] = {
                "participant_id": row["participant_id"],
                "intervention": row.get("intervention"),
                "form": data.form,
                "field": data.key,
                "value": data.value,
                "type": data.type,
                "domain": data.domain,
                "critical": data.critical,
                "added": key in added,
                "set_at_utc": ev.occurred_at,
                "set_at_local": (there := local(ev.occurred_at, tz)),
                "set_at_local_naive": naive(there),
                "message_seq": data.message_seq,
                "message_id": data.message_id,
                "step": data.step,
                "times_set": times,
            }
    return [r for r in fields.values() if since is None or r["set_at_utc"] >= since]
