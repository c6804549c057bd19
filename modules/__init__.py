"""Conversation modules, one file each; `MODULES` maps a conversation state to its module.

`step` runs the participant's intervention (interventions/<slug>/, docs/interventions.md).
"""

from __future__ import annotations

from bot.flow.module import Module
from modules import feedback, intake, step

MODULES: dict[str, Module] = {
    module.name: module for module in (intake.MODULE, feedback.MODULE, step.MODULE)
}
