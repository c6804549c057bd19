"""A representative context for the validator: every name a template may use, with a value of
the declared type, so that rendering every template finds misspelt names and broken logic
before a participant meets them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.interventions.interpreter.context import NO_MESSAGES
from bot.interventions.interpreter.forms import sample_view
from bot.interventions.interpreter.retrieval import sample_retrieved
from bot.interventions.language.format import Question
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.results import sample
from bot.interventions.language.types import profile_specs

PARTICIPANT = {
    "name": "Alex",
    "local_time": "09:00",
    "local_date": "Monday 2 March 2026",
    "weekday": "Monday",
    "hour": 9,
    "timezone": "Europe/London",
    "days_enrolled": 3,
    "turns": 1,
    "flagged": False,
    "minutes_since_prompt": 180,
    "arm": "control",
}


def answer_sample(question: Question) -> Any:
    if question.answer == "options":
        return question.options[0]
    if question.answer == "scale":
        return question.min
    if question.answer == "yesno":
        return True
    return "example answer"


def sample_turns(intervention: Intervention) -> Callable[..., str]:
    """`turns()` as templates call it, refusing a step that does not exist."""
    speakers = intervention.config.speakers
    steps = set(intervention.steps)

    def turns(n: int | None = None, step: str | None = None) -> str:
        if step not in (None, "current", *steps):
            raise ValueError(f"turns(step={step!r}): no such step; use 'current' or a step slug")
        if n is not None and int(n) <= 0:
            return NO_MESSAGES
        return f"{speakers.participant}: Hello\n{speakers.bot}: Hi! How are you today?"

    return turns


def sample_data(intervention: Intervention, step: str | None = None) -> dict[str, Any]:
    """The data conditions and templates see, with a representative value for every name."""
    step = step or intervention.root or next(iter(intervention.steps), None)
    found = intervention.steps.get(step or "")
    profile = {name: "example" for name in intervention.profile_fields()}
    # a declared field's sample has its type and range: `{% if profile.total >= 20 %}` renders
    profile |= {name: sample(spec) for name, spec in profile_specs(intervention).items()}
    return {
        "judgements": {
            slug: {name: sample(spec) for name, spec in (judgement.result or {}).items()}
            for slug, judgement in intervention.judgements.items()
        },
        "notes": {name: f"(note {name})" for name in intervention.note_names()},
        "profile": profile,
        "step": {
            "name": step,
            "title": found.title if found else None,
            "turns": 1,
            "minutes": 1.0,
            "visits": 1,
        },
        "participant": {**PARTICIPANT, "arm": _sample_arm(intervention).get("name")},
        "measurements": {
            slug: answer_sample(question) for slug, question in intervention.questions.items()
        },
        "forms": {name: sample_view(form) for name, form in intervention.forms.items()},
        "arm": _sample_arm(intervention),
        "instruments": intervention.instruments.samples() if intervention.instruments else {},
        "answered": {
            name: True
            for name in (*intervention.questions, *intervention.config.instruments, "instrument")
        },
        "abandoned": dict.fromkeys((*intervention.config.instruments, "instrument"), True),
    }


def _sample_arm(intervention: Intervention) -> dict[str, Any]:
    """The first arm running the intervention, as `arm` reads it (a missing value sampled)."""
    arms = intervention.arms
    if not arms.values:
        return {}
    study, arm = next(iter(arms.values))
    values = arms.of(study, arm)
    for name, specs in arms.specs.items():
        if values.get(name) is None:
            values[name] = sample(specs[0])
    return values


def sample_context(intervention: Intervention, step: str | None = None) -> dict[str, Any]:
    """What a template is rendered with: the data, `turns()`, the trigger, the intervention."""
    return {
        **sample_data(intervention, step),
        "turns": sample_turns(intervention),
        "trigger": "inbound",
        "intervention": {
            "title": intervention.config.title,
            "version": intervention.config.version,
        },
        "retrieved": sample_retrieved(intervention),
    }
