"""The feedback module: ask how the habit went, record what helped, what got in the way and the
tweaks asked for, and go back to intake to change the plan. Its prompt: prompts/feedback.md."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.conversation.memory import remembered
from bot.conversation.module import ModuleContext, PromptModule
from bot.conversation.prompts import load_prompt
from bot.timers.one_shot import zone_of

PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "feedback.md"


def last_prompt(ctx: ModuleContext) -> Mapping[str, Any]:
    """The latest habit prompt sent, when (participant-local), and the answer to "Did you do
    it?" given since (None if none yet)."""
    sent = remembered(ctx.participant, ctx.history).last_prompt()
    if sent is None:
        return {"last_prompt": None, "last_prompt_when": None, "habit_answer": None}
    local = datetime.fromisoformat(sent["at"]).astimezone(zone_of(ctx.participant))
    return {
        "last_prompt": sent["body"],
        "last_prompt_when": f"{local:%A %H:%M}",
        "habit_answer": sent["answer"],
    }


MODULE = PromptModule("feedback", load_prompt(PROMPT), extra=last_prompt)
