"""The feedback module: ask how the habit went, record what helped, what got in the way and the
tweaks asked for, and go back to intake to change the plan. Its prompt: prompts/feedback.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.conversation.module import ModuleContext, PromptModule
from bot.conversation.prompts import load_prompt
from bot.store.event_types.habits import HabitReported
from bot.store.event_types.messages import MessageQueued
from bot.timers.one_shot import zone_of

PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "feedback.md"


def last_prompt(ctx: ModuleContext) -> Mapping[str, Any]:
    """The latest habit prompt sent, when (participant-local), and the answer to "Did you do
    it?" given since (None if none yet)."""
    sent, answer = None, None
    for ev in ctx.history:
        data = ev.data
        if isinstance(data, MessageQueued) and data.to_participant and data.kind == "prompt":
            sent, answer = ev, None
        elif isinstance(data, HabitReported) and sent is not None:
            answer = data.answer
    if sent is None:
        return {"last_prompt": None, "last_prompt_when": None, "habit_answer": None}
    local = sent.occurred_at.astimezone(zone_of(ctx.participant))
    return {
        "last_prompt": sent.data.body,  # type: ignore[attr-defined]
        "last_prompt_when": f"{local:%A %H:%M}",
        "habit_answer": answer,
    }


MODULE = PromptModule("feedback", load_prompt(PROMPT), extra=last_prompt)
