"""Every LLM tool by name: modules name their tools as strings and the engine resolves them here."""

from __future__ import annotations

from collections.abc import Iterable

from bot.tooling import ToolSpec
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


def resolve(names: Iterable[str]) -> list[ToolSpec]:
    """The specs of `names`, in order; ValueError names any unknown tool and the known ones."""
    names = list(names)
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        raise ValueError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; known tools: {', '.join(TOOLS)}"
        )
    return [TOOLS[name] for name in names]
