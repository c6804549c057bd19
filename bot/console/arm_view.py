"""What the console shows of a participant's study arm, by the staff member's role
(bot.services.blinding): the arm, its code, or nothing; and the parts of the participant page
that would name a hidden arm (the intervention, its map, the allocation's and enrollment's
event data) masked. An admin who unblinded the participant sees the arm itself."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from flask import g

from bot.console import study_forms
from bot.console.blueprint import services
from bot.services import blinding
from bot.services.blinding import blinded_for, shown_arm
from bot.store.event_types.studies import ParticipantUnblinded
from bot.store.events import participant_stream
from bot.studies.catalogue import StudyCatalogue

HIDDEN = "(blinded)"
NAMING = {"participant.allocated": ("arm", "first_arm"), "participant.enrolled": ("intervention",)}
NAMING_ALSO = {"participant.allocated": ("probabilities", "conditional", "scores")}


def catalogue() -> StudyCatalogue:
    return study_forms.studies(study_forms.interventions())


def role() -> str | None:
    staff = g.get("staff")
    return staff["role"] if staff else None


def unblinded(participant_id: str) -> bool:
    """Whether an admin has unblinded this participant (participant.unblinded)."""
    stream = participant_stream(participant_id)
    found = services().store.read_all(
        stream_id=stream, event_types=[ParticipantUnblinded.event_type]
    )
    return next(iter(found), None) is not None


def view(row: Mapping[str, Any]) -> dict[str, Any]:
    """How the page shows the participant's study: `arm` (name, code or None), `hidden`
    (whether arm names are hidden from this role) and `unblinded`."""
    study, arm = row.get("study"), row.get("arm")
    studies, key = catalogue(), services().settings.master_key
    hidden = blinded_for(role(), study, studies)
    opened = hidden and role() == "admin" and bool(study) and unblinded(row["participant_id"])
    shown = arm if opened else shown_arm(role(), study, arm, studies, key)
    blinded_study = bool(study) and studies.blinded(str(study))
    return {"study": study, "arm": shown, "hidden": hidden and not opened,
            "unblinded": opened, "blinded_study": blinded_study}  # fmt: skip


def masked_timeline(timeline: Iterable[Any], shown_arm_text: str | None) -> list[Any]:
    """The timeline with what names a hidden arm replaced (the events stay listed)."""
    masked = []
    for e in timeline:
        if e.event_type == "participant.updated" and isinstance(e.data, dict):
            e = _switch_masked(e)  # a stage-2 switch of intervention names the new arm
        if e.event_type not in NAMING or not isinstance(e.data, dict):
            masked.append(e)
            continue
        data = dict(e.data)
        for key in NAMING[e.event_type]:
            if key in data and data[key] is not None:
                data[key] = shown_arm_text if key == "arm" and shown_arm_text else HIDDEN
        for key in NAMING_ALSO.get(e.event_type, ()):
            data.pop(key, None)
        masked.append(SimpleNamespace(**{**_fields(e), "data": data}))
    return masked


def _switch_masked(e: Any) -> Any:
    changes = e.data.get("changes")
    if not isinstance(changes, dict) or "intervention" not in changes:
        return e
    data = {**e.data, "changes": {**changes, "intervention": HIDDEN}}
    return SimpleNamespace(**{**_fields(e), "data": data})


def masked_rows(rows: Iterable[Any]) -> list[Any]:
    """Participant list rows with the intervention hidden where it would name the arm."""
    found = []
    studies = catalogue()
    for r in rows:
        values = dict(r._mapping) if hasattr(r, "_mapping") else dict(r)
        study = values.get("study")
        if study and blinded_for(role(), study, studies):
            values["intervention"] = HIDDEN
        found.append(SimpleNamespace(**values))
    return found


def hidden_interventions() -> set[str]:
    """The interventions the arms of studies blinded for this role run: not offered as a
    filter, nor counted apart (either would sort participants by arm)."""
    return blinding.hidden_interventions(role(), catalogue())


def _fields(e: Any) -> dict[str, Any]:
    if hasattr(e, "_asdict"):
        return dict(e._asdict())
    return {k: getattr(e, k) for k in ("seq", "event_type", "recorded_at", "meta", "data")}
