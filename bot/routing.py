"""Wiring the conversation: the LLM client, the crisis screen, the timer handlers and the flow.

`build_handler(services)` is what `tandem serve` and `tandem worker` hand their workers.
"""

from __future__ import annotations

import logging

from bot import daily_cycle
from bot.bootstrap import Services
from bot.flow.engine import ConversationFlow
from bot.llm import ChatClient
from bot.safety import CrisisScreen
from bot.turns import Handler
from modules import MODULES

log = logging.getLogger(__name__)


def build_handler(services: Services) -> Handler:
    """The handler that runs every participant's turns; built once per process."""
    settings = services.settings
    client = ChatClient.from_settings(settings)
    screen = CrisisScreen.from_default()
    daily_cycle.register(
        client.complete,
        reminder_hours=settings.reminder_after_prompt_hours,
        auto_feedback_minutes=settings.auto_feedback_after_prompt_minutes,
    )
    flow = ConversationFlow(client, screen, settings, MODULES, reply_parser=daily_cycle.on_reply)
    log.info("conversation ready: modules %s, %r", ", ".join(MODULES), screen)
    return flow.handle
