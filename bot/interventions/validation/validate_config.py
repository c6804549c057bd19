"""Validator checks of intervention.yaml (start, models, supervisors, safety phrases, quiet
hours) and of each judgement, note and question file on its own (result types, models)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from bot.conversation.llm import StrictSchemaError, check_strict
from bot.conversation.safety import CrisisScreen, PhraseError
from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.localtime import parse_quiet_hours
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG
from bot.interventions.language.problems import unknown
from bot.store.event_types.schedules import parse_when

Found = list[tuple[tuple[Any, ...], str]]


def config_problems(i: Intervention, modules: Collection[str] | None = None) -> Found:
    """Problems of intervention.yaml; the `module:` name only if `modules` (the names of the
    module-based conversation modules, handed in by the caller) are given."""
    config, found = i.config, Found()
    if config.root and config.root not in i.steps:
        found.append((("root",), unknown("step", config.root, i.steps)))
    elif config.root and i.returns(config.root):
        found.append((("root",), "the root step cannot be a digression or an interrupt"))
    if config.module and modules is not None and config.module not in modules:
        found.append((("module",), unknown("module", config.module, modules)))
    if config.sessions and config.sessions.resume_at not in i.steps:
        resume = config.sessions.resume_at
        found.append((("sessions", "resume_at"), unknown("step", resume, i.steps)))
    for kind in ("step", "judgement", "note", "question"):
        alias = getattr(config.defaults, kind)
        if alias and alias not in config.models:
            found.append((("defaults", kind), unknown("model alias", alias, config.models)))
    for n, phone in enumerate(config.supervisors):
        try:
            canonical_phone(phone)
        except InvalidPhoneNumber as exc:
            found.append((("supervisors", n), f"supervisor phone: {exc}"))
    safety = config.safety
    try:
        CrisisScreen.from_default(safety.extra_phrases, safety.extra_exclusions)
    except PhraseError as exc:
        found.append((("safety",), f"crisis phrases: {exc}"))
    try:
        parse_quiet_hours(config.quiet_hours)
    except ValueError as exc:
        found.append((("quiet_hours",), str(exc)))
    for name in config.intake.fields if config.intake else ():
        if not name.isidentifier() or name.startswith("_"):
            found.append((("intake", "fields", name), f"{name!r}: use letters, digits and _"))
    return found


def result_problems(i: Intervention) -> list[tuple[str, tuple[Any, ...] | None, str]]:
    """Judgements' result types and prompts, notes' prompts, questions' schedules, models."""
    found: list[tuple[str, tuple[Any, ...] | None, str]] = []
    for slug, judgement in i.judgements.items():
        key = f"judgement:{slug}"
        if not judgement.result:
            found.append(
                (key, ("title",), "a judgement needs `result:`: the fields it returns, typed")
            )
        bad = [n for n in judgement.result or {} if not n.isidentifier() or n.startswith("_")]
        for name in bad:
            found.append((key, ("result", name), f"result field {name!r}: letters, digits, _"))
        if judgement.result and not bad:
            try:
                check_strict(i.result_model(slug))
            except StrictSchemaError as exc:
                found.append((key, ("result",), f"result: {exc}"))
        if not i.sources[key].has_body:
            found.append((key, (), "a judgement needs a prompt below its front matter"))
    for slug in i.notes:
        if not i.sources[f"note:{slug}"].has_body:
            found.append((f"note:{slug}", (), "a note needs a prompt with [[NAME]] slots"))
    for slug, question in i.questions.items():
        uses_llm = question.model or i.sources[f"question:{slug}"].has_body
        if not question.llm and uses_llm:
            message = "`llm: false` reads answers without the LLM: drop the prompt and `model`"
            found.append((f"question:{slug}", ("llm",), message))
        if question.schedule:
            try:
                parse_when(question.schedule)
            except ValueError as exc:
                found.append((f"question:{slug}", ("schedule",), str(exc)))
    models: list[tuple[str, Mapping[str, Any]]]
    models = [("judgement", i.judgements), ("note", i.notes), ("question", i.questions)]
    models = [] if CONFIG in i.unreadable else models  # the aliases are declared there
    for kind, primitives in models:
        for slug, primitive in primitives.items():
            if primitive.model and primitive.model not in i.config.models:
                message = unknown("model alias", primitive.model, i.config.models)
                found.append((f"{kind}:{slug}", ("model",), message))
    return found
