"""The `generate_habit_prompt` tool: ask the LLM for a short personalised habit prompt built
from the profile, its intensity and tone, and hand it back for the conversation to send."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.conversation.tone import tone_guide
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec

REQUIRED = {
    "prompt_anchor": "the moment the habit follows, e.g. 'after coffee'",
    "preferred_time": "when they want the prompt, e.g. '9am'",
}
SYSTEM = """You write one habit prompt for a participant in a behaviour-change study.
Follow the MAP framework: a clear Prompt (the anchor moment), an Ability-sized action that
really fits the requested size, and the participant's own Motivation as the benefit.
Use exactly this shape, in under 30 words:
"After/Before [anchor], try [action] — it helps you [benefit]. Would that feel doable?"
Reply with the prompt only: no quotes, no preamble, no explanation."""
INTENSITY = {
    "low": (
        "Intensity: LOW. The participant asked for less. Suggest a smaller, easier version of "
        "the habit than before: half the effort or less, well under a minute."
    ),
    "normal": "Intensity: NORMAL. Suggest a 1-minute version of the habit.",
    "high": (
        "Intensity: HIGH. The participant asked for more. Suggest a slightly more ambitious "
        "version than before: a little more effort or time, still only a few minutes."
    ),
}
DELIVERY = {
    "immediate": "The participant asked for this suggestion now, during the conversation.",
    "scheduled": "This suggestion is their scheduled daily prompt.",
}
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»"}


class GenerateHabitPrompt(BaseModel):
    """Write a short personalised habit prompt (under 30 words) from the participant's saved
    profile, which must hold prompt_anchor and preferred_time (save them first with
    save_user_profile). It takes into account their successes, last barrier, last tweak,
    intensity and tone. Send the returned prompt to the participant as your message,
    unchanged; this tool sends nothing itself."""

    model_config = ConfigDict(extra="forbid")

    delivery_mode: Literal["immediate", "scheduled"] = Field(
        description="immediate: they want it now; scheduled: it is their daily prompt."
    )
    personalization_notes: str | None = Field(
        None, description="Anything from this conversation the prompt should reflect."
    )

    @field_validator("delivery_mode", mode="before")
    @classmethod
    def _lowercase(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


def run(args: GenerateHabitPrompt, ctx: ToolContext) -> ToolOutcome:
    """The generated prompt as the message, or a failure saying precisely what is missing."""
    profile = ctx.participant.get("profile") or {}
    missing = missing_fields(profile)
    if missing:
        needs = "; ".join(f"{f} ({REQUIRED[f]})" for f in missing)
        return _failed(f"profile incomplete: missing {needs}; save it with save_user_profile")
    if ctx.complete is None:
        return _failed("no prompt generator is configured for this conversation")
    system, user = prompts(profile, args)
    try:
        text = ctx.complete(system, user, purpose="generate_habit_prompt")
    except Exception as error:  # noqa: BLE001  # the LLM is an outside system; tell the model
        return _failed(f"the generator call failed ({type(error).__name__}: {error})")
    prompt = unquote(text or "")
    if not prompt:
        return _failed("the generator returned no text; try again or write the prompt yourself")
    return ToolOutcome(True, prompt)


def prompts(profile: Mapping[str, Any], args: GenerateHabitPrompt) -> tuple[str, str]:
    """The system and user messages for the generator."""
    system = [SYSTEM, DELIVERY[args.delivery_mode]]
    intensity = str(profile.get("intensity") or "normal")
    system.append(INTENSITY.get(intensity, INTENSITY["normal"]))
    if args.personalization_notes:
        system.append(f"Additional context: {args.personalization_notes}")
    successes = _count(profile.get("success_count"))
    if successes:
        system.append(f"The participant has completed {successes} habit prompt(s) so far.")
    if profile.get("last_successful_prompt"):
        system.append(f"A prompt that worked before: {profile['last_successful_prompt']}")
    if profile.get("last_barrier"):
        system.append(f"Consider this barrier they met last time: {profile['last_barrier']}")
    if profile.get("last_tweak"):
        system.append(f"Incorporate this change they asked for: {profile['last_tweak']}")
    guide = tone_guide(profile)
    if guide:
        system.append(guide)
    fields = (
        ("Habit domain", "habit_domain"),
        ("Anchor", "prompt_anchor"),
        ("Preferred time", "preferred_time"),
        ("Motivation", "motivational_frame"),
        ("What helped last time", "last_motivator"),
        ("Other details", "additional_info"),
    )
    lines = [f"{label}: {profile[key]}" for label, key in fields if profile.get(key)]
    user = "\n".join(
        ["Participant profile:", *lines, "", "Write the habit prompt now (under 30 words)."]
    )
    return "\n\n".join(system), user


def missing_fields(profile: Mapping[str, Any]) -> list[str]:
    """The REQUIRED profile fields that are empty; the generator needs them all."""
    return [f for f in REQUIRED if not str(profile.get(f) or "").strip()]


def unquote(text: str) -> str:
    """The text without surrounding whitespace and matching surrounding quotes."""
    text = text.strip()
    while len(text) >= 2 and _QUOTE_PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _count(value: Any) -> int:
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError):
        return 0


def _failed(message: str) -> ToolOutcome:
    return ToolOutcome(False, f"Failed to generate prompt: {message}")


TOOL = ToolSpec(name="generate_habit_prompt", arguments=GenerateHabitPrompt, run=run)
