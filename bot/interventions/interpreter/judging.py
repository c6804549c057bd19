"""Judgements and notes: render the prompt, ask the LLM, record the result as an event.

A judgement asks for its declared result type as structured output (`judgement.recorded`, or
`judgement.failed` with the reason); a note completes its [[NAME]] slots (`note.taken`, or
`note.failed`). A template that cannot be rendered at run time raises TemplateFailure: the
turn stops with `template.failed` (bot.interventions.interpreter.failures), never a silent gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2

from bot.interventions.interpreter.completion import Asker, complete
from bot.interventions.interpreter.failures import TemplateFailure
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.templates import Rendered, RenderError
from bot.store.event_types.interventions import (
    JudgementFailed,
    JudgementRecorded,
    JudgementWhen,
    NoteFailed,
    NoteTaken,
)
from bot.store.events import EventData

# What a template may raise at run time, as validation's _RENDER_ERRORS: a division by zero for
# one answer (found by `tandem simulate`) is a template failure, not a work item retried and
# parked with nothing recorded in the participant's stream.
TEMPLATE_ERRORS = (jinja2.TemplateError, RenderError, ValueError, TypeError, ArithmeticError)


def render(intervention: Intervention, key: str, context: Mapping[str, Any]) -> Rendered:
    """A compiled template rendered once; TemplateFailure (the turn stops, loudly) if it
    cannot be."""
    compiled = intervention.template(key)
    if compiled is None:
        raise TemplateFailure(key, ValueError(f"{key} has no template"))
    try:
        return intervention.templates.render(compiled.template, context)
    except TEMPLATE_ERRORS as exc:
        raise TemplateFailure(key, exc) from exc


def judge(
    intervention: Intervention,
    slug: str,
    context: Mapping[str, Any],
    asker: Asker,
    step: str | None,
    when: JudgementWhen,
) -> list[EventData]:
    """Run judgement `slug`; the last event is `judgement.recorded` or `judgement.failed`."""
    judgement = intervention.judgements[slug]
    text = render(intervention, f"judgement:{slug}", context).text
    if asker.structured is None:
        return [JudgementFailed(judgement=slug, reason="no structured output", step=step)]
    model = intervention.model(judgement.model, "judgement")
    value, events = asker.structured(
        [{"role": "system", "content": text}],
        intervention.result_model(slug),
        f"judgement:{slug}",
        model=model,
    )
    if value is None:
        reason = next((err for e in reversed(events) if (err := getattr(e, "error", None))), None)
        return [*events, JudgementFailed(judgement=slug, reason=reason or "no reply", step=step)]
    result = value.model_dump(mode="json")
    return [*events, JudgementRecorded(judgement=slug, result=result, step=step, when=when)]


def take_note(
    intervention: Intervention,
    slug: str,
    context: Mapping[str, Any],
    asker: Asker,
    step: str | None,
) -> list[EventData]:
    """Complete note `slug`'s slots; each becomes `notes.<NAME>`."""
    rendered = render(intervention, f"note:{slug}", context)
    model = intervention.model(intervention.notes[slug].model, "note")
    asker = Asker(asker.converse, asker.structured, model)
    completion = complete(rendered, asker, purpose=f"note:{slug}", reply=False)
    if completion.error:
        return [*completion.events, NoteFailed(note=slug, reason=completion.error, step=step)]
    return [*completion.events, NoteTaken(note=slug, values=completion.values, step=step)]
