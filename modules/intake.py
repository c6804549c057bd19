"""The intake module: learn the habit, the motivation, the time and the anchor; offer the first
habit prompt; set up the daily prompt; move on to feedback. Its prompt: prompts/intake.md."""

from __future__ import annotations

from pathlib import Path

from bot.conversation.module import PromptModule
from bot.conversation.prompts import load_prompt

PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "intake.md"
MODULE = PromptModule("intake", load_prompt(PROMPT))
