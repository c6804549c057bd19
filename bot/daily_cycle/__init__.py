"""The daily habit cycle: the habit prompt timer (`register`) and answers to its questions
(`on_reply`). See docs/daily_cycle.md."""

from bot.daily_cycle.prompt import REMINDER_TEXT, Complete, register
from bot.daily_cycle.replies import on_reply

__all__ = ["REMINDER_TEXT", "Complete", "on_reply", "register"]
