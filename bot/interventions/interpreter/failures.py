"""What still goes wrong at run time (a condition that cannot be evaluated, a template that
cannot be rendered), said loudly: the events a failed turn records, with the file and line."""

from __future__ import annotations

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.templates import error_location
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import ConditionFailed, TemplateFailed
from bot.store.events import EventData, new_id


class RunFailure(Exception):
    """A turn that cannot go on: the participant gets the fallback, the operators an alert."""


class ConditionFailure(RunFailure):
    """A condition whose value could not be known (never taken as false)."""

    def __init__(self, condition: str, error: str) -> None:
        super().__init__(f"condition `{condition}`: {error}")
        self.condition, self.error = condition, error


class TemplateFailure(RunFailure):
    """A template (its key, e.g. "step:welcome:say:0") that could not be rendered."""

    def __init__(self, key: str, cause: BaseException) -> None:
        super().__init__(f"template {key}: {cause}")
        self.key, self.cause = key, cause


def failure_events(
    intervention: Intervention, failure: RunFailure, step: str | None
) -> list[EventData]:
    """`condition.failed` or `template.failed` where it happened, and an operator alert."""
    if isinstance(failure, ConditionFailure):
        file, line = condition_location(intervention, failure.condition)
        failed: EventData = ConditionFailed(
            condition=failure.condition, error=failure.error, file=file, line=line, step=step
        )
        what = f"condition `{failure.condition}` could not be evaluated ({failure.error})"
    else:
        assert isinstance(failure, TemplateFailure)
        file, line = template_location(intervention, failure.key, failure.cause)
        failed = TemplateFailed(
            template=failure.key, error=str(failure.cause), file=file, line=line, step=step
        )
        what = f"template {failure.key} could not be rendered ({failure.cause})"
    where = f"{file}:{line}" if line else file
    alert = AlertRaised(
        alert_id=new_id(),
        kind="condition" if isinstance(failure, ConditionFailure) else "template",
        summary=f"{intervention.config.title}: {where}: {what}; the fallback was sent",
        severity="critical",
    )
    return [failed, alert]


def condition_location(intervention: Intervention, condition: str) -> tuple[str, int | None]:
    """The file and line a condition (or `set:` expression) is written at (the first place, if
    it is written twice)."""
    for slug, step in intervention.steps.items():
        places: list[tuple[tuple[str | int, ...], str | None]]
        places = [(("transitions", n, "when"), t.when) for n, t in enumerate(step.transitions)]
        places.append((("return_when",), step.return_when))
        if step.interrupt is not None:
            places.append((("interrupt", "when"), step.interrupt.when))
        for path, written in places:
            if written is not None and written.strip() == condition.strip():
                source = intervention.source("step", slug)
                return source.file, source.line(*path)
    for key, path, action in intervention.actions():
        written_at: list[tuple[tuple[str, ...], object]] = [(("when",), action.when)]
        written_at += [(("set", name), value) for name, value in (action.set or {}).items()]
        for part, value in written_at:
            if isinstance(value, str) and value.strip() == condition.strip():
                source = intervention.sources[key]
                return source.file, source.line(*path, *part)
    return str(intervention.folder), None


def template_location(
    intervention: Intervention, key: str, cause: BaseException
) -> tuple[str, int | None]:
    """The file and line a template failed at (a partial's own, if it failed in one)."""
    partial, line = error_location(cause)
    if partial and f"partial:{partial}" in intervention.sources:
        return intervention.sources[f"partial:{partial}"].file, line
    owner = ":".join(key.split(":")[:2])
    source = intervention.sources.get(owner)
    compiled = intervention.template(key)
    first = compiled.line if compiled else None
    if source is None:
        return str(intervention.folder), None
    return source.file, (first + line - 1 if first and line else first)
