"""What an intervention needs from the deployment to run: an LLM, embeddings, a WhatsApp
template. Declared in intervention.yaml (`needs:`) or inferred from what it uses, so that
enrolling someone into an intervention that cannot answer them is refused where it is asked
(bot.services.enrollment), not discovered by the participant as a fallback on every message.

Inferred: a `module:` (the built-in modules talk through the LLM), a step that replies with
its prompt, a step's judgements, notes or form, a note, a judgement, a question whose answers
the LLM reads (`llm: true`, the default), a text with `[[slot]]`s (the LLM fills them), and a
library ranked by `embeddings` (which are asked of the same OpenAI-compatible server).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from bot.core.config import Settings
from bot.interventions.language.intervention import Intervention

Need = Literal["llm", "embeddings", "whatsapp_template"]
NEEDS: tuple[Need, ...] = ("llm", "embeddings", "whatsapp_template")
# How a need reads in a message, and what to set to meet it.
LABELS: dict[str, str] = {
    "llm": "an LLM",
    "embeddings": "embeddings",
    "whatsapp_template": "a WhatsApp template",
}
REMEDIES: dict[str, str] = {
    "llm": "set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)",
    "embeddings": "set OPENAI_API_KEY (or OPENAI_BASE_URL for a server that serves embeddings)",
    "whatsapp_template": "set WHATSAPP_TEMPLATE_SID (an approved template, HX...)",
}
_REASONS = 3  # the reasons shown for one need
NOT_CONFIGURED = "— not configured"


def needs_of(intervention: Intervention) -> dict[str, list[str]]:
    """Each need of the intervention and why (what uses it); declared needs read "declared"."""
    i = intervention
    llm: list[str] = []
    if i.config.module:
        llm.append(f"module {i.config.module}")
    for slug, step in i.steps.items():
        if i.sources.get(f"step:{slug}") is not None and i.source("step", slug).has_body:
            llm.append(f"step {slug} replies with its prompt")
        if step.judgements or step.notes or step.form is not None:
            llm.append(f"step {slug} runs judgements, notes or a form")
    llm += [f"judgement {slug}" for slug in i.judgements]
    llm += [f"note {slug}" for slug in i.notes]
    llm += [f"question {slug} is read by the LLM" for slug, q in i.questions.items() if q.llm]
    llm += [f"a [[slot]] in {key}" for key, c in i.compiled.items() if c.slots]
    found: dict[str, list[str]] = {}
    for need in i.config.needs:
        found.setdefault(need, []).append("declared")
    if llm:
        found.setdefault("llm", []).extend(dict.fromkeys(llm))
    embedded = [f"library {n}" for n, lib in i.libraries.items() if lib.method == "embeddings"]
    if embedded:
        found.setdefault("embeddings", []).extend(embedded)
    return {need: found[need] for need in NEEDS if need in found}


def configured(need: str, settings: Settings) -> bool:
    """Whether the deployment meets `need` (an LLM and embeddings come from the same server)."""
    if need in ("llm", "embeddings"):
        return settings.llm_configured
    if need == "whatsapp_template":
        return bool(settings.whatsapp_template_sid)
    return False


def unmet(
    needs: Mapping[str, Sequence[str]], settings: Settings, channel: str | None = None
) -> list[str]:
    """The needs the deployment does not meet; a WhatsApp template only for a WhatsApp
    enrollment (`channel`), or for any channel when none is named."""
    return [
        need
        for need in needs
        if not configured(need, settings)
        and (need != "whatsapp_template" or channel in (None, "whatsapp"))
    ]


def refusal(slug: str, needs: Mapping[str, Sequence[str]], missing: Sequence[str]) -> str:
    """One line naming what `slug` needs, why, and what to set."""
    parts = [
        f"{LABELS[need]} {NOT_CONFIGURED} ({', '.join(needs[need][:_REASONS])}); {REMEDIES[need]}"
        for need in missing
    ]
    return f"intervention {slug!r} needs " + "; and ".join(parts)


def summary(needs: Mapping[str, Sequence[str]], settings: Settings) -> list[str]:
    """One line per need for `validate` and the console: "needs an LLM — configured" or
    "needs an LLM — not configured (set ...)"."""
    lines = []
    for need in needs:
        if configured(need, settings):
            lines.append(f"needs {LABELS[need]} — configured")
        else:
            lines.append(f"needs {LABELS[need]} {NOT_CONFIGURED}: {REMEDIES[need]}")
    return lines
