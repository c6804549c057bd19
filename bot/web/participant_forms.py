"""The researcher API's view of a participant's forms: each form's fields (value, type,
domain, when it was set and the message it came from) and the clock the engine computes."""

from __future__ import annotations

from typing import Any

from flask import Response

from bot.interventions.interpreter.forms import clock, fields
from bot.interventions.language.loader import read_intervention
from bot.store.projections.participant_forms import state
from bot.web.api_models import FormFieldOut, FormListResponse, FormOut, ParticipantPath
from bot.web.current import interventions
from bot.web.participant_api import ERRORS, Refused, api, current_services, ok, participant_row


@api.get(
    "/<participant_id>/forms",
    summary="A participant's forms and their clocks",
    responses={200: FormListResponse, **ERRORS},
)
def participant_forms(path: ParticipantPath) -> tuple[Response, int]:
    """Every form of the participant's intervention, as its events leave it: each field (the
    declared ones and those the model added) and the clock (fields known and wanted, critical
    known and total, missing fields, turns spent and left, each domain against its target)."""
    row = participant_row(current_services().store, path.participant_id)
    slug = str(row["intervention"])
    refusal = interventions().refusal(slug)
    if refusal is not None:
        raise Refused(409, f"the participant's forms cannot be described: {refusal}")
    intervention, _ = read_intervention(interventions().root / slug)
    assert intervention is not None  # it validates (refusal is None)
    result = []
    for name, form in intervention.forms.items():
        now = state(row, name)
        result.append(
            FormOut(
                name=name,
                title=form.title,
                complete=bool(now["completed"]),
                fields=[_field(key, spec, now) for key, spec in fields(form, now).items()],
                clock={k: v for k, v in clock(form, now).items()},
            )
        )
    return ok(FormListResponse(status="ok", result=result))


def _field(key: str, spec: Any, now: dict[str, Any]) -> FormFieldOut:
    source = (now.get("sources") or {}).get(key) or {}
    return FormFieldOut(
        key=key,
        value=(now.get("values") or {}).get(key),
        type=spec.type,
        domain=spec.domain,
        critical=spec.critical,
        added=key in (now.get("added") or {}),
        options=list(spec.choices()),
        set_at=source.get("at"),
        message_id=source.get("message_id"),
        message_seq=source.get("message_seq"),
    )
