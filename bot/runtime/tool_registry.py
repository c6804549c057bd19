"""Every LLM tool by name: modules name their tools as strings; the composition root hands
this table to the flow, which resolves the names against it."""

from __future__ import annotations

from collections.abc import Iterable

from bot.conversation import tooling
from bot.conversation.daily_cycle.prompt import HabitPrompts
from bot.conversation.tooling import ToolSpec
from tools import (
    alert_supervisor,
    generate_habit_prompt,
    save_user_profile,
    scheduler,
    transition_state,
)

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        transition_state.TOOL,
        save_user_profile.TOOL,
        scheduler.TOOL,
        generate_habit_prompt.TOOL,
        alert_supervisor.TOOL,
    )
}

# The daily cycle's habit prompts come from the tools that own them.
HABIT_PROMPTS = HabitPrompts(
    purpose=scheduler.PURPOSE,
    fallback_text=scheduler.FALLBACK_TEXT,
    missing_fields=generate_habit_prompt.missing_fields,
    messages=lambda profile: generate_habit_prompt.prompts(
        profile, generate_habit_prompt.GenerateHabitPrompt(delivery_mode="scheduled")
    ),
    clean=generate_habit_prompt.unquote,
)


def resolve(names: Iterable[str]) -> list[ToolSpec]:
    """The specs of `names`, in order; ValueError names any unknown tool and the known ones."""
    return tooling.resolve(names, TOOLS)
