"""Conversation modules, one file each; `MODULES` maps a conversation state to its module.

The `step` module (interventions) lands with a later issue; until then the flow routes that
state to intake and records it.
"""

from __future__ import annotations

from bot.flow.module import Module
from modules import feedback, intake

MODULES: dict[str, Module] = {module.name: module for module in (intake.MODULE, feedback.MODULE)}
