"""Conversation modules, one file each; `MODULES` maps a conversation state to its module.

`step` runs the participant's intervention (interventions/<slug>/, docs/interventions.md).
"""

from __future__ import annotations

from bot.conversation.module import Module
from modules import feedback, intake, step

_PROMPTED: tuple[Module, ...] = (intake.MODULE, feedback.MODULE)
# The step module checks an intervention's `module:` against the modules it can hand over to.
MODULES: dict[str, Module] = {
    module.name: module
    for module in (*_PROMPTED, step.StepModule(modules=[m.name for m in _PROMPTED]))
}
