"""Wiring the conversation: the LLM client, the crisis screen (with each intervention's own
settings), the timer handlers and the flow.

`build_handler(services)` is what `tandem serve` and `tandem worker` hand their workers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from bot import daily_cycle
from bot.bootstrap import Services
from bot.flow.engine import ConversationFlow
from bot.flow.intervention_settings import INTERVENTIONS, InterventionSettings
from bot.flow.module import Module
from bot.llm import ChatClient
from bot.safety import CrisisScreen
from bot.turns import Handler
from modules import MODULES

log = logging.getLogger(__name__)


def build_handler(
    services: Services,
    *,
    client: ChatClient | None = None,
    modules: Mapping[str, Module] | None = None,
) -> Handler:
    """The handler that runs every participant's turns; built once per process. `client` and
    `modules` replace the configured LLM client and the module table (`tandem chat` does)."""
    settings = services.settings
    client = client or ChatClient.from_settings(settings)
    modules = MODULES if modules is None else modules
    screen = CrisisScreen.from_default()
    daily_cycle.register(
        client.complete,
        reminder_hours=settings.reminder_after_prompt_hours,
        auto_feedback_minutes=settings.auto_feedback_after_prompt_minutes,
    )
    # Interventions' own safety settings come from where the step module reads interventions.
    root = getattr(modules.get("step"), "root", INTERVENTIONS)
    interventions = InterventionSettings(settings, screen, root=root)
    flow = ConversationFlow(
        client,
        screen,
        settings,
        modules,
        reply_parser=daily_cycle.on_reply,
        interventions=interventions,
    )
    log.info("conversation ready: modules %s, %r", ", ".join(modules), screen)
    return flow.handle
