"""LLM personas in a simulation: the writer that has an LLM write a persona's replies through
the OpenAI-compatible endpoint (bot.conversation.llm, as the rest of Tandem reaches it), the
engine's own LLM for an intervention that needs one (the report's `llm_personas` section,
in bot.sandbox.sim_costs, counts the personas' calls, failures and tokens).

Whether, when and what kind of reply a persona sends stays drawn from its seeded stream
(bot.sandbox.personas); only the text comes from the LLM. A failed call is counted and the
persona sends nothing for that message: never a stand-in text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.conversation.llm import ChatClient
from bot.core.config import Settings
from bot.interventions.validation import needs
from bot.runtime.routing import intervention_catalogue
from bot.sandbox.personas import Persona
from bot.sandbox.session import locate

PURPOSE = "persona"
TURNS = 40  # the conversation's last messages the LLM is shown
SYSTEM = (
    "You are role-playing a participant in a research study who receives text messages "
    "from the study's automated assistant on their phone. Stay in character.\n"
    "Who you are: {description}\n"
    "Traits: {traits}\n"
    "Write only the text of your next message, as this person would type it on a phone: "
    "short and informal, no quotation marks, no explanation. When asked to reply with a "
    "number or an option, answer as this person would."
)
ENGINE_NEEDS = ("llm", "embeddings")


@dataclass
class PersonaWriter:
    """Writes one persona's replies with `client`; counts its calls, failures and tokens."""

    client: Any  # ChatClient, or a test's stand-in with the same `chat`
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def write(self, persona: Persona, conversation: list[tuple[str, str]]) -> str | None:
        """The reply to the conversation so far, or None when the call failed or said nothing."""
        self.calls += 1
        outcome = self.client.chat(
            prompt(persona, conversation), model=persona.model, purpose=PURPOSE
        )
        event = outcome.event
        self.prompt_tokens += event.prompt_tokens or 0
        self.completion_tokens += event.completion_tokens or 0
        text = (outcome.content or "").strip()
        if outcome.error or not text:
            self.failed += 1
            reason = _reason(outcome.error or "the model said nothing")
            self.errors[reason] = self.errors.get(reason, 0) + 1
            return None
        return text


def prompt(persona: Persona, conversation: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The persona's description and traits, then the conversation: the bot's messages as the
    user's, the persona's own as the assistant's (the LLM plays the participant)."""
    system = SYSTEM.format(
        description=persona.description.strip(), traits=", ".join(persona.traits) or "none given"
    )
    messages = [{"role": "system", "content": system}]
    for who, text in conversation[-TURNS:]:
        messages.append({"role": "user" if who == "bot" else "assistant", "content": text})
    return messages


def _reason(error: str) -> str:
    """An error in few words (the report groups by it; no message text is in it)."""
    return error.split(":", 1)[0].strip()[:80]


def llm_personas(personas: Mapping[str, Persona]) -> list[str]:
    return sorted(name for name, p in personas.items() if p.kind == "llm")


def persona_writers(
    settings: Settings, personas: Mapping[str, Persona]
) -> dict[str, PersonaWriter]:
    """One writer per LLM persona, sharing one client; empty when no persona is an LLM one.
    The caller has refused LLM personas without an LLM (`no_llm_for_personas`)."""
    names = llm_personas(personas)
    if not names:
        return {}
    client = ChatClient.from_settings(settings)
    return {name: PersonaWriter(client) for name in names}


def no_llm_for_personas(settings: Settings, personas: Mapping[str, Persona]) -> str | None:
    """Why the LLM personas cannot be played here (no LLM configured), or None."""
    names = llm_personas(personas)
    if not names or settings.llm_configured:
        return None
    return (
        f"LLM personas need an LLM: {needs.REMEDIES['llm']} (the persona's `model:` or "
        f"TANDEM_MODEL names the model); LLM personas: {', '.join(names)}"
    )


def engine_llm(settings: Settings, target: str) -> tuple[ChatClient | None, str | None]:
    """The engine's LLM for `target`: the real client (as `tandem worker` builds it) when the
    intervention needs an LLM or embeddings and one is configured; None when it needs none
    (NoLLM stands in, the run stays offline); or why it cannot be simulated."""
    root, slug = locate(target)
    catalogue = intervention_catalogue(root)
    if catalogue.problems(slug):
        return None, None  # the cohort refuses it, naming every problem
    wanted = {n: why for n, why in catalogue.needs(slug).items() if n in ENGINE_NEEDS}
    if not wanted:
        return None, None
    missing = needs.unmet(wanted, settings, "sms")
    if missing:
        return None, needs.refusal(slug, wanted, missing) + " to simulate it"
    return ChatClient.from_settings(settings), None
